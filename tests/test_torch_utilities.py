"""Torch-level utilities and Tensor attributes of issue 26, each against torch's behaviour:
print options, anomaly mode, thread and precision settings, range / fill / empty_strided /
asarray / frombuffer / to_dlpack / can_cast / compile, and small Tensor attributes."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg

# --- set_printoptions ---------------------------------------------------------------------------

@pytest.fixture
def print_options():
    """Restore both libraries' print options after the test."""
    yield
    torch.set_printoptions(profile="default")
    dg.set_printoptions(profile="default")


PRINT_CASES = [{"precision": 2}, {"threshold": 5}, {"edgeitems": 1, "threshold": 5},
               {"linewidth": 30}, {"sci_mode": True}, {"sci_mode": False},
               {"profile": "short"}, {"profile": "full"}, {"profile": "short", "precision": 6}]
PRINT_VALUES = [np.array([1.123456, -2.5, 3e-5, 100.0], np.float32),
                (np.arange(2000.0).reshape(40, 50) / 7).astype(np.float32), np.arange(12),
                np.array([1.0, 2.0, 3.0], np.float32), np.array([1e10, 1.0], np.float32),
                np.random.default_rng(0).normal(size=(3, 12)).astype(np.float32)]


@pytest.mark.parametrize("options", PRINT_CASES, ids=str)
def test_set_printoptions_prints_as_torch(options, print_options):
    torch.set_printoptions(**options)
    dg.set_printoptions(**options)
    for v in PRINT_VALUES:
        assert str(dg.tensor(v)) == str(torch.tensor(v)), (options, v.shape)


def test_set_printoptions_resets_sci_mode_and_checks_profile(print_options):
    dg.set_printoptions(sci_mode=True)
    dg.set_printoptions(precision=3)  # sci_mode not passed: back to automatic, as torch
    assert str(dg.tensor([1.5])) == "tensor([1.500])"
    with pytest.raises(ValueError, match="profile"):
        dg.set_printoptions(profile="long")


# --- anomaly mode ---------------------------------------------------------------------------------

def _sqrt_nan(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    (lib.sqrt(x) * 0).sum().backward()
    return x.grad


def test_detect_anomaly_raises_naming_the_node_like_torch():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = dg.autograd.detect_anomaly()
    with mode:
        assert dg.is_anomaly_enabled() and dg.is_anomaly_check_nan_enabled()
        with pytest.raises(RuntimeError) as ours:
            _sqrt_nan(dg)
    assert not dg.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError) as theirs:
            _sqrt_nan(torch)
    assert str(ours.value) == str(theirs.value) == \
        "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_anomaly_mode_off_or_without_nan_check_lets_nan_through():
    assert np.isnan(_sqrt_nan(dg).numpy()[0])
    with dg.autograd.set_detect_anomaly(True, check_nan=False):
        assert dg.is_anomaly_enabled() and not dg.is_anomaly_check_nan_enabled()
        assert np.isnan(_sqrt_nan(dg).numpy()[0])
    assert not dg.is_anomaly_enabled() and dg.is_anomaly_check_nan_enabled()
    dg.set_anomaly_enabled(True)
    try:
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            _sqrt_nan(dg)
    finally:
        dg.set_anomaly_enabled(False)


def test_detect_anomaly_as_decorator_and_with_create_graph():
    x = dg.tensor([0.0, 4.0], requires_grad=True)

    @dg.autograd.detect_anomaly()
    def grads(value):
        (g,) = dg.autograd.grad((dg.sqrt(x) * value).sum(), x, create_graph=True)
        return g

    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="'SqrtBackward0'"):
        grads(0.0)  # 0 * inf at x = 0
    with pytest.warns(UserWarning):
        g = grads(1.0)  # inf is no anomaly: it passes, as in torch
    assert g.tolist() == [float("inf"), 0.25] and not dg.is_anomaly_enabled()


# --- settings -----------------------------------------------------------------------------------

def test_thread_counts():
    n = dg.get_num_threads()
    assert n >= 1
    try:
        dg.set_num_threads(1)
        assert dg.get_num_threads() == 1
    finally:
        dg.set_num_threads(n)
    assert dg.get_num_threads() == n
    for bad in (0, -1, 1.5):
        with pytest.raises(RuntimeError, match="positive integer"):
            dg.set_num_threads(bad)
    assert dg.get_num_interop_threads() == 1
    dg.set_num_interop_threads(1)
    with pytest.warns(UserWarning, match="no effect"):
        dg.set_num_interop_threads(4)


def test_float32_matmul_precision_and_flush_denormal():
    assert dg.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    try:
        dg.set_float32_matmul_precision("medium")
        assert dg.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="not one of"):
            dg.set_float32_matmul_precision("low")
        assert dg.get_float32_matmul_precision() == "medium"
        a = dg.tensor(np.random.default_rng(0).normal(size=(8, 8)).astype(np.float32))
        np.testing.assert_allclose((a @ a).numpy(), a.numpy().astype(np.float64)
                                   @ a.numpy().astype(np.float64), rtol=1e-5, atol=1e-5)
    finally:
        dg.set_float32_matmul_precision("highest")
    assert dg.set_flush_denormal(True) is False  # not configured: denormals stay
    assert dg.tensor([1e-40]).item() != 0.0


def test_default_device_is_the_cpu_and_can_be_set_back():
    assert str(dg.get_default_device()) == str(torch.get_default_device()) == "cpu"
    dg.set_default_device("cpu")
    try:
        assert dg.zeros(2).device == dg.device("cpu")
    finally:
        dg.set_default_device(None)
    assert dg.get_default_device() == dg.device("cpu")


# --- functions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args,kwargs", [((0, 1, 0.3), {}), ((5, 0, -2), {}), ((-4, 4), {}),
                                         ((0, 3), {"dtype": dg.int64}), ((1, 2, 0.25), {})])
def test_range_is_inclusive_and_deprecated_like_torch(args, kwargs):
    with pytest.warns(UserWarning, match="deprecated"):
        ours = dg.range(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tkw = {k: getattr(torch, v.name) for k, v in kwargs.items()}
        theirs = torch.range(*args, **tkw)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_range_errors():
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="inconsistent"):
        dg.range(0, 5, -1)


def test_fill_detach_and_predicates_match_torch():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    v = dg.tensor(3.0, requires_grad=True)
    out = dg.fill(x * 1, v)
    assert out.tolist() == [3.0, 3.0] and x.tolist() == [1.0, 2.0]
    out.sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    tv = torch.tensor(3.0, requires_grad=True)
    torch.fill(tx * 1, tv).sum().backward()
    assert v.grad.item() == tv.grad.item() == 2.0
    with pytest.raises(RuntimeError, match="0-dimension"):
        dg.fill(x, dg.tensor([1.0]))
    d = dg.detach(x)
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    for t, tt in ((dg.ones(2), torch.ones(2)), (dg.tensor([1], dtype=dg.uint8),
                                                torch.tensor([1], dtype=torch.uint8)),
                  (dg.tensor([True]), torch.tensor([True])), (dg.tensor([0.0]),
                                                              torch.tensor([0.0]))):
        assert dg.is_floating_point(t) == torch.is_floating_point(tt)
        assert dg.is_signed(t) == torch.is_signed(tt) == t.is_signed()
        if t.numel() == 1:
            assert dg.is_nonzero(t) == torch.is_nonzero(tt)
    assert dg.is_same_size(dg.ones(2), dg.ones(2)) and not dg.ones(2).is_same_size(dg.ones(2, 1))
    for bad, message in ((dg.ones(2), "more than one value"), (dg.ones(0), "no values")):
        with pytest.raises(RuntimeError, match=message):
            dg.is_nonzero(bad)


def test_can_cast_matches_torch_for_every_pair():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
    for a in names:
        for b in names:
            assert dg.can_cast(getattr(dg, a), getattr(dg, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)),
                                         ((2, 0), (1, 1)), ((), ()), ((3, 2), (0, 1))])
def test_empty_strided_lays_out_like_torch(size, stride):
    ours = dg.empty_strided(size, stride, dtype=dg.float64)
    theirs = torch.empty_strided(size, stride, dtype=torch.float64)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.dtype is dg.float64
    if 0 not in stride:
        ours.copy_(dg.arange(ours.numel(), dtype=dg.float64).reshape(size))
        assert ours.tolist() == np.arange(ours.numel(), dtype=np.float64).reshape(size).tolist()
    x = dg.ones(1, dtype=dg.int32).new_empty_strided(size, stride)
    assert x.dtype is dg.int32 and x.stride() == theirs.stride()
    with pytest.raises(RuntimeError, match="mismatch"):
        dg.empty_strided((2, 3), (1,))


def test_asarray_shares_memory_and_copies_on_request():
    a = np.zeros(3, np.float32)
    t = dg.asarray(a)
    t[0] = 1.0
    assert a[0] == 1.0
    assert dg.asarray(t) is t
    c = dg.asarray(a, copy=True)
    c[1] = 5.0
    assert a[1] == 0.0
    assert dg.asarray([1, 2]).dtype is dg.int64
    assert dg.asarray(a, dtype=dg.float64).dtype is dg.float64
    with pytest.raises(ValueError, match="copy=False"):
        dg.asarray(a, dtype=dg.float64, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        dg.asarray([1.0, 2.0], copy=False)
    buf = bytearray(np.array([1, 2], np.int32).tobytes())
    assert dg.asarray(buf, dtype=dg.int32).tolist() == [1, 2]
    tt = torch.arange(3.0)
    shared = dg.asarray(tt)  # through DLPack: no copy
    tt[0] = 9.0
    assert shared.tolist() == [9.0, 1.0, 2.0]


def test_frombuffer_matches_torch():
    raw = bytearray(np.arange(6, dtype=np.int16).tobytes())
    for kw in ({}, {"count": 2}, {"offset": 4}, {"count": 2, "offset": 2}):
        ours = dg.frombuffer(raw, dtype=dg.int16, **kw)
        theirs = torch.frombuffer(bytearray(raw), dtype=torch.int16, **kw)
        assert ours.tolist() == theirs.tolist()
    view = dg.frombuffer(raw, dtype=dg.int16)
    raw[0] = 7  # the tensor shares the buffer
    assert view[0].item() == 7
    for kw, message in (({"dtype": dg.int32, "offset": 2}, "multiple of element size"),
                        ({"dtype": dg.int16, "count": 9}, "must not be greater")):
        with pytest.raises(ValueError, match=message):
            dg.frombuffer(raw, **kw)


def test_to_dlpack_shares_memory_with_torch():
    t = dg.arange(4, dtype=dg.float32)
    theirs = torch.from_dlpack(dg.to_dlpack(t))
    t[1] = 7.0
    assert theirs.tolist() == [0.0, 7.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        dg.to_dlpack(dg.ones(2, requires_grad=True))


def test_compile_runs_the_callable_unchanged():
    model = dg.nn.Linear(2, 1)
    assert dg.compile(model) is model
    f = dg.compile(lambda x: x * 2, mode="reduce-overhead")
    assert f(dg.ones(2)).tolist() == [2.0, 2.0]

    @dg.compile(fullgraph=True)
    def g(x):
        return x + 1
    assert g(dg.zeros(1)).tolist() == [1.0]
    with pytest.raises(AssertionError, match="callable"):
        dg.compile(3)


# --- Tensor attributes --------------------------------------------------------------------------

def test_tensor_attributes_match_torch():
    for dt in ("float32", "float64", "int16", "bool", "uint8"):
        ours = dg.zeros(2, 3, dtype=getattr(dg, dt)).t()
        theirs = torch.zeros(2, 3, dtype=getattr(torch, dt)).t()
        assert ours.itemsize == theirs.itemsize and ours.nbytes == theirs.nbytes
    x = dg.ones(2)
    assert x.is_cpu and not x.is_shared() and not x.is_pinned() and x.to_dense() is x
    assert x.to_dense(dg.float64).dtype is dg.float64
    assert hasattr(dg.Tensor, "dtype") and x.dtype is dg.float32
    assert isinstance(x.dtype, dg.Tensor.dtype)


def test_post_accumulate_grad_hook_runs_after_accumulation_like_torch():
    seen = {}
    for lib in (dg, torch):
        x = lib.ones(2, requires_grad=True)
        got = seen[lib.__name__] = []
        handle = x.register_post_accumulate_grad_hook(lambda t, got=got: got.append(
            t.grad.tolist()))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        lib.autograd.grad((x * 3).sum(), x)  # accumulates nothing: no call
        handle.remove()
        (x * 3).sum().backward()
        with pytest.raises(RuntimeError, match="non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(print)
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(print)
    assert seen["dynagrad"] == seen["torch"] == [[3.0, 3.0], [6.0, 6.0]]
