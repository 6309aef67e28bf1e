"""``DataLoader``: batches from a dataset, in order, optionally fetched by worker processes.

Worker processes and notebooks: workers start with the ``'fork'`` method where the platform has
it (Linux, macOS), so a dataset class defined in a Jupyter notebook or a script's ``__main__``
works without being importable. Where ``fork`` is unavailable (Windows) the default is
``'spawn'``: then the dataset, ``collate_fn`` and ``worker_init_fn`` must be picklable by reference
(defined in an importable module, not in the notebook). Pass ``multiprocessing_context='spawn'``
(or a context object) to choose explicitly; ``'fork'`` after starting threads of your own is
unsafe, as with any use of ``os.fork``.

Each iteration draws a base seed from ``generator`` (or the default generator); worker ``i`` then
seeds dynagrad's default generator and Python's ``random`` with ``base_seed + i`` (and NumPy's
global state with a value derived from both), so random augmentations differ between workers and
repeat exactly under the same ``dg.manual_seed``. Batches always come back in sampler order.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(dg.arange(6.0).view(3, 2), dg.tensor([0, 1, 0]))
    >>> for x, y in DataLoader(ds, batch_size=2):
    ...     print(tuple(x.shape), y.tolist())
    (2, 2) [0, 1]
    (1, 2) [0]
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing as mp
import pickle
import queue
import time
import weakref
from typing import Any, Callable, Iterable

from ...random import Generator
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, draw_seed
from .worker import (STATUS_CHECK_INTERVAL, ExceptionWrapper, IterableStop, IterFetcher, MapFetcher,
                     ResumeIteration, worker_loop)

__all__ = ["DataLoader"]

# how long shutdown waits for the workers to exit by themselves (a busy worker finishes its
# current batch first) before terminating them
_JOIN_TIMEOUT = 2.0

# Iterators whose workers are running. At interpreter exit they are shut down before
# multiprocessing's own exit handler (atexit runs handlers last-registered first, and
# multiprocessing registered its handler when it was imported, before this module): an
# iterator kept alive by a traceback would otherwise be finalized during interpreter teardown,
# when the queue feeder thread a shutdown message needs can no longer start, and the process
# would hang after printing the error.
_LIVE_ITERS: weakref.WeakSet = weakref.WeakSet()
_EXITING = [False]


@atexit.register
def _shutdown_at_exit() -> None:
    _EXITING[0] = True
    for it in list(_LIVE_ITERS):
        it._shutdown_workers()


class _InfiniteConstantSampler(Sampler):
    """Placeholder indices for an IterableDataset: the fetcher draws from the stream instead."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Args mirror PyTorch's: ``batch_size`` (``None`` turns batching off: samples are only
    converted by ``default_convert``), ``shuffle``, ``sampler`` / ``batch_sampler`` (custom index
    order), ``drop_last``, ``collate_fn``, ``num_workers`` (worker processes; 0 loads in this
    process), ``worker_init_fn(worker_id)``, ``generator`` (shuffling and worker base seed),
    ``timeout`` (seconds to wait for one batch from the workers; 0 waits forever),
    ``prefetch_factor`` (batches in flight per worker, default 2), ``persistent_workers`` (keep the
    workers between epochs) and ``multiprocessing_context``. ``pin_memory`` is accepted and has no
    effect (CPU only).
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "") -> None:
        if num_workers < 0:
            raise ValueError("DataLoader: num_workers option should be non-negative; use "
                             "num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout option should be non-negative (got {timeout})")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in "
                             "multiprocessing. Let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 1:
            raise ValueError(f"DataLoader: prefetch_factor should be >= 1 (got {prefetch_factor})")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value!r}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is "
                             "mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _context(self):
        ctx = self.multiprocessing_context
        if ctx is None:
            return _default_context()
        return mp.get_context(ctx) if isinstance(ctx, str) else ctx

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        if self._iterator is None or self._iterator._shutdown:  # first epoch, or after a failure
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # TypeError when the stream has no length, as in PyTorch
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._reset(loader, first=True)

    def _reset(self, loader: DataLoader, first: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        # drawn on every pass, with or without workers, so the generator advances identically
        # and shuffling does not depend on num_workers
        self._base_seed = draw_seed(loader.generator)

    def _fetcher(self):
        cls = IterFetcher if self._iterable else MapFetcher
        return cls(self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetch = self._fetcher().fetch

    def __next__(self) -> Any:
        return self._fetch(next(self._sampler_iter))


class _MultiProcessIter(_BaseIter):
    """Sends index batches round-robin to worker processes, at most ``prefetch_factor`` per worker
    in flight, and hands the results back in sampler order."""

    def __init__(self, loader: DataLoader) -> None:
        self._shutdown = True  # nothing to clean up until the workers exist
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        super().__init__(loader)
        ctx = loader._context()
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        self._stopped: set[int] = set()  # workers told to exit
        self._shutdown = False
        for wid in range(self._num_workers):
            iq = ctx.Queue()
            # nothing blocks on an unread index queue when the process exits
            iq.cancel_join_thread()
            self._index_queues.append(iq)
            w = ctx.Process(target=worker_loop, daemon=True,
                            args=(self._iterable, self._dataset, iq, self._data_queue,
                                  self._done_event, self._auto_collation, self._collate_fn,
                                  self._drop_last, self._base_seed, loader.worker_init_fn, wid,
                                  self._num_workers))
            try:
                w.start()
            except Exception as e:
                self._shutdown_workers()
                raise RuntimeError(
                    f"DataLoader: could not start worker process {wid} with the "
                    f"'{ctx.get_start_method()}' start method: {type(e).__name__}: {e}. With "
                    "'spawn' or 'forkserver' the dataset, collate_fn and worker_init_fn are "
                    "pickled, so they must be defined at module level in an importable module "
                    "(not in a notebook cell); 'fork' has no such requirement") from e
            self._workers.append(w)
        _LIVE_ITERS.add(self)
        try:
            self._start_epoch(resume=False)
        except BaseException:
            # a sampler that raises while the first batches are queued: nobody can reach this
            # half-built iterator to close it, so its workers stop here
            self._shutdown_workers()
            raise

    def _reset(self, loader: DataLoader, first: bool = False) -> None:
        super()._reset(loader, first)
        if not first:
            self._start_epoch(resume=True)

    def _start_epoch(self, resume: bool) -> None:
        self._send_idx = 0
        self._rcvd_idx = 0
        self._tasks: dict[int, tuple] = {}  # idx -> (worker,) while pending, (worker, data) when in
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        if resume:
            # workers restart their stream; results of an abandoned epoch still in the queue are
            # discarded up to each worker's acknowledgement (a worker's results arrive in order)
            for q in self._index_queues:
                q.put(ResumeIteration())
            acks = 0
            while acks < self._num_workers:
                idx, data = self._get_data()
                acks += isinstance(data, ResumeIteration)
        for _ in range(self._prefetch * self._num_workers):
            self._put_index()

    def _put_index(self) -> None:
        if not any(self._active):
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        except BaseException:
            self._shutdown_workers()  # the epoch cannot go on: release the workers now
            raise
        for _ in range(self._num_workers):
            wid = next(self._cycle)
            if self._active[wid]:
                break
        self._index_queues[wid].put((self._send_idx, index))
        self._tasks[self._send_idx] = (wid,)
        self._send_idx += 1

    def _get_data(self) -> tuple[int, Any]:
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                return pickle.loads(self._data_queue.get(timeout=wait))
            except queue.Empty:
                dead = [w.pid for i, w in enumerate(self._workers)
                        if i not in self._stopped and not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) "
                                       "exited unexpectedly") from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds "
                                       "waiting for a batch from its workers") from None

    def __next__(self) -> Any:
        while True:
            # skip tasks that went to a worker whose stream has ended: they will never come back
            while self._rcvd_idx < self._send_idx:
                task = self._tasks[self._rcvd_idx]
                if len(task) == 2 or self._active[task[0]]:
                    break
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            task = self._tasks[self._rcvd_idx]
            if len(task) == 2:
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(task[1])
            idx, data = self._get_data()
            if isinstance(data, IterableStop):
                self._active[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
                    self._stopped.add(data.worker_id)
                self._put_index()
                continue
            if isinstance(data, ResumeIteration):
                continue
            if idx != self._rcvd_idx:
                self._tasks[idx] += (data,)
                continue
            del self._tasks[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        _LIVE_ITERS.discard(self)
        try:
            self._done_event.set()
            # at exit no message is sent (its feeder thread might not start): the workers see
            # done_event within STATUS_CHECK_INTERVAL, or are terminated below
            for i, q in enumerate(self._index_queues):
                if i not in self._stopped and not _EXITING[0]:
                    q.put(None)
            deadline = time.monotonic() + _JOIN_TIMEOUT
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
                if w.is_alive():
                    w.terminate()
                    w.join()
        finally:
            for q in self._index_queues:
                q.close()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()

    def __del__(self) -> None:
        self._shutdown_workers()
