"""What runs inside a DataLoader worker process: seeding, ``get_worker_info()``, the fetch loop,
and shipping exceptions back to the main process.

Example (inside a dataset's ``__getitem__`` or ``__iter__``):
    >>> from dynagrad.utils.data import get_worker_info
    >>> get_worker_info() is None   # in the main process
    True
"""
from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...random import manual_seed
from ...tensor import _wrap
from .collate import default_collate
from .dataset import TensorDataset

__all__ = ["WorkerInfo", "get_worker_info"]

# how often (seconds) a waiting worker checks for shutdown and that its parent is alive, and a
# waiting main process checks that its workers are alive
STATUS_CHECK_INTERVAL = 0.25


@dataclass(frozen=True)
class WorkerInfo:
    """Describes the current worker: ``id`` in ``[0, num_workers)``, its ``seed`` (``base_seed +
    id``) and its own copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current ``WorkerInfo`` inside a DataLoader worker, ``None`` in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process as its type and traceback
    text (the exception object itself may not survive pickling)."""

    def __init__(self, where: str) -> None:
        exc = traceback.format_exc()
        self.exc_type = sys.exc_info()[0] or RuntimeError
        self.message = f"Caught {self.exc_type.__name__} {where}.\nOriginal {exc}"

    def reraise(self):
        try:
            err = self.exc_type(self.message)
        except Exception:  # exception types whose constructor needs other arguments
            raise RuntimeError(self.message) from None
        raise err


class IterableStop:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as an acknowledgement."""


class MapFetcher:
    """Fetch samples by index from a map-style dataset and collate them."""

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        # TensorDataset + default_collate: one gather per tensor gives the very batch that
        # stacking the rows would (much faster on small samples); tensors that carry a graph
        # take the general path, which keeps it
        self.gather = (type(dataset) is TensorDataset and collate_fn is default_collate
                       and not any(t.requires_grad for t in dataset.tensors))

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.gather:
            rows = np.asarray(index, dtype=np.int64)
            return [_wrap(t._data[rows], t.dtype) for t in self.dataset.tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterFetcher:
    """Draw the next ``len(index)`` samples from an IterableDataset's iterator and collate them;
    ``StopIteration`` when the stream is done."""

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.dataset, self.iterator = dataset, None
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.iterator is None:  # started on first use, so an error in iter() is reported too
            self.iterator = iter(self.dataset)
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in index:
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed every random source a worker's code may use: dynagrad's default generator, Python's
    ``random`` and NumPy's legacy global state. Returns the worker's seed."""
    seed = base_seed + worker_id
    manual_seed(seed)
    random.seed(seed)
    # NumPy's legacy seed must fit in 32 bits: derive well-mixed words from (worker, base seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _send(data_queue, idx: int, data, worker_id: int) -> None:
    # pickle here rather than in the queue's feeder thread, where a failure would only be printed
    # and the main process would wait for the lost batch forever
    try:
        payload = pickle.dumps((idx, data), pickle.HIGHEST_PROTOCOL)
    except Exception:
        payload = pickle.dumps(
            (idx, ExceptionWrapper(f"while sending a batch from DataLoader worker {worker_id} "
                                   "(the batch could not be pickled)")),
            pickle.HIGHEST_PROTOCOL)
    data_queue.put(payload)


def worker_loop(iterable: bool, dataset, index_queue, data_queue, done_event,
                auto_collation: bool, collate_fn: Callable, drop_last: bool, base_seed: int,
                init_fn: Callable | None, worker_id: int, num_workers: int) -> None:
    """Serve fetch requests ``(idx, index)`` from ``index_queue`` until ``None`` arrives.

    ``done_event`` is set when the main process shuts the loader down and will read no more.
    """
    global _worker_info
    parent = os.getppid()
    seed = seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    where = f"in DataLoader worker process {worker_id}"
    fetcher_cls = IterFetcher if iterable else MapFetcher
    # a failed worker_init_fn answers every request with its error: this worker cannot serve
    init_error = fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = fetcher_cls(dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where)
    ended = False
    while True:
        try:
            request = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
        except queue.Empty:
            # done_event also covers a shutdown whose None never arrived: when the main process
            # collects a loader in a reference cycle, the queue's feeder thread may be gone already
            if done_event.is_set() or os.getppid() != parent:
                break
            continue
        if request is None:
            break
        if isinstance(request, ResumeIteration):
            ended = False
            if init_error is None:  # a new epoch restarts the stream of an IterableDataset
                fetcher = fetcher_cls(dataset, auto_collation, collate_fn, drop_last)
            _send(data_queue, -1, request, worker_id)
            continue
        if ended or done_event.is_set():
            continue
        idx, index = request
        if init_error is not None:
            data = init_error
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if not iterable:
                    data = ExceptionWrapper(where)
                else:
                    data, ended = IterableStop(worker_id), True
            except Exception:
                data = ExceptionWrapper(where)
        _send(data_queue, idx, data, worker_id)
    if done_event.is_set():
        # nobody reads any more: do not wait for buffered results to drain
        data_queue.cancel_join_thread()
    data_queue.close()
    # otherwise flush: exiting while our feeder thread holds the queue's shared write lock would
    # block the other workers' results forever
    data_queue.join_thread()
