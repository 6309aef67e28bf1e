"""The Tensor front door: repr, metadata, conversions, NumPy interop, casting, Python protocols."""
import copy
import pickle

import numpy as np
import pytest

import dynagrad as dg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# --- repr -----------------------------------------------------------------------------------

def test_repr_basics():
    assert repr(dg.tensor([1.0, 2.0], requires_grad=True)) == \
        "tensor([1., 2.], requires_grad=True)"
    assert repr(dg.tensor([1.0, 2.0], requires_grad=True) * 2) == \
        "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(dg.tensor([1.0, 2.0], dtype=dg.float64)) == \
        "tensor([1., 2.], dtype=dynagrad.float64)"
    assert repr(dg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(dg.tensor([1, 2], dtype=dg.int32)) == "tensor([1, 2], dtype=dynagrad.int32)"
    assert str(dg.tensor(3.5)) == "tensor(3.5000)"


def test_repr_right_aligns_to_common_width():
    assert repr(dg.arange(9).reshape(3, 3) * 1) == (
        "tensor([[0, 1, 2],\n        [3, 4, 5],\n        [6, 7, 8]])")
    assert repr(dg.arange(12).reshape(3, 4)) == (
        "tensor([[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]])")
    assert repr(dg.tensor([0.1098, -1.0241])) == "tensor([ 0.1098, -1.0241])"
    assert repr(dg.tensor([True, False])) == "tensor([ True, False])"
    assert repr(dg.tensor([0.0, 10.0])) == "tensor([ 0., 10.])"


def test_repr_follows_default_dtype():
    dg.set_default_dtype(dg.float64)
    try:
        assert repr(dg.tensor([1.5])) == "tensor([1.5000])"
        assert repr(dg.tensor([1.5], dtype=dg.float32)) == \
            "tensor([1.5000], dtype=dynagrad.float32)"
    finally:
        dg.set_default_dtype(dg.float32)


_REPR_CASES = {
    "int_matrix": lambda r: np.arange(12).reshape(3, 4) - 5,
    "int32_padding": lambda r: np.array([1, -20, 300], np.int32),
    "uint8": lambda r: np.arange(0, 250, 50, dtype=np.uint8),
    "float_vector": lambda r: r.standard_normal(7).astype(np.float32),
    "float_3d": lambda r: r.standard_normal((2, 3, 4)).astype(np.float32),
    "float64": lambda r: r.standard_normal((3, 2)),
    "sci_small": lambda r: np.array([[1e-5, 1.0], [100.0, 3.0]], np.float32),
    "sci_large": lambda r: np.array([1e10, 1.0], np.float32),
    "int_valued_floats_wide_range": lambda r: np.array([1.0, 5000.0], np.float32),
    "big_values": lambda r: (r.standard_normal((3, 3)) * 1000).astype(np.float32),
    "nonfinite": lambda r: np.array([np.nan, 1.5, -np.inf, np.inf], np.float32),
    "nonfinite_int_mode": lambda r: np.array([np.nan, 1.0, -np.inf], np.float32),
    "all_zero": lambda r: np.zeros(3, np.float32),
    "negative_zero": lambda r: np.array([-0.0, 1.0], np.float32),
    "scalar_float": lambda r: np.array(-2.25, np.float32),
    "scalar_int": lambda r: np.array(7),
    "scalar_bool": lambda r: np.array(True),
    "float16": lambda r: np.array([2.0, -3.5], np.float16),
    "empty_1d": lambda r: np.zeros(0, np.float32),
    "empty_2d": lambda r: np.zeros((2, 0), np.float32),
    "empty_int": lambda r: np.zeros(0, np.int64),
    "wrapped_line": lambda r: r.standard_normal(40).astype(np.float32),
    "summarized_1d": lambda r: np.arange(2000, dtype=np.float32),
    "summarized_2d": lambda r: np.arange(1200).reshape(40, 30),
    "summarized_float": lambda r: r.standard_normal((50, 50)).astype(np.float32),
}


@pytest.mark.parametrize("name", sorted(_REPR_CASES))
def test_repr_matches_torch(torch, name):
    arr = _REPR_CASES[name](np.random.default_rng(0))
    expected = repr(torch.tensor(arr)).replace("torch.", "dynagrad.")
    assert repr(dg.tensor(arr)) == expected


@pytest.mark.parametrize("shape", [(3,), (2, 2), (30,)])
def test_repr_with_grad_suffix_matches_torch(torch, shape):
    arr = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t_mine, t_ref = dg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    assert repr(t_mine) == repr(t_ref).replace("torch.", "dynagrad.")
    assert repr(t_mine * 2) == repr(t_ref * 2).replace("torch.", "dynagrad.")


def test_format_spec_on_scalar_tensor():
    assert f"{dg.tensor(2.5):.2f}" == "2.50"
    assert f"{dg.tensor([1.0])}" == "tensor([1.])"


# --- shape and layout -----------------------------------------------------------------------

def test_shape_size_dim_numel():
    x = dg.zeros(2, 3)
    assert x.shape == (2, 3) and isinstance(x.shape, dg.Size)
    assert repr(x.shape) == "dynagrad.Size([2, 3])"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-2) == 2
    assert x.dim() == x.ndim == x.ndimension() == 2
    assert x.numel() == x.nelement() == 6 == dg.numel(x) == x.shape.numel()
    assert x.element_size() == 4 and dg.zeros(1, dtype=dg.float64).element_size() == 8
    assert dg.tensor(1.0).shape == () and dg.tensor(1.0).dim() == 0
    with pytest.raises(IndexError, match=r"size: Dimension out of range.*got 2"):
        x.size(2)


def test_stride_and_contiguity():
    x = dg.arange(6).reshape(2, 3)
    assert x.stride() == (3, 1) and x.stride(0) == 3 and x.stride(-1) == 1
    assert x.is_contiguous() and x.contiguous() is x
    t = x.t()
    assert t.stride() == (1, 3) and not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.stride() == (2, 1) and c.tolist() == [[0, 3], [1, 4], [2, 5]]
    col = x[:, 1]
    assert col.stride() == (3,) and not col.is_contiguous() and x[1:].storage_offset() == 3


# --- Python scalars and protocols ------------------------------------------------------------

def test_item_and_tolist():
    assert dg.tensor([2.5]).item() == 2.5
    assert isinstance(dg.tensor(3).item(), int) and dg.tensor(3).item() == 3
    assert dg.tensor(True).item() is True
    with pytest.raises(RuntimeError, match="6 elements cannot be converted to Scalar"):
        dg.zeros(2, 3).item()
    assert dg.arange(6).reshape(2, 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert dg.tensor(1.5).tolist() == 1.5
    assert isinstance(dg.tensor([1.0]).tolist()[0], float)


def test_float_int_index_bool():
    assert float(dg.tensor([2.5])) == 2.5 and int(dg.tensor(3.7)) == 3
    assert [10, 20, 30][dg.tensor(1)] == 20
    with pytest.raises(TypeError, match="only integer tensors"):
        [1, 2][dg.tensor(1.0)]
    assert bool(dg.tensor([2])) and not bool(dg.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(dg.tensor([1.0, 2.0]))


def test_len_and_iter():
    x = dg.arange(6).reshape(2, 3)
    assert len(x) == 2
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError, match="0-d"):
        len(dg.tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(dg.tensor(1.0))


def test_iteration_is_differentiable():
    x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = x
    (a * 2 + b * 3).sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [3.0, 3.0]]


# --- NumPy interop --------------------------------------------------------------------------

def test_numpy_is_zero_copy_both_ways():
    t = dg.zeros(3)
    n = t.numpy()
    n[0] = 5.0
    assert t.tolist() == [5.0, 0.0, 0.0]
    t.add_(1.0)
    assert n.tolist() == [6.0, 1.0, 1.0]


def test_numpy_refuses_requires_grad():
    t = dg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.0]


def test_from_numpy_shares_memory_and_keeps_dtype():
    arr = np.zeros(2)
    t = dg.from_numpy(arr)
    assert t.dtype is dg.float64
    arr[1] = 7.0
    t.mul_(2.0)
    assert t.tolist() == [0.0, 14.0] and arr.tolist() == [0.0, 14.0]
    assert dg.from_numpy(np.array([1, 2], np.int32)).dtype is dg.int32
    with pytest.raises(TypeError, match="from_numpy"):
        dg.from_numpy([1.0])
    with pytest.raises(TypeError, match="no dtype for numpy"):
        dg.from_numpy(np.zeros(2, np.uint16))


def test_array_protocol():
    t = dg.tensor([1.0, 2.0])
    a = np.asarray(t)
    a[0] = 42.0
    assert t.tolist() == [42.0, 2.0]
    assert np.asarray(t, dtype=np.int64).dtype == np.int64
    assert np.add(dg.tensor([1.0, 2.0]), 1).tolist() == [2.0, 3.0]


# --- copies and casts -----------------------------------------------------------------------

def test_clone_is_independent_and_differentiable():
    c = dg.tensor([1.0, 2.0])
    cl = c.clone()
    cl.add_(1.0)
    assert c.tolist() == [1.0, 2.0] and cl.tolist() == [2.0, 3.0]
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    assert y.grad_fn is not None
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("method, dtype", [
    ("float", dg.float32), ("double", dg.float64), ("half", dg.float16), ("long", dg.int64),
    ("int", dg.int32), ("bool", dg.bool),
])
def test_cast_methods(method, dtype):
    t = dg.tensor([0.0, 1.5, -2.7])
    out = getattr(t, method)()
    assert out.dtype is dtype
    assert out.tolist() == np.array([0.0, 1.5, -2.7], np.float32).astype(dtype.np).tolist()


def test_to_and_type_as():
    t = dg.tensor([1.0, 2.0])
    assert t.to(dg.float32) is t and t.float() is t
    assert t.to(dg.float64).dtype is dg.float64
    assert t.to(dtype=dg.int64).tolist() == [1, 2]
    assert t.to("cpu") is t
    assert t.type_as(dg.tensor([1])).dtype is dg.int64
    assert dg.tensor([1, 2]).to(t).dtype is dg.float32
    copied = t.to(dg.float32, copy=True)
    assert copied is not t and copied._data is not t._data


def test_cast_of_grad_tensor_backpropagates_in_source_dtype():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * 3).sum().backward()
    assert x.grad.dtype is dg.float32 and x.grad.tolist() == [3.0, 3.0]


def test_deepcopy_and_pickle():
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    (w * 2).sum().backward()
    c = copy.deepcopy(w)
    assert c.tolist() == [1.0, 2.0] and c.requires_grad and c.grad.tolist() == [2.0, 2.0]
    assert c._data is not w._data
    p = pickle.loads(pickle.dumps(w))
    assert p.tolist() == [1.0, 2.0] and p.requires_grad and p.dtype is dg.float32 and p.is_leaf


def test_data_property_is_detached_alias():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d._data is x._data
    x.data = dg.tensor([5.0, 6.0])
    assert x.tolist() == [5.0, 6.0] and x.requires_grad


def test_device_metadata():
    t = dg.zeros(2)
    assert t.device == dg.device("cpu") and str(t.device) == "cpu" and not t.is_cuda
    assert t.cpu() is t
    # .cuda() and .to("cuda"): tests/cuda/test_cuda_tensor.py (on a GPU, and without one)


def test_tensor_constructor():
    t = dg.Tensor([1.0, 2.0])
    assert t.dtype is dg.float32 and t.tolist() == [1.0, 2.0] and dg.is_tensor(t)


def test_repr_wraps_long_suffix_onto_next_line():
    t = dg.tensor(list(range(0, 250, 25)), dtype=dg.uint8)
    assert repr(t) == ("tensor([  0,  25,  50,  75, 100, 125, 150, 175, 200, 225],\n"
                       "       dtype=dynagrad.uint8)")
