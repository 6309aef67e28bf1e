"""Memory layout of new results (PyTorch's ``preserve_format``): elementwise ops, ``clone`` and the
``*_like`` creators lay out their result like transposed or permuted inputs; values and gradients
match a float64 NumPy reference whatever the layout; strides match PyTorch's where it is installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad.autograd import gradcheck
from dynagrad.kernels.cpu import backend as cpu
from dynagrad.layout import in_c_order, output_dim_order

# sizes on both sides of the threaded flat kernels' threshold
SMALL, LARGE = (6, 4), (512, 2 ** 17 // 512 + 64)


def values(shape, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, size=shape)


def transposed(arr, dtype=dg.float32, requires_grad=False):
    """``arr``'s values as the transposed view of a contiguous tensor."""
    t = dg.tensor(np.ascontiguousarray(arr.T), dtype=dtype, requires_grad=requires_grad)
    return t, t.t()


def elem_strides(shape, order):
    """The strides (in elements) of ``shape`` laid out with dims ``order``, outermost first."""
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


# --- the order rule ----------------------------------------------------------------------------

def test_output_dim_order_rule():
    c = np.zeros((6, 4))
    t = np.zeros((4, 6)).T
    assert output_dim_order((6, 4), [c]) is None
    assert output_dim_order((6, 4), [t]) == (1, 0)
    assert output_dim_order((6, 4), [t, c]) == (1, 0)      # the first operand decides
    assert output_dim_order((6, 4), [c, t]) is None
    assert output_dim_order((6, 4), [np.zeros(4), t]) == (1, 0)  # a broadcast row has no say
    assert output_dim_order((6, 4), [np.zeros((40, 4))[::2][:6]]) is None  # sliced: C order
    nhwc = np.zeros((2, 3, 4, 5)).transpose(0, 2, 3, 1)
    assert output_dim_order(nhwc.shape, [nhwc]) == (0, 3, 1, 2)  # memory: N, C, H, W
    assert in_c_order(np.zeros((8, 6))[:, :4]) and not in_c_order(t)


# --- elementwise results -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
@pytest.mark.parametrize("name,fn,ref", [
    ("relu", lambda x: x.relu(), lambda a: np.maximum(a, 0)),
    ("exp", lambda x: x.exp(), np.exp),
    ("mul_scalar", lambda x: x * 2.5, lambda a: a * 2.5),
    ("gt_scalar", lambda x: x > 0.5, lambda a: a > 0.5),
    ("gelu", F.gelu, None),
])
def test_unary_keeps_transposed_layout(shape, name, fn, ref):
    a = values(shape[::-1])
    _, xt = transposed(a, dg.float64)
    y = fn(xt)
    assert y.stride() == xt.stride() and not y.is_contiguous()
    expected = ref(a) if ref is not None else fn(dg.tensor(a)).numpy()
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_binary_layout_follows_the_first_operand_that_orders(shape):
    a, b = values(shape, 1), values(shape, 2)
    _, at = transposed(a, dg.float64)      # values a, transposed layout
    bc = dg.tensor(b, dtype=dg.float64)    # values b, C order
    _, bt = transposed(b, dg.float64)
    row = dg.tensor(b[0], dtype=dg.float64)
    col = dg.tensor(b[:, :1], dtype=dg.float64)
    t_order = at.stride()
    c_order = elem_strides(shape, (0, 1))
    for out, strides, ref in [(at + bc, t_order, a + b), (bc + at, c_order, b + a),
                              (at * bt, t_order, a * b), (row - at, t_order, b[0] - a),
                              (at / col, t_order, a / b[:, :1]),
                              (dg.where(at > 0, at, bc), t_order, np.where(a > 0, a, b))]:
        assert out.stride() == strides
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)


@pytest.mark.parametrize("n", [2, 40], ids=["small", "large"])
def test_permuted_4d_and_sliced_layouts(n):
    a = values((n, 3 * n, 5, 7))
    nhwc = dg.tensor(a).permute(0, 2, 3, 1)              # a channels-last view
    y = nhwc.relu() + dg.ones(3 * n)
    assert y.stride() == nhwc.stride()
    np.testing.assert_allclose(y.numpy(), np.maximum(a.transpose(0, 2, 3, 1), 0) + 1, rtol=1e-6)
    sliced = dg.tensor(a)[:, :n]                           # not dense, C order: a C result
    assert sliced.exp().is_contiguous()
    sliced_t = dg.tensor(a[0, 0])[:, :4].t()               # sliced and transposed
    z = sliced_t.sigmoid()
    assert z.stride() == elem_strides(tuple(z.shape), (1, 0))
    np.testing.assert_allclose(z.numpy(), 1 / (1 + np.exp(-a[0, 0][:, :4].T)), rtol=1e-6)


def test_small_permuted_and_sliced_inputs_keep_their_layout_with_gradients():
    """Small inputs take the hot path on their dims in memory order (``_permuted``): attention
    heads' transpose, a sliced transpose; values and gradients as NumPy's."""
    a = values((2, 16, 4, 8), 7)
    base = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    heads = base.transpose(1, 2)
    y = heads.exp() * heads
    assert y.stride() == heads.stride()
    h = a.transpose(0, 2, 1, 3)
    np.testing.assert_allclose(y.detach().numpy(), np.exp(h) * h, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), np.exp(a) * (1 + a), rtol=1e-12)
    b = values((40, 30), 8)
    leaf = dg.tensor(b, dtype=dg.float64, requires_grad=True)
    sliced_t = leaf[:, :20].t()
    z = sliced_t * 2.5 - sliced_t.sigmoid()
    assert z.stride() == elem_strides((20, 40), (1, 0))
    s = 1 / (1 + np.exp(-b[:, :20].T))
    np.testing.assert_allclose(z.detach().numpy(), 2.5 * b[:, :20].T - s, rtol=1e-12)
    z.sum().backward()
    expected = np.zeros_like(b)
    expected[:, :20] = (2.5 - s * (1 - s)).T
    np.testing.assert_allclose(leaf.grad.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_in_place_on_a_transposed_view(shape):
    a = values(shape)
    base = dg.tensor(a.T.copy(), dtype=dg.float64)
    view = base.t()
    view.relu_()
    view.mul_(2.0)
    np.testing.assert_allclose(base.numpy(), 2 * np.maximum(a.T, 0), rtol=1e-12)


def test_permuted_elementwise_kernel_runs_flat():
    """A dense permuted output runs the flat kernel over memory, not the strided one."""
    x = np.arange(12.0).reshape(3, 4).T            # (4, 3), F order
    out = np.empty((3, 4)).T
    cpu.elementwise("y * x", ("a", "a"), ("float64", "float64"), "float64", (x, x), out)
    np.testing.assert_array_equal(out, x * x)
    keys = [k for k in cpu._memory if k[0] == "y * x"]
    assert keys and all(k[4] == "c" for k in keys)


# --- gradients ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x, y: (x.t().relu() * y.t()).exp(),
    lambda x, y: x.t() * 3.0 - y.t().tanh(),
    lambda x, y: F.silu(x.t()) + y.t() / (x.t() ** 2 + 1.0),
    lambda x, y: x.t().clone() * y.t().contiguous(),
], ids=["relu_mul_exp", "scalar_tanh", "silu_div", "clone_contiguous"])
def test_gradients_through_permuted_results(fn):
    x = dg.tensor(values((3, 5), 3), dtype=dg.float64, requires_grad=True)
    y = dg.tensor(values((3, 5), 4), dtype=dg.float64, requires_grad=True)
    assert gradcheck(fn, (x, y))


def test_large_transposed_gradient_matches_reference():
    a = values(LARGE, 5)
    x = dg.tensor(a.T.copy(), requires_grad=True)
    (x.t().sigmoid() * 3.0).sum().backward()
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(x.grad.numpy(), (3 * s * (1 - s)).T, rtol=1e-5, atol=1e-6)


# --- clone, contiguous and the *_like creators ---------------------------------------------------

def test_clone_preserves_layout_and_contiguous_does_not():
    a = values((4, 6))
    xt = dg.tensor(a.T.copy()).t()
    c = xt.clone()
    assert c.stride() == xt.stride() and c._data is not xt._data
    np.testing.assert_array_equal(c.numpy(), xt.numpy())
    assert xt.contiguous().stride() == (6, 1)
    sliced = dg.tensor(values((8, 6)))[:, :4]
    assert sliced.clone().stride() == (4, 1)


@pytest.mark.parametrize("make", [
    lambda x: dg.zeros_like(x), lambda x: dg.ones_like(x), lambda x: dg.empty_like(x),
    lambda x: dg.full_like(x, 7.0), lambda x: dg.rand_like(x), lambda x: dg.randn_like(x),
    lambda x: dg.randint_like(x, 5),
], ids=["zeros", "ones", "empty", "full", "rand", "randn", "randint"])
def test_like_creators_preserve_layout(make):
    xt = dg.zeros(4, 6).t()
    y = make(xt)
    assert tuple(y.shape) == (6, 4) and y.stride() == xt.stride() and y.dtype is dg.float32
    assert make(dg.zeros(6, 4)).stride() == (4, 1)


def test_full_like_values_in_the_permuted_layout():
    y = dg.full_like(dg.zeros(4, 6).t(), 7.0)
    np.testing.assert_array_equal(y.numpy(), np.full((6, 4), 7.0))


# --- PyTorch parity ----------------------------------------------------------------------------

PARITY = {
    "t_relu": lambda m, x: x.t().relu(),
    "t_plus_c": lambda m, x: x.t() + m.ones(6, 4),
    "c_plus_t": lambda m, x: m.ones(6, 4) + x.t(),
    "row_plus_t": lambda m, x: m.ones(4) + x.t(),
    "t_plus_col": lambda m, x: x.t() + m.ones(6, 1),
    "sliced_t": lambda m, x: x[:, :3].t().exp(),
    "permute3d": lambda m, x: x.reshape(2, 3, 4).permute(2, 0, 1).exp(),
    "size1": lambda m, x: x.reshape(6, 1, 4).permute(1, 2, 0).exp(),
    "nhwc_bias": lambda m, x: x.reshape(1, 2, 3, 4).permute(0, 2, 3, 1) + m.ones(2),
    "expand": lambda m, x: x[:1].expand(4, 6).relu(),
    "where": lambda m, x: m.where(x.t() > 0, x.t(), 0.0),
    "clone": lambda m, x: x.t().clone(),
    "zeros_like": lambda m, x: m.zeros_like(x.t()),
    "to_double": lambda m, x: x.t().double() * 2,
}


@pytest.mark.parametrize("name", PARITY)
def test_strides_match_torch(name):
    torch = pytest.importorskip("torch")
    a = values((4, 6), 6).astype(np.float32)
    ours = PARITY[name](dg, dg.tensor(a))
    theirs = PARITY[name](torch, torch.tensor(a))
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
