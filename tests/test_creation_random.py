"""Creation functions, devices, dg.testing.assert_close, and random numbers."""
import numpy as np
import pytest

import dynagrad as dg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# --- tensor / as_tensor ---------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype", [
    ([1, 2], dg.int64), ([1.0, 2], dg.float32), ([True, False], dg.bool), ([True, 1], dg.int64),
    ([], dg.float32), (3, dg.int64), (2.5, dg.float32), ([[1], [2]], dg.int64),
    (np.float64(1.0), dg.float64), (np.int16(3), dg.int16), ([np.float64(1.0)], dg.float64),
    ([np.int32(1)], dg.int32), ([1, np.float16(2.0)], dg.float16), ([np.int64(1), 2.0], dg.float32),
    (np.array([1, 2], np.int32), dg.int32), ([dg.tensor(1.0, dtype=dg.float64)], dg.float64),
])
def test_tensor_dtype_inference(data, dtype):
    assert dg.tensor(data).dtype is dtype


def test_tensor_dtype_inference_matches_torch(torch):
    cases = [[1, 2.5], [[True], [False]], [np.float32(1.0), 2], [np.uint8(1), np.int8(2)],
             [np.float64(1.0), np.float32(2.0)]]
    for data in cases:
        assert dg.tensor(data).dtype.name == str(torch.tensor(data).dtype).split(".")[1]


def test_tensor_copies_and_respects_dtype():
    arr = np.array([1.0, 2.0])
    t = dg.tensor(arr)
    arr[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    src = dg.tensor([1.0, 2.0])
    t2 = dg.tensor(src)
    src.add_(1.0)
    assert t2.tolist() == [1.0, 2.0]
    assert dg.tensor([1.7, -1.7], dtype=dg.int64).tolist() == [1, -1]
    assert dg.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert dg.tensor([dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0])]).tolist() == [[1, 2], [3, 4]]
    assert dg.tensor([1.0], requires_grad=True).requires_grad


@pytest.mark.parametrize("data, match", [
    ([[1, 2], [3]], r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ([[1, 2], 3], "mix of sequences and scalars"),
    ([[[1], [2]], [[1], [2, 3]]], r"length 1 at dim 2 \(got 2\)"),
])
def test_tensor_rejects_ragged_input(data, match):
    with pytest.raises(ValueError, match=match):
        dg.tensor(data)


def test_tensor_rejects_unknown_objects():
    with pytest.raises(TypeError, match="could not infer dtype of str"):
        dg.tensor(["a"])


def test_as_tensor_shares_when_possible():
    arr = np.zeros(2)
    t = dg.as_tensor(arr)
    t.add_(1.0)
    assert arr.tolist() == [1.0, 1.0] and t.dtype is dg.float64
    converted = dg.as_tensor(arr, dtype=dg.float32)
    converted.add_(1.0)
    assert arr.tolist() == [1.0, 1.0] and converted.dtype is dg.float32
    src = dg.tensor([1.0])
    assert dg.as_tensor(src) is src and dg.as_tensor([1, 2]).dtype is dg.int64


def test_is_tensor():
    assert dg.is_tensor(dg.zeros(1)) and not dg.is_tensor(np.zeros(1)) and not dg.is_tensor(1.0)


# --- zeros / ones / full / empty and *_like --------------------------------------------------

@pytest.mark.parametrize("fn, value", [(dg.zeros, 0.0), (dg.ones, 1.0)])
def test_zeros_ones(fn, value):
    for args in [(2, 3), ((2, 3),), ([2, 3],)]:
        t = fn(*args)
        assert t.shape == (2, 3) and t.dtype is dg.float32 and t.tolist() == [[value] * 3] * 2
    assert fn(()).shape == () and fn(0).shape == (0,)
    assert fn(2, dtype=dg.int64).tolist() == [int(value)] * 2
    t = fn(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        fn(2.5)


def test_empty_shape_and_dtype():
    t = dg.empty(2, 3, dtype=dg.float64)
    assert t.shape == (2, 3) and t.dtype is dg.float64


def test_full_infers_dtype_from_fill_value(torch):
    for fill in (3, 3.0, True):
        mine, ref = dg.full((2,), fill), torch.full((2,), fill)
        assert mine.dtype.name == str(ref.dtype).split(".")[1]
        assert mine.tolist() == ref.tolist()
    assert dg.full((2,), 1.5, dtype=dg.float64).tolist() == [1.5, 1.5]
    assert dg.full(3, 2.0).shape == (3,)


def test_like_functions_copy_shape_and_dtype():
    x = dg.arange(6).reshape(2, 3)
    assert dg.zeros_like(x).tolist() == [[0] * 3] * 2 and dg.zeros_like(x).dtype is dg.int64
    assert dg.ones_like(x, dtype=dg.float32).tolist() == [[1.0] * 3] * 2
    assert dg.full_like(x, 7).tolist() == [[7] * 3] * 2
    e = dg.empty_like(x)
    assert e.shape == (2, 3) and e.dtype is dg.int64
    assert dg.zeros_like(dg.zeros(2), requires_grad=True).requires_grad


# --- ranges ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 5, 2), (5, 0, -2), (5.0,), (0, 1, 0.25),
                                  (0, 1, 0.1), (1, 2.5, 0.5), (-1.0, 1.0, 0.3), (0,)])
def test_arange_matches_torch(torch, args):
    mine, ref = dg.arange(*args), torch.arange(*args)
    assert mine.dtype.name == str(ref.dtype).split(".")[1]
    assert mine.shape == tuple(ref.shape)
    np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-6)


def test_arange_dtype_and_errors():
    assert dg.arange(3).dtype is dg.int64 and dg.arange(3.0).dtype is dg.float32
    assert dg.arange(3, dtype=dg.float64).tolist() == [0.0, 1.0, 2.0]
    assert dg.arange(3, requires_grad=True, dtype=dg.float32).requires_grad
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        dg.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        dg.arange(0, 5, -1)


def test_linspace_logspace(torch):
    for args in [(0, 1, 5), (-1, 1, 1), (0, 1, 0), (2, -2, 4)]:
        mine, ref = dg.linspace(*args), torch.linspace(*args)
        assert mine.dtype is dg.float32 and mine.shape == tuple(ref.shape)
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dg.logspace(0, 2, 3).numpy(), [1.0, 10.0, 100.0], rtol=1e-6)
    np.testing.assert_allclose(dg.logspace(0, 3, 4, base=2).numpy(), [1.0, 2.0, 4.0, 8.0])
    assert dg.linspace(0, 1, 3, dtype=dg.float64).dtype is dg.float64
    with pytest.raises(RuntimeError, match="non-negative"):
        dg.linspace(0, 1, -1)


def test_eye():
    assert dg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]] and dg.eye(2).dtype is dg.float32
    assert dg.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert dg.eye(2, dtype=dg.int64).tolist() == [[1, 0], [0, 1]]


# --- devices --------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda d: dg.zeros(2, device=d), lambda d: dg.ones(1, device=d),
                                  lambda d: dg.tensor([1.0], device=d),
                                  lambda d: dg.arange(3, device=d), lambda d: dg.rand(2, device=d),
                                  lambda d: dg.eye(2, device=d)])
def test_device_argument(make):
    assert make("cpu").device == dg.device("cpu")
    assert make(dg.device("cpu")).device.type == "cpu"
    # device="cuda": tests/cuda/test_cuda_tensor.py (on a GPU, and without one)


def test_device_object():
    assert repr(dg.device("cpu")) == "device(type='cpu')"
    assert repr(dg.device("cuda:1")) == "device(type='cuda', index=1)"
    assert dg.device("cpu") == "cpu"
    with pytest.raises(RuntimeError, match="unknown device type 'tpu'"):
        dg.device("tpu")


# --- dg.testing.assert_close ----------------------------------------------------------------

@pytest.mark.parametrize("actual, expected, kwargs", [
    ([1.0], [1.0 + 1e-6], {}),
    ([1.0], [1.0 + 1e-4], {}),
    ([100.0], [100.0001], {}),
    ([1.0], [1.0 + 1e-4], {"rtol": 1e-3, "atol": 0.0}),
    ([1.0, float("nan")], [1.0, float("nan")], {}),
    ([1.0, float("nan")], [1.0, float("nan")], {"equal_nan": True}),
    ([float("inf")], [float("inf")], {}),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_assert_close_matches_torch(torch, actual, expected, kwargs, dtype):
    def outcome(lib):
        dt = getattr(lib, dtype)
        try:
            lib.testing.assert_close(lib.tensor(actual, dtype=dt), lib.tensor(expected, dtype=dt),
                                     **kwargs)
        except AssertionError:
            return "fail"
        return "pass"
    assert outcome(dg) == outcome(torch)


def test_assert_close_checks_dtype_shape_and_ints():
    with pytest.raises(AssertionError, match="dtype"):
        dg.testing.assert_close(dg.tensor([1.0]), dg.tensor([1.0], dtype=dg.float64))
    dg.testing.assert_close(dg.tensor([1.0]), dg.tensor([1.0], dtype=dg.float64),
                            check_dtype=False)
    with pytest.raises(AssertionError, match="shape"):
        dg.testing.assert_close(dg.zeros(2), dg.zeros(3))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        dg.testing.assert_close(dg.tensor([1, 2]), dg.tensor([1, 3]))
    with pytest.raises(ValueError, match="both"):
        dg.testing.assert_close(dg.zeros(1), dg.zeros(1), rtol=1e-3)
    with pytest.raises(AssertionError, match="custom"):
        dg.testing.assert_close(dg.zeros(1), dg.ones(1), msg="custom")


# --- random ---------------------------------------------------------------------------------

def test_manual_seed_reproducible():
    dg.manual_seed(0)
    a, b, c = dg.rand(5), dg.randn(3), dg.randint(0, 100, (4,))
    dg.manual_seed(0)
    assert dg.rand(5).tolist() == a.tolist() and dg.randn(3).tolist() == b.tolist()
    assert dg.randint(0, 100, (4,)).tolist() == c.tolist()
    assert dg.manual_seed(123) is dg.default_generator and dg.initial_seed() == 123
    dg.manual_seed(1)
    assert dg.rand(5).tolist() != a.tolist()


def test_generator_independent_of_global_stream():
    g1, g2 = dg.Generator().manual_seed(1), dg.Generator().manual_seed(1)
    dg.manual_seed(5)
    expected = dg.rand(3).tolist()
    dg.manual_seed(5)
    assert dg.rand(3, generator=g1).tolist() == dg.rand(3, generator=g2).tolist()
    assert dg.rand(3).tolist() == expected
    assert g1.initial_seed() == 1


def test_rng_state_roundtrip():
    dg.manual_seed(7)
    state = dg.get_rng_state()
    first = dg.randn(4).tolist() + dg.rand(3).tolist()
    dg.set_rng_state(state)
    assert dg.randn(4).tolist() + dg.rand(3).tolist() == first
    g = dg.Generator().manual_seed(2 ** 63 + 5)
    st = g.get_state()
    x = dg.rand(3, generator=g).tolist()
    g.set_state(st)
    assert dg.rand(3, generator=g).tolist() == x and g.initial_seed() == 2 ** 63 + 5


def test_rand_and_randn_statistics():
    dg.manual_seed(0)
    r = dg.rand(20000).numpy()
    assert r.dtype == np.float32 and r.min() >= 0.0 and r.max() < 1.0
    assert abs(r.mean() - 0.5) < 0.02 and abs(r.std() - (1 / 12) ** 0.5) < 0.02
    n = dg.randn(20000, dtype=dg.float64).numpy()
    assert n.dtype == np.float64 and abs(n.mean()) < 0.05 and abs(n.std() - 1.0) < 0.05


def test_random_shapes_and_dtypes():
    assert dg.rand(2, 3).shape == (2, 3) and dg.randn((2, 3)).shape == (2, 3)
    assert dg.rand(()).shape == () and dg.randn(()).shape == () and dg.rand(0).shape == (0,)
    assert dg.normal(0.0, 1.0, ()).shape == () and dg.randint(0, 3, ()).shape == ()
    assert dg.rand(2, requires_grad=True).requires_grad
    assert dg.rand_like(dg.zeros(2, 3, dtype=dg.float64)).dtype is dg.float64
    assert dg.randn_like(dg.zeros(4)).shape == (4,)
    assert dg.randint_like(dg.zeros(3, dtype=dg.int64), 5).dtype is dg.int64
    with pytest.raises(RuntimeError, match="floating point dtype"):
        dg.rand(2, dtype=dg.int64)


def test_randint_range_and_dtype():
    dg.manual_seed(0)
    r = dg.randint(3, 7, (2000,))
    assert r.dtype is dg.int64 and set(r.tolist()) == {3, 4, 5, 6}
    assert set(dg.randint(5, (2000,)).tolist()) == {0, 1, 2, 3, 4}
    assert dg.randint(0, 3, (4,), dtype=dg.int32).dtype is dg.int32
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        dg.randint(5, 5, (2,))


def test_randperm():
    dg.manual_seed(0)
    p = dg.randperm(10)
    assert p.dtype is dg.int64 and sorted(p.tolist()) == list(range(10))
    assert p.tolist() != list(range(10))


def test_normal_statistics_and_errors():
    dg.manual_seed(0)
    r = dg.normal(3.0, 2.0, (20000,)).numpy()
    assert abs(r.mean() - 3.0) < 0.1 and abs(r.std() - 2.0) < 0.1
    t = dg.normal(dg.tensor([0.0, 100.0]), dg.tensor([1.0, 0.0]))
    assert t.shape == (2,) and t.dtype is dg.float32 and t[1].item() == 100.0
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        dg.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        dg.normal(dg.zeros(2), dg.tensor([1.0, -1.0]))


def test_bernoulli():
    dg.manual_seed(0)
    b = dg.bernoulli(dg.full((20000,), 0.3))
    assert b.dtype is dg.float32 and set(b.tolist()) == {0.0, 1.0}
    assert abs(b.numpy().mean() - 0.3) < 0.02
    assert dg.bernoulli(dg.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        dg.bernoulli(dg.tensor([1.5]))


def test_multinomial():
    dg.manual_seed(0)
    s = dg.multinomial(dg.tensor([0.2, 0.0, 0.8]), 20000, replacement=True)
    assert s.dtype is dg.int64 and s.shape == (20000,)
    freq = np.bincount(s.numpy(), minlength=3) / 20000
    assert freq[1] == 0.0 and abs(freq[0] - 0.2) < 0.02 and abs(freq[2] - 0.8) < 0.02
    assert sorted(dg.multinomial(dg.ones(4), 4).tolist()) == [0, 1, 2, 3]
    rows = dg.multinomial(dg.tensor([[0.0, 1.0], [1.0, 0.0]]), 3, replacement=True)
    assert rows.tolist() == [[1, 1, 1], [0, 0, 0]]
    with pytest.raises(RuntimeError, match="without replacement"):
        dg.multinomial(dg.ones(2), 3)
    with pytest.raises(RuntimeError, match="element < 0"):
        dg.multinomial(dg.tensor([1.0, -1.0]), 1)


def test_inplace_uniform_and_normal():
    dg.manual_seed(0)
    x = dg.zeros(20000)
    assert x.uniform_(-2.0, 2.0) is x and x._version == 1
    u = x.numpy()
    assert u.min() >= -2.0 and u.max() < 2.0 and abs(u.mean()) < 0.05
    y = dg.zeros(20000, dtype=dg.float64)
    assert y.normal_(1.0, 3.0) is y
    assert abs(y.numpy().mean() - 1.0) < 0.1 and abs(y.numpy().std() - 3.0) < 0.1
    w = dg.zeros(3, requires_grad=True)
    with dg.no_grad():
        w.uniform_(5.0, 6.0)
    assert w.requires_grad and min(w.tolist()) >= 5.0
    g = dg.Generator().manual_seed(3)
    a = dg.zeros(3).normal_(generator=g).tolist()
    assert dg.zeros(3).normal_(generator=dg.Generator().manual_seed(3)).tolist() == a


def test_tensor_accepts_any_sequence_like_torch(torch):
    """deque, range, array.array, memoryview, a __len__/__getitem__ class and NumPy scalars
    inside lists give torch's values and dtypes."""
    import array
    import collections

    class Pair:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            if i >= 2:
                raise IndexError(i)
            return i * 1.5

    def cases():
        return [collections.deque([1, 2]), range(3), array.array("f", [1, 2]),
                array.array("i", [3, 4]), memoryview(b"ab"), Pair(),
                [np.float32(1), np.float32(2)], [range(2), collections.deque([5, 6])],
                (collections.deque([1.5]), [2]), np.int64(3)]
    for ours, ref in zip(cases(), cases()):
        got, want = dg.tensor(ours), torch.tensor(ref)
        assert got.tolist() == want.tolist(), ref
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], ref
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        dg.tensor([range(2), range(1)])
