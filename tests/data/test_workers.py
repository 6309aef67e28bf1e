"""DataLoader with worker processes: order, seeding, get_worker_info, worker_init_fn,
IterableDataset sharding (against torch's DataLoader), persistence, errors and timeouts.
Datasets are tiny and every loader uses at most 2 workers."""
import os
import random
import time

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

torch = pytest.importorskip("torch")
tdata = torch.utils.data


class RandomDraws(Dataset):
    """Each sample reports who produced it and one draw from every random source."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"index": i, "worker": info.id, "seed": info.seed,
                "num_workers": info.num_workers, "pid": os.getpid(),
                "dg": float(dg.rand(()).item()), "py": random.random(),
                "np": float(np.random.rand()), "offset": getattr(info.dataset, "offset", 0)}


class ShardedRange:
    """Yields 0..n-1, split between workers by get_worker_info (torch's recipe)."""

    info_fn = None

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = type(self).info_fn()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class OurSharded(ShardedRange, IterableDataset):
    info_fn = staticmethod(get_worker_info)


class TorchSharded(ShardedRange, tdata.IterableDataset):
    info_fn = staticmethod(tdata.get_worker_info)


class Unsharded(IterableDataset):
    def __iter__(self):
        return iter(range(3))


class Squares(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i * i


def rows(loader):
    return [b.tolist() if hasattr(b, "tolist") else b for b in loader]


def test_map_style_order_matches_single_process_with_shuffle():
    ds = TensorDataset(dg.arange(23))
    epochs = {}
    for nw in (0, 2):
        g = dg.Generator().manual_seed(3)
        loader = DataLoader(ds, batch_size=4, shuffle=True, generator=g, num_workers=nw)
        epochs[nw] = [rows(b[0] for b in loader) for _ in range(2)]
    assert epochs[0] == epochs[2]
    flat = [v for b in epochs[2][0] for v in b]
    assert sorted(flat) == list(range(23)) and flat != list(range(23))


def test_batches_come_back_in_order_despite_slow_workers():
    class Slow(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            if i < 2:
                time.sleep(0.15)  # worker 0's first batch arrives after worker 1's
            return i

    assert rows(DataLoader(Slow(), batch_size=2, num_workers=2)) == [[0, 1], [2, 3], [4, 5],
                                                                    [6, 7]]


def epoch_draws(seed, **kw):
    dg.manual_seed(seed)
    batches = list(DataLoader(RandomDraws(), batch_size=2, num_workers=2, **kw))
    return {k: [v for b in batches for v in (b[k].tolist() if hasattr(b[k], "tolist") else b[k])]
            for k in batches[0]}


def test_worker_seeding_differs_between_workers_and_repeats_with_seed():
    a, b, c = epoch_draws(0), epoch_draws(0), epoch_draws(1)
    assert a["index"] == list(range(8))
    assert a["worker"] == [0, 0, 1, 1, 0, 0, 1, 1]  # batches go round-robin
    assert a["num_workers"] == [2] * 8
    base = a["seed"][0]
    assert a["seed"] == [base + w for w in a["worker"]]
    for src in ("dg", "py", "np"):
        # worker 0's first draw differs from worker 1's: augmentations are not duplicated
        assert a[src][0] != a[src][2], src
        assert len(set(a[src])) == 8, src
        assert a[src] == b[src], src       # same dg.manual_seed: same draws
        assert a[src] != c[src], src       # another seed: other draws
    assert a["seed"] == b["seed"] and a["seed"] != c["seed"]


def test_generator_sets_base_seed():
    def seeds(s):
        g = dg.Generator().manual_seed(s)
        out = list(DataLoader(RandomDraws(), batch_size=4, num_workers=2, generator=g))
        return [b["seed"].tolist()[0] for b in out], [b["dg"].tolist() for b in out]

    assert seeds(5) == seeds(5)
    assert seeds(5) != seeds(6)


def test_get_worker_info_is_none_in_main_process():
    assert get_worker_info() is None


def init_offset(worker_id):
    info = get_worker_info()
    assert info.id == worker_id
    info.dataset.offset = 100 + worker_id  # each worker owns its copy of the dataset


def test_worker_init_fn_runs_in_each_worker():
    out = list(DataLoader(RandomDraws(), batch_size=2, num_workers=2, worker_init_fn=init_offset))
    offsets = [v for b in out for v in b["offset"].tolist()]
    workers = [v for b in out for v in b["worker"].tolist()]
    assert offsets == [100 + w for w in workers]
    assert RandomDraws().__dict__ == {}  # the main process's dataset is untouched


def test_iterable_dataset_sharding_matches_torch():
    for bs in (2, 3, None):
        ours = DataLoader(OurSharded(11), batch_size=bs, num_workers=2)
        ref = tdata.DataLoader(TorchSharded(11), batch_size=bs, num_workers=2)
        assert rows(ours) == rows(ref), bs
    flat = sorted(v for b in rows(DataLoader(OurSharded(11), batch_size=2, num_workers=2))
                  for v in b)
    assert flat == list(range(11))


def test_iterable_dataset_without_sharding_duplicates_like_torch():
    class TorchUnsharded(tdata.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    got = rows(DataLoader(Unsharded(), batch_size=2, num_workers=2))
    want = rows(tdata.DataLoader(TorchUnsharded(), batch_size=2, num_workers=2))
    assert got == want == [[0, 1], [0, 1], [2], [2]]


def test_iterable_drop_last_with_workers():
    got = rows(DataLoader(OurSharded(11), batch_size=2, drop_last=True, num_workers=2))
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10]]


def test_persistent_workers_reuse_processes_and_restart_streams():
    loader = DataLoader(RandomDraws(), batch_size=2, num_workers=2, persistent_workers=True)
    e1, e2 = list(loader), list(loader)
    pids1 = {p for b in e1 for p in b["pid"].tolist()}
    pids2 = {p for b in e2 for p in b["pid"].tolist()}
    assert pids1 == pids2 and len(pids1) == 2
    assert [v for b in e2 for v in b["index"].tolist()] == list(range(8))
    stream = DataLoader(OurSharded(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert rows(stream) == rows(stream) == [[0, 2], [1, 3], [4]]


def test_persistent_workers_after_abandoned_epoch():
    loader = DataLoader(Squares(), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]  # leave the rest of the epoch (and prefetched batches)
    assert rows(loader) == [[0, 1], [4, 9], [16, 25], [36, 49], [64, 81]]


def test_local_classes_and_lambdas_work_with_default_start_method():
    # a class defined here is not importable by name, like one defined in a Jupyter notebook
    class Local(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return i + 10

    loader = DataLoader(Local(), batch_size=2, num_workers=2, collate_fn=lambda b: sum(b))
    assert list(loader) == [21, 25]


def test_spawn_context_with_picklable_dataset():
    ds = TensorDataset(dg.arange(6.0), dg.arange(6))
    loader = DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn")
    out = [(x.tolist(), y.tolist()) for x, y in loader]
    assert out == [([0.0, 1.0, 2.0, 3.0], [0, 1, 2, 3]), ([4.0, 5.0], [4, 5])]


class Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise KeyError(f"bad sample {i}")
        return i


def test_worker_exception_is_reraised_with_its_type_and_traceback():
    it = iter(DataLoader(Failing(), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(KeyError, match=r"(?s)Caught KeyError in DataLoader worker process 1.*"
                                       r"bad sample 3"):
        next(it)


def failing_init(worker_id):
    raise ValueError(f"init failed in {worker_id}")


def test_worker_init_fn_exception_is_reraised():
    with pytest.raises(ValueError, match="init failed in 0"):
        list(DataLoader(Squares(), batch_size=2, num_workers=2, worker_init_fn=failing_init))


def test_unpicklable_batch_raises_instead_of_hanging():
    loader = DataLoader(Squares(), batch_size=2, num_workers=1, collate_fn=lambda b: lambda: b)
    with pytest.raises(Exception, match="could not be pickled"):
        next(iter(loader))


class Sleepy(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1.5)
        return i


def test_timeout():
    loader = DataLoader(Sleepy(), batch_size=1, num_workers=1, timeout=0.3)
    it = iter(loader)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        next(it)
    assert time.monotonic() - start < 1.2  # raised well before the sample was ready


class Dying(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_worker_that_dies_is_reported():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly"):
        list(DataLoader(Dying(), batch_size=2, num_workers=1))


def test_dataset_defined_in_main_module_like_a_notebook():
    # Jupyter runs cells in __main__; the default start method must not need to import it
    import subprocess
    import sys
    code = (
        "from dynagrad.utils.data import DataLoader, Dataset, get_worker_info\n"
        "class Cell(Dataset):\n"
        "    def __len__(self): return 4\n"
        "    def __getitem__(self, i): return i * 10 + get_worker_info().id\n"
        "print([b.tolist() for b in DataLoader(Cell(), batch_size=2, num_workers=2)])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[[0, 10], [21, 31]]"


class BadIter(IterableDataset):
    def __iter__(self):
        raise OSError("cannot open shard")


def test_iterable_dataset_error_in_iter_reaches_main_process():
    with pytest.raises(OSError, match="(?s)in DataLoader worker process 0.*cannot open shard"):
        list(DataLoader(BadIter(), batch_size=2, num_workers=2))
    with pytest.raises(OSError, match="cannot open shard"):
        list(DataLoader(BadIter(), batch_size=2))


def test_spawn_with_unpicklable_dataset_explains_itself():
    class Local(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return i

    with pytest.raises(RuntimeError, match="(?s)'spawn' start method.*must be defined at module "
                                           "level"):
        iter(DataLoader(Local(), num_workers=1, multiprocessing_context="spawn"))


@pytest.mark.parametrize("where", ["first_index", "loop_body"])
def test_error_with_live_workers_exits_instead_of_hanging(where):
    """A sampler that raises while the first batches are queued, or the user's loop raising
    while the workers run: the script prints the error and exits with it (the first used to
    hang at exit). Run in a subprocess, bounded by a timeout."""
    import subprocess
    import sys
    code = (
        "import sys\n"
        "from dynagrad.utils.data import DataLoader, Sampler\n"
        f"where = {where!r}\n"
        "class Bad(Sampler):\n"
        "    def __len__(self): return 20\n"
        "    def __iter__(self):\n"
        "        if where == 'first_index': raise ValueError('sampler broke')\n"
        "        yield from range(10)\n"
        "        if where == 'mid_epoch': raise ValueError('sampler broke')\n"
        "        yield from range(10)\n"
        "loader = DataLoader(list(range(20)), sampler=Bad(), num_workers=2)\n"
        "for batch in loader:\n"
        "    if where == 'loop_body': raise ValueError('sampler broke')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 1 and out.stderr.rstrip().endswith("ValueError: sampler broke")
