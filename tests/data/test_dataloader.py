"""DataLoader in the main process: batching, collation and argument checks against torch's
DataLoader on the same data, and determinism of shuffling."""
import collections

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset,
                                 SequentialSampler, TensorDataset, default_collate, default_convert)

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = collections.namedtuple("Point", "x y")


class Mixed(Dataset):
    """Samples mixing every kind default_collate handles."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"arr": np.arange(3, dtype=np.float32) + i, "int": i, "float": i / 2,
                "flag": i % 2 == 0, "name": f"s{i}", "np16": np.full((2,), i, np.float16),
                "pair": (np.int32(i), [i, -i]), "pt": Point(i, float(i))}


class StreamMixin:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(np.arange(self.n, dtype=np.float64).reshape(-1, 1) * np.ones((1, 2)))

    def __len__(self):
        return self.n


class Stream(StreamMixin, IterableDataset):
    pass


class TorchStream(StreamMixin, tdata.IterableDataset):
    pass


def to_numpy(x):
    """A batch from either library as nested Python/NumPy values."""
    if isinstance(x, (dg.Tensor, torch.Tensor)):
        return np.asarray(x.numpy())
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[to_numpy(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x)
    return x


def assert_same(a, b, path="batch"):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), path
        assert a.dtype == b.dtype, f"{path}: {a.dtype} vs {b.dtype}"
        np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {type(a)} vs {type(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b and type(a) is type(b), f"{path}: {a!r} vs {b!r}"


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (7, True),
                                                  (10, False)])
def test_batches_and_collation_match_torch(batch_size, drop_last):
    order = [5, 1, 6, 0, 3, 2, 4]  # the same explicit order in both libraries
    ours = DataLoader(Mixed(), batch_size=batch_size, sampler=order, drop_last=drop_last)
    ref = tdata.DataLoader(Mixed(), batch_size=batch_size, sampler=order, drop_last=drop_last)
    got, want = list(ours), list(ref)
    assert len(ours) == len(ref) == len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(to_numpy(g), to_numpy(w))


def test_tensor_dataset_batches_match_torch():
    x = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
    y = np.arange(10)
    ours = list(DataLoader(TensorDataset(dg.tensor(x), dg.tensor(y)), batch_size=4))
    ref = list(tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                batch_size=4))
    for g, w in zip(ours, ref):
        assert_same(to_numpy(g), to_numpy(w))
    assert ours[0][0].dtype is dg.float32 and ours[0][1].dtype is dg.int64


def test_batch_size_none_converts_without_batching_like_torch():
    ours = list(DataLoader(Mixed(), batch_size=None))
    ref = list(tdata.DataLoader(Mixed(), batch_size=None))
    assert len(ours) == 7
    for g, w in zip(ours, ref):
        assert_same(to_numpy(g), to_numpy(w))
    assert isinstance(ours[0]["arr"], dg.Tensor) and ours[0]["int"] == 0


def test_batch_sampler_argument_matches_torch():
    bs = [[0, 1, 2], [6], [3, 5]]
    ours = [b.tolist() for b in DataLoader(Squares(), batch_sampler=bs)]
    ref = [b.tolist() for b in tdata.DataLoader(Squares(), batch_sampler=bs)]
    assert ours == ref == [[0, 1, 4], [36], [9, 25]]
    assert len(DataLoader(Squares(), batch_sampler=BatchSampler(range(7), 2, True))) == 3


class Squares(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return i * i


class BatchedFetch(Squares):
    """Counts how it was asked for data: __getitems__ must be preferred."""

    calls = []

    def __getitems__(self, indices):
        BatchedFetch.calls.append(list(indices))
        return [i * i for i in indices]


def test_getitems_is_used_for_whole_batches():
    BatchedFetch.calls = []
    out = [b.tolist() for b in DataLoader(BatchedFetch(), batch_size=3)]
    assert out == [[0, 1, 4], [9, 16, 25], [36]]
    assert BatchedFetch.calls == [[0, 1, 2], [3, 4, 5], [6]]


def test_iterable_dataset_batches_match_torch():
    for bs, drop in ((2, False), (2, True), (None, False)):
        ours = [to_numpy(b) for b in DataLoader(Stream(5), batch_size=bs, drop_last=drop)]
        ref = [to_numpy(b) for b in tdata.DataLoader(TorchStream(5), batch_size=bs,
                                                        drop_last=drop)]
        assert len(ours) == len(ref)
        for g, w in zip(ours, ref):
            assert_same(g, w)
        assert len(DataLoader(Stream(5), batch_size=bs, drop_last=drop)) == len(ref)


def test_custom_collate_fn():
    loader = DataLoader(Squares(), batch_size=3, collate_fn=lambda b: sum(b))
    assert list(loader) == [5, 50, 36]


def test_shuffle_is_a_permutation_and_reproducible_with_generator():
    ds = TensorDataset(dg.arange(20))

    def epoch(loader):
        return [int(v) for (b,) in loader for v in b.tolist()]

    g = dg.Generator().manual_seed(0)
    loader = DataLoader(ds, batch_size=6, shuffle=True, generator=g)
    e1, e2 = epoch(loader), epoch(loader)
    assert sorted(e1) == sorted(e2) == list(range(20))
    assert e1 != e2 and e1 != list(range(20))
    g.manual_seed(0)
    assert epoch(loader) == e1
    assert epoch(loader) == e2


def test_shuffle_reproducible_with_manual_seed():
    ds = TensorDataset(dg.arange(16))
    dg.manual_seed(11)
    a = [b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True)]
    dg.manual_seed(11)
    b = [b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True)]
    assert a == b
    dg.manual_seed(12)
    assert [b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True)] != a


def test_default_collate_rules_match_torch():
    cases = [[1.0, 2.0], [1, 2], [True, False], [np.float32(1), np.float32(2)],
             [np.array(1.5), np.array(2.5)], ["a", "b"], [b"a", b"b"],
             [(1, 2.0), (3, 4.0)], [[1, 2], [3, 4]], [Point(1, 2.0), Point(3, 4.0)],
             [{"a": 1, "b": np.array([1.0])}] * 2]
    for batch in cases:
        assert_same(to_numpy(default_collate(batch)),
                    to_numpy(tdata.default_collate(batch)), f"{batch!r}")


def test_default_collate_stacks_tensors_and_keeps_dtype():
    out = default_collate([dg.tensor([1, 2], dtype=dg.int32), dg.tensor([3, 4], dtype=dg.int32)])
    assert out.dtype is dg.int32 and out.tolist() == [[1, 2], [3, 4]]


def test_default_collate_keeps_graph_when_samples_require_grad():
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    out = default_collate([w * 2, w * 3])
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 5.0])


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal "
                                           "size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match=r"equal size, but got \[2\] at entry 0 and \[3\] at "
                                           "entry 1"):
        default_collate([dg.zeros(2), dg.zeros(3)])
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="<U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_matches_torch():
    sample = (np.zeros(2), 1.0, [np.ones(1, np.float32)], {"k": np.int64(3)})
    assert_same(to_numpy(default_convert(sample)), to_numpy(tdata.default_convert(sample)))


@pytest.mark.parametrize("kwargs,match", [
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching"),
])
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(Squares(), **kwargs)


def test_iterable_dataset_rejects_shuffle_and_samplers():
    for kw in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected "
                                             "unspecified"):
            DataLoader(Stream(3), **kw)


def test_len_with_sequential_sampler_object():
    loader = DataLoader(Squares(), batch_size=2, sampler=SequentialSampler(range(5)))
    assert len(loader) == 3
    assert [b.tolist() for b in loader] == [[0, 1], [4, 9], [16]]


def test_tensor_dataset_fast_gather_equals_stacking_rows():
    x = dg.randn(11, 2, 3)
    y = dg.arange(11, dtype=dg.int32)
    ds = TensorDataset(x, y)
    order = [3, 10, 0, 5, 5, 1, -1]
    fast = list(DataLoader(ds, batch_size=3, sampler=order))
    slow = list(DataLoader(ds, batch_size=3, sampler=order,
                           collate_fn=lambda b: default_collate(b)))  # not the fast path
    assert len(fast) == len(slow) == 3
    for f, s in zip(fast, slow):
        assert isinstance(f, list) and len(f) == 2
        for a, b in zip(f, s):
            assert a.dtype is b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    fast[0][0][0, 0, 0] = 123.0  # batches are copies, not views of the dataset
    assert x[3, 0, 0].item() != 123.0


def test_tensor_dataset_with_graph_keeps_it_in_batches():
    w = dg.ones(4, 2, requires_grad=True)
    (xb,) = next(iter(DataLoader(TensorDataset(w * 3), batch_size=2)))
    xb.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[3, 3], [3, 3], [0, 0], [0, 0]])
