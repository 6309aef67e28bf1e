"""The CUDA kernel layer (dynagrad.kernels.cuda.runner) on raw numba device arrays, against
float64 NumPy.

Covers every kernel family: elementwise (contiguous, broadcast, strided, 0-d, size-1 dims, many
dims, float16 storage, int and bool, scalar parameters, dtype casts), the scalar helpers the op
expressions call, reductions (each strategy: per-thread, block tree, column, two-pass split) and
their bit-for-bit determinism, arg-reductions with ties and NaN, scans, the index kernels
(deterministic and atomic), matmul (strided, batched, half) and the kernel cache. Shapes are tiny:
without a GPU this runs on Numba's simulator, where every thread is a Python thread.
"""
import ctypes
import math

import numpy as np
import pytest
from numba import cuda as nbcuda
from numba.cuda.core import config

from dynagrad.kernels import cache
from dynagrad.kernels.cuda import runner as cuda
from dynagrad.ops.reduce import _ARG_BETTER, _FOLDS

RNG = np.random.default_rng(7)
SIMULATOR = bool(config.ENABLE_CUDASIM)


def dev(a):
    """A device copy of a NumPy array (0-d stays 0-d)."""
    a = np.asarray(a)
    return nbcuda.to_device(a if a.flags.c_contiguous else a.copy())


def host(d):
    return d.copy_to_host()


def view(d, shape, strides):
    """A device view with any (byte) strides, e.g. stride 0 to broadcast."""
    cuda._runtime()
    return cuda._view(d, tuple(shape), tuple(strides))


def transposed(d, axes):
    return view(d, [d.shape[a] for a in axes], [d.strides[a] for a in axes])


def empty(shape, dtype):
    return nbcuda.device_array(shape, dtype)


def run_ew(expr, arrays, types, out_type, out_dtype, kinds=None, params=()):
    kinds = kinds or ("a",) * len(arrays)
    shape = np.broadcast_shapes(*(np.shape(a) for a, k in zip(arrays, kinds) if k == "a"))
    out = empty(shape, out_dtype)
    ops = tuple(dev(a) if k == "a" else a for a, k in zip(arrays, kinds))
    cuda.elementwise(expr, kinds, types, out_type, ops, out, params)
    return host(out)


# --- elementwise ---------------------------------------------------------------------------------

def test_contiguous_binary_and_scalar_operands():
    a, b = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    got = run_ew("x * y + z", [a.astype(np.float32), b.astype(np.float32), 0.5],
                 ("float32",) * 3, "float32", np.float32, kinds=("a", "a", "s"))
    np.testing.assert_allclose(got, a.astype(np.float32) * b.astype(np.float32) + 0.5, rtol=1e-6)
    got = run_ew("x - y", [a, b], ("float64",) * 2, "float64", np.float64)
    np.testing.assert_array_equal(got, a - b)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3,)), ((4, 1), (1, 3)), ((2, 1, 3), (4, 1)),
                                   ((1,), (2, 3)), ((2, 3), ())])
def test_broadcasting_by_size_one_and_missing_dims(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    got = run_ew("x + y", [a, b], ("float64",) * 2, "float64", np.float64)
    np.testing.assert_array_equal(got, a + b)


def test_stride_zero_views_and_non_contiguous_operands():
    base = RNG.standard_normal((4, 6))
    d = dev(base)
    col = view(d, (4, 6), (d.strides[0], 0))           # column 0 repeated along each row
    other = RNG.standard_normal((6, 4))
    tr = transposed(dev(other), (1, 0))
    out = empty((4, 6), np.float64)
    cuda.elementwise("x * y", ("a", "a"), ("float64",) * 2, "float64", (col, tr), out)
    np.testing.assert_array_equal(host(out), base[:, :1] * other.T)
    sliced = d[:, ::2]                                   # a strided slice
    out2 = empty((4, 3), np.float64)
    cuda.elementwise("-x", ("a",), ("float64",), "float64", (sliced,), out2)
    np.testing.assert_array_equal(host(out2), -base[:, ::2])
    # a strided output, written in place through a view of a larger buffer
    big = dev(np.zeros((4, 6)))
    cuda.elementwise("x + 1.0", ("a",), ("float64",), "float64", (dev(base[:, :3]),), big[:, ::2])
    want = np.zeros((4, 6))
    want[:, ::2] = base[:, :3] + 1.0
    np.testing.assert_array_equal(host(big), want)


def test_zero_dim_size_one_and_empty_outputs():
    got = run_ew("x * 2.0", [np.array(3.5)], ("float64",), "float64", np.float64)
    assert got.shape == () and got == 7.0
    a = RNG.standard_normal((1, 4, 1))
    np.testing.assert_array_equal(run_ew("x + y", [a, np.ones((1, 1, 1))], ("float64",) * 2,
                                         "float64", np.float64), a + 1)
    out = empty((0, 3), np.float32)  # nothing to do, nothing launched
    cuda.elementwise("x", ("a",), ("float32",), "float32", (dev(np.ones((0, 3), np.float32)),), out)


def test_many_dims_use_the_eight_dim_class_and_beyond():
    # axes permuted so no two dimensions merge: 6 remain (class 8), then 9 (split per index)
    a = RNG.standard_normal((2,) * 6)
    perm = (5, 3, 1, 4, 0, 2)
    d = transposed(dev(a), perm)
    got = empty(d.shape, np.float64)
    cuda.elementwise("x * 3.0", ("a",), ("float64",), "float64", (d,), got)
    np.testing.assert_array_equal(host(got), np.transpose(a, perm) * 3.0)
    b = RNG.standard_normal((2,) * 9)
    perm9 = (8, 6, 4, 2, 0, 7, 5, 3, 1)
    d9 = transposed(dev(b), perm9)
    out9 = empty(d9.shape, np.float64)
    cuda.elementwise("x + 1.0", ("a",), ("float64",), "float64", (d9,), out9)
    np.testing.assert_array_equal(host(out9), np.transpose(b, perm9) + 1.0)


def test_float16_storage_computes_in_float32():
    x = np.linspace(-4, 4, 13).astype(np.float16)
    got = run_ew("ftanh(x) * y", [x, x], ("float16",) * 2, "float16", np.float16)
    assert got.dtype == np.float16
    ref = np.tanh(x.astype(np.float64)) * x.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    # a half array read as float32 operands, a float32 result stored as half
    got = run_ew("x + y", [x, np.float32(0.25)], ("float32", "float32"), "float32", np.float16,
                 kinds=("a", "s"))
    np.testing.assert_array_equal(got, (x.astype(np.float32) + 0.25).astype(np.float16))


def test_int_and_bool_expressions():
    a = RNG.integers(-9, 10, (3, 4)).astype(np.int64)
    b = RNG.integers(1, 5, (3, 4)).astype(np.int64)
    np.testing.assert_array_equal(run_ew("x // y", [a, b], ("int64",) * 2, "int64", np.int64),
                                  a // b)
    np.testing.assert_array_equal(run_ew("int_fmod(x, y)", [a, b], ("int64",) * 2, "int64",
                                         np.int64), np.fmod(a, b))
    np.testing.assert_array_equal(run_ew("int_pow(x, y)", [a, b], ("int64",) * 2, "int64",
                                         np.int64), a ** b)
    p, q = RNG.random((3, 4)) < 0.5, RNG.random((3, 4)) < 0.5
    np.testing.assert_array_equal(run_ew("x and not y", [p, q], ("bool",) * 2, "bool", np.bool_),
                                  p & ~q)
    np.testing.assert_array_equal(run_ew("x < y", [a, b], ("int64",) * 2, "bool", np.bool_), a < b)
    # int32 storage computed as int64; where() picks from a bool condition
    got = run_ew("y if x else z", [p, a.astype(np.int32), b], ("bool", "int64", "int64"), "int64",
                 np.int64)
    np.testing.assert_array_equal(got, np.where(p, a, b))


def test_named_scalar_parameters():
    x = np.array([-3.0, -0.5, 0.2, 4.0, np.nan], np.float32)
    got = run_ew("clamp(x, lo, hi)", [x], ("float32",), "float32", np.float32,
                 params=(("lo", "float32", -1.0), ("hi", "float32", 1.0)))
    np.testing.assert_array_equal(got, np.array([-1, -0.5, 0.2, 1, np.nan], np.float32))


@pytest.mark.parametrize("src,dst", [(np.float32, np.int64), (np.float64, np.float16),
                                     (np.float32, np.bool_), (np.bool_, np.float32),
                                     (np.int64, np.float16), (np.float16, np.float64)])
def test_copy_casts_like_numpy_astype(src, dst):
    x = np.array([[-2.7, 0.0, 1.5], [3.2, -0.4, 6.0]]).astype(src)
    out = empty(x.shape, dst)
    cuda.copy(dev(x), out)
    np.testing.assert_array_equal(host(out), x.astype(dst))


def test_copy_broadcasts_and_fill_sets_every_element():
    out = empty((3, 4), np.float32)
    cuda.copy(dev(np.arange(4, dtype=np.float32)), out)
    np.testing.assert_array_equal(host(out), np.tile(np.arange(4, dtype=np.float32), (3, 1)))
    cuda.fill(out[:, 1:3], 7)
    assert host(out)[:, 1:3].tolist() == [[7.0, 7.0]] * 3 and host(out)[0, 0] == 0.0


def test_broadcast_mismatch_names_the_shapes():
    out = empty((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"x \+ y.*float32\(4,\).*\(2, 3\)"):
        cuda.elementwise("x + y", ("a", "a"), ("float32",) * 2, "float32",
                         (dev(np.ones((2, 3), np.float32)), dev(np.ones(4, np.float32))), out)


# --- the scalar helpers op expressions call ----------------------------------------------------

SPECIAL = np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7, -7.25, np.inf, -np.inf, np.nan])
DIVISORS = np.array([2.0, -2.0, 0.75, -3.0, 2.0, 0.0, -1.5, 2.0, 3.0, 2.0, 2.0, 1.0])


def _erf(v):
    return np.vectorize(math.erf)(v)


def _gelu(v):
    return v * 0.5 * np.vectorize(math.erfc)(-v / math.sqrt(2))


HELPERS = [  # (expression, NumPy float64 reference on (x, y))
    ("floor_div(x, y)", lambda x, y: np.floor_divide(x, y)),
    ("py_mod(x, y)", lambda x, y: np.remainder(x, y)),
    ("np.fmod(x, y)", lambda x, y: np.fmod(x, y)),
    ("np.floor(x)", lambda x, y: np.floor(x)),
    ("np.ceil(x)", lambda x, y: np.ceil(x)),
    ("np.trunc(x)", lambda x, y: np.trunc(x)),
    ("round_half_even(x)", lambda x, y: np.rint(x)),
    ("frac(x)", lambda x, y: x - np.trunc(x)),
    ("fmax_nan(x, y)", lambda x, y: np.maximum(x, y)),
    ("fmin_nan(x, y)", lambda x, y: np.minimum(x, y)),
    ("nan_to_num(x, y, 9.0, -9.0)", lambda x, y: np.where(np.isnan(x), y, np.where(
        x == np.inf, 9.0, np.where(x == -np.inf, -9.0, x)))),
    ("fexp(x)", lambda x, y: np.exp(x)),
    ("ftanh(x)", lambda x, y: np.tanh(x)),
    ("fsigmoid(x)", lambda x, y: 1 / (1 + np.exp(-x))),
    ("sigmoid(x)", lambda x, y: 1 / (1 + np.exp(-x))),
    ("ferf(x)", lambda x, y: _erf(x)),
    ("fgelu(x)", lambda x, y: _gelu(x)),
    ("fgelu_grad(x, y)", lambda x, y: y * (0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2))
                                           + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))),
    ("math.exp(x)", lambda x, y: np.exp(x)),  # the device overflows to inf, never raises
]


@pytest.mark.parametrize("expr,ref", HELPERS, ids=[h[0] for h in HELPERS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_helpers_match_numpy(expr, ref, dtype):
    x, y = SPECIAL.astype(dtype), DIVISORS.astype(dtype)
    finite = np.isfinite(SPECIAL) if expr.startswith(("fgelu", "ferf")) else slice(None)
    x = x[finite]
    y = y[finite]
    t = np.dtype(dtype).name
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64), y.astype(np.float64))
    got = run_ew(expr, [x, y], (t, t), t, dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want.astype(dtype), rtol=tol, atol=tol, equal_nan=True)


def test_int_helpers_match_numpy():
    x = np.array([7, -7, 7, -7, 0, 5, 3, -2, 1, -1], np.int64)
    y = np.array([2, 2, -2, -2, 3, 0, 3, 5, -3, -3], np.int64)
    got = run_ew("int_fmod(x, y)", [x, y], ("int64",) * 2, "int64", np.int64)
    np.testing.assert_array_equal(got, np.where(y == 0, 0, np.fmod(x, np.where(y == 0, 1, y))))
    got = run_ew("int_pow(x, y)", [x, y], ("int64",) * 2, "int64", np.int64)
    want = [int(a) ** int(b) if b >= 0 else (1 if a == 1 else (a if a == -1 and b % 2 else
                                                               (1 if a == -1 else 0)))
            for a, b in zip(x, y)]
    np.testing.assert_array_equal(got, want)
    got = run_ew("clamp(x, y, 4)", [x, y], ("int64",) * 2, "int64", np.int64)
    np.testing.assert_array_equal(got, np.minimum(np.maximum(x, y), 4))


# --- reductions --------------------------------------------------------------------------------

def _kind(name, cat, acc=None):
    init, combine, final = _FOLDS[name][cat]
    if acc is None:
        acc = ("float64" if cat == "f" else "int64") if name in ("sum", "prod") else "float64"
    return init, combine, final, acc


REFS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "all": np.all,
        "any": np.any}


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((4, 40), 1), ((40, 3), 0), ((2, 3, 4), 1)])
def test_float_reductions(name, shape, dim):
    x = RNG.uniform(0.5, 1.5, shape)
    out = empty(shape[:dim] + shape[dim + 1:], np.float64)
    cuda.reduce_axis(dev(x), dim, _kind(name, "f"), out)
    np.testing.assert_allclose(host(out), REFS[name](x, axis=dim), rtol=1e-12)


def test_int_bool_and_half_reductions():
    xi = RNG.integers(-5, 6, (3, 37)).astype(np.int32)
    out = empty((3,), np.int64)
    cuda.reduce_axis(dev(xi), 1, _kind("sum", "i"), out)  # int32 data, int64 accumulator
    np.testing.assert_array_equal(host(out), xi.astype(np.int64).sum(1))
    cuda.reduce_axis(dev(xi.astype(np.int64)), 1, _kind("max", "i", "int64"), out)
    np.testing.assert_array_equal(host(out), xi.max(1))
    xb = RNG.random((4, 6)) < 0.7
    for name in ("all", "any"):
        ob = empty((6,), np.bool_)
        cuda.reduce_axis(dev(xb), 0, _kind(name, "b", "bool"), ob)
        np.testing.assert_array_equal(host(ob), REFS[name](xb, axis=0))
    xh = RNG.uniform(-1, 1, (2, 50)).astype(np.float16)
    oh = empty((2,), np.float16)
    cuda.reduce_axis(dev(xh), 1, _kind("sum", "f", "float32"), oh)
    np.testing.assert_allclose(host(oh).astype(np.float64), xh.astype(np.float64).sum(1),
                               rtol=2e-3, atol=2e-3)


def test_max_min_propagate_nan_and_empty_sums_are_zero():
    x = np.array([[1.0, np.nan, 3.0], [2.0, -1.0, 0.5]])
    out = empty((2,), np.float64)
    cuda.reduce_axis(dev(x), 1, _kind("max", "f"), out)
    np.testing.assert_array_equal(host(out), [np.nan, 2.0])
    cuda.reduce_axis(dev(x), 1, _kind("min", "f"), out)
    np.testing.assert_array_equal(host(out), [np.nan, -1.0])
    cuda.reduce_axis(dev(np.ones((2, 0))), 1, _kind("sum", "f"), out)
    np.testing.assert_array_equal(host(out), [0.0, 0.0])


def test_reduce_strided_input_0d_input_and_unviewable_output():
    x = RNG.standard_normal((3, 4, 5))
    xt = transposed(dev(x), (2, 0, 1))  # (5, 3, 4): dims before the axis do not merge
    out = empty((5, 4), np.float64)
    cuda.reduce_axis(xt, 1, _kind("sum", "f"), out)
    np.testing.assert_allclose(host(out), np.transpose(x, (2, 0, 1)).sum(1), rtol=1e-12)
    o0 = empty((), np.float64)
    cuda.reduce_axis(dev(np.array(2.5)), 0, _kind("sum", "f"), o0)
    assert host(o0) == 2.5
    big = dev(np.zeros((4, 5, 2)))
    target = transposed(big, (1, 0, 2))[:, :, 0]  # (5, 4) whose dims do not merge: staged
    cuda.reduce_axis(dev(x.transpose(2, 1, 0).copy()), 2, _kind("sum", "f"), target)
    np.testing.assert_allclose(host(big)[:, :, 0].T, x.transpose(2, 1, 0).sum(2), rtol=1e-12)


def test_reduce_paths_agree_and_are_bitwise_deterministic(monkeypatch):
    x = RNG.standard_normal((3, 200)).astype(np.float32)
    want = x.astype(np.float64).sum(1)
    results = []
    for patch in ({}, {"COLUMN_MIN_OUTPUTS": 1},
                  {"SPLIT_MIN_R": 64, "SPLIT_CHUNK": 48, "SPLIT_MAX_OUTPUTS": 8}):
        with monkeypatch.context() as m:
            for k, v in patch.items():
                m.setattr(cuda, k, v)
            for _ in range(2):
                out = empty((3,), np.float32)
                cuda.reduce_axis(dev(x), 1, _kind("sum", "f"), out)
                results.append(host(out))
        np.testing.assert_allclose(results[-1], want, rtol=1e-6)
        assert results[-1].tobytes() == results[-2].tobytes()  # bit for bit, run to run
    # the column path (a strided axis with many outputs) also serves a reduction over dim 0
    with monkeypatch.context() as m:
        m.setattr(cuda, "COLUMN_MIN_OUTPUTS", 2)
        out = empty((200,), np.float32)
        cuda.reduce_axis(dev(x), 0, _kind("max", "f", "float32"), out)
        np.testing.assert_array_equal(host(out), x.max(0))


# --- arg-reductions and scans ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("n", [7, 45])  # per-thread scan / block tree
def test_arg_reduce_first_best_with_ties_and_nan(kind, n):
    x = RNG.integers(0, 4, (3, n)).astype(np.float64)  # many ties
    x[1, n // 2] = np.nan
    x[1, n - 1] = np.nan
    out = empty((3,), np.int64)
    cuda.arg_reduce_axis(dev(x), 1, _ARG_BETTER["f"][kind], out)
    want = (np.argmax if kind == "max" else np.argmin)(x, axis=1)  # NumPy: first best, first NaN
    np.testing.assert_array_equal(host(out), want)
    xi = x[[0, 2]].astype(np.int64)
    oi = empty((n,), np.int64)
    cuda.arg_reduce_axis(dev(np.ascontiguousarray(xi.T)), 1, _ARG_BETTER["i"][kind], oi)
    np.testing.assert_array_equal(host(oi), (np.argmax if kind == "max" else np.argmin)(xi.T, 1))


def test_arg_reduce_of_an_empty_axis_raises():
    with pytest.raises(ValueError, match="empty dimension"):
        cuda.arg_reduce_axis(dev(np.ones((2, 0))), 1, _ARG_BETTER["f"]["max"],
                             empty((2,), np.int64))


@pytest.mark.parametrize("n", [6, 70])  # per-thread scan / chunked block scan
def test_scans(n):
    x = RNG.uniform(0.5, 1.5, (2, n, 3))
    out = empty(x.shape, np.float64)
    cuda.scan_axis(dev(x), 1, "acc + v", out)
    np.testing.assert_allclose(host(out), np.cumsum(x, 1), rtol=1e-12)
    cuda.scan_axis(dev(x), 1, "acc * v", out)
    np.testing.assert_allclose(host(out), np.cumprod(x, 1), rtol=1e-10)
    cuda.scan_axis(dev(x), 1, "max(acc, v)", out)
    np.testing.assert_array_equal(host(out), np.maximum.accumulate(x, 1))
    xi = RNG.integers(-3, 4, (n,)).astype(np.int64)
    oi = empty((n,), np.int64)
    cuda.scan_axis(dev(xi), 0, "acc + v", oi)
    np.testing.assert_array_equal(host(oi), np.cumsum(xi))
    xh = RNG.uniform(-1, 1, (n,)).astype(np.float16)
    oh = empty((n,), np.float16)
    cuda.scan_axis(dev(xh), 0, "acc + v", oh)
    np.testing.assert_allclose(host(oh).astype(np.float64), np.cumsum(xh.astype(np.float64)),
                               rtol=5e-3, atol=5e-3)


# --- index kernels ---------------------------------------------------------------------------

def test_gather_and_index_select():
    x = RNG.standard_normal((2, 5, 3))
    idx = RNG.integers(0, 5, (2, 4, 3)).astype(np.int64)
    out = empty(idx.shape, np.float64)
    cuda.gather3(dev(x), dev(idx), out)
    np.testing.assert_array_equal(host(out), np.take_along_axis(x, idx, 1))
    sel = np.array([4, 0, 0, 2], np.int64)
    out2 = empty((2, 4, 3), np.float64)
    cuda.index_select3(dev(x), dev(sel), out2)
    np.testing.assert_array_equal(host(out2), x[:, sel, :])
    xh = x.astype(np.float16)
    out3 = empty((2, 4, 3), np.float16)
    cuda.index_select3(dev(xh), dev(sel), out3)
    np.testing.assert_array_equal(host(out3), xh[:, sel, :])


def _scatter_ref(base, idx, src, accumulate):
    out = base.copy()
    for o, r, i in np.ndindex(*idx.shape):
        if accumulate:
            out[o, idx[o, r, i], i] += src[o, r, i]
        else:
            out[o, idx[o, r, i], i] = src[o, r, i]
    return out


@pytest.mark.parametrize("accumulate,deterministic", [(False, True), (True, True), (True, False)])
def test_scatter_with_repeated_indices(accumulate, deterministic):
    base = RNG.standard_normal((2, 4, 3))
    idx = RNG.integers(0, 4, (2, 6, 3)).astype(np.int64)  # repeats: last write wins / sums
    src = RNG.standard_normal((2, 6, 3))
    out = dev(base)
    cuda.scatter3(out, dev(idx), dev(src), accumulate, deterministic)
    want = _scatter_ref(base, idx, src, accumulate)
    if deterministic:
        np.testing.assert_array_equal(host(out), want)
    else:
        np.testing.assert_allclose(host(out), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("deterministic", [True, False])
def test_index_add(dtype, deterministic):
    base = (RNG.standard_normal((2, 4, 3)) * 3).astype(dtype)
    src = (RNG.standard_normal((2, 5, 3)) * 3).astype(dtype)
    idx = np.array([3, 0, 3, 1, 3], np.int64)
    out = dev(base)
    cuda.index_add3(out, dev(idx), dev(src), deterministic)
    want = base.copy()
    for k, j in enumerate(idx):
        want[:, j, :] = want[:, j, :] + src[:, k, :]
    if dtype == np.float64 and not deterministic:
        np.testing.assert_allclose(host(out), want, rtol=1e-12)
    else:
        np.testing.assert_array_equal(host(out), want)


# --- matmul ------------------------------------------------------------------------------

@pytest.fixture(params=["default", "tiled"])
def matmul_backend(request, monkeypatch):
    """matmul as it runs here (cuBLAS where nvmath-python works on a GPU), and forced onto the
    tiled Numba kernel, so a GPU with cuBLAS tests the fallback too."""
    if request.param == "tiled":
        monkeypatch.setattr(cuda, "_cublas", lambda: None)
    return request.param


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12), (np.float16, 2e-2)])
def test_matmul_2d_batched_and_strided(dtype, tol, matmul_backend):
    a, b = RNG.standard_normal((5, 7)), RNG.standard_normal((7, 3))
    out = empty((5, 3), dtype)
    cuda.matmul(dev(a.astype(dtype)), dev(b.astype(dtype)), out)
    ref = a.astype(dtype).astype(np.float64) @ b.astype(dtype).astype(np.float64)
    np.testing.assert_allclose(host(out).astype(np.float64), ref, rtol=tol, atol=tol)
    # batched, the right operand a transposed view, alpha applied
    A = RNG.standard_normal((2, 3, 4)).astype(dtype)
    B = RNG.standard_normal((2, 5, 4)).astype(dtype)
    Bt = transposed(dev(B), (0, 2, 1))
    outb = empty((2, 3, 5), dtype)
    cuda.matmul(dev(A), Bt, outb, alpha=0.5)
    refb = 0.5 * A.astype(np.float64) @ B.astype(np.float64).transpose(0, 2, 1)
    np.testing.assert_allclose(host(outb).astype(np.float64), refb, rtol=tol, atol=tol)


def test_matmul_batch_broadcast_empty_inner_and_errors(matmul_backend):
    A, b = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((1, 4, 2))
    out = empty((3, 2, 2), np.float64)
    cuda.matmul(dev(A), dev(b), out)
    np.testing.assert_allclose(host(out), A @ b, rtol=1e-12)
    z = empty((2, 3), np.float64)
    cuda.matmul(dev(np.ones((2, 0))), dev(np.ones((0, 3))), z)
    np.testing.assert_array_equal(host(z), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\) cannot be multiplied"):
        cuda.matmul(dev(np.ones((2, 3))), dev(np.ones((4, 5))), empty((2, 5), np.float64))
    with pytest.raises(TypeError, match="one float dtype"):
        cuda.matmul(dev(np.ones((2, 2), np.int64)), dev(np.ones((2, 2), np.int64)),
                    empty((2, 2), np.int64))
    assert cuda.matmul_backend() in ("cublas", "numba")


class _HostBlas:
    """cuBLAS's column-major GEMM computed with NumPy on raw host pointers (the simulator's device
    memory): checks the operation flags, leading dimensions and batch strides matmul passes."""

    DTYPES = {0: np.float32, 1: np.float64, 2: np.float16}

    def __init__(self):
        self.calls = []

    def _matrix(self, ptr, dtype, rows, cols, ld, batch, stride):
        item = np.dtype(dtype).itemsize
        extent = ((batch - 1) * stride + (cols - 1) * ld + rows) * item
        raw = np.frombuffer((ctypes.c_byte * extent).from_address(ptr), np.uint8).view(dtype)
        return np.lib.stride_tricks.as_strided(raw, (batch, rows, cols),
                                               (stride * item, item, ld * item))

    def gemm_ex(self, h, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c, ct, ldc, comp,
                algo):
        self.gemm_strided_batched_ex(h, ta, tb, m, n, k, alpha, a, at, lda, 0, b, bt, ldb, 0,
                                     beta, c, ct, ldc, 0, 1, comp, algo)

    def gemm_strided_batched_ex(self, h, ta, tb, m, n, k, alpha, a, at, lda, sa, b, bt, ldb, sb,
                                beta, c, ct, ldc, sc, batch, comp, algo):
        self.calls.append((ta, tb, lda, ldb, ldc, batch))
        dt = self.DTYPES[at]
        scalar = np.float64 if dt == np.float64 else np.float32
        alpha_v = np.frombuffer((ctypes.c_byte * 8).from_address(alpha), scalar, count=1)[0]
        A = self._matrix(a, dt, *((m, k) if ta == 0 else (k, m)), lda, batch, sa)
        B = self._matrix(b, dt, *((k, n) if tb == 0 else (n, k)), ldb, batch, sb)
        C = self._matrix(c, dt, m, n, ldc, batch, sc)
        opa = A if ta == 0 else A.transpose(0, 2, 1)
        opb = B if tb == 0 else B.transpose(0, 2, 1)
        C[...] = alpha_v * (opa.astype(np.float64) @ opb.astype(np.float64))


@pytest.mark.skipif(not SIMULATOR, reason="the stand-in reads the simulator's host memory; on a "
                    "GPU the matmul tests above run the real cuBLAS")
def test_cublas_call_layouts_with_a_host_stand_in(monkeypatch):
    blas = _HostBlas()
    monkeypatch.setattr(cuda, "_cublas", lambda: blas)
    monkeypatch.setattr(cuda, "_blas_handle", lambda b: 1)
    monkeypatch.setattr(cuda, "_ptr", lambda x: x._ary.__array_interface__["data"][0])
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 5))
    cases = [(dev(a), dev(b)),                                    # row-major operands
             (transposed(dev(a.T.copy()), (1, 0)), dev(b)),        # a column-major view
             (dev(a), transposed(dev(b.T.copy()), (1, 0))),        # b column-major view
             (dev(a)[:, ::2], dev(b)[::2])]                        # no unit stride: copied
    for x, y in cases:
        out = empty((x.shape[0], y.shape[1]), np.float64)
        cuda.matmul(x, y, out, alpha=2.0)
        np.testing.assert_allclose(host(out), 2.0 * host_of(x) @ host_of(y), rtol=1e-12)
    ops = {call[:2] for call in blas.calls}
    assert (0, 0) in ops and (0, 1) in ops and (1, 0) in ops  # transposes used, not copies
    A, B = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((1, 4, 2))
    outb = dev(np.zeros((3, 2, 6)))[:, :, ::3]              # strided result: staged, copied back
    cuda.matmul(dev(A), dev(B), outb)
    np.testing.assert_allclose(host_of(outb), A @ B, rtol=1e-12)
    assert blas.calls[-1][-1] == 3


def host_of(d):
    """Host copy of any device view (the simulator keeps views as NumPy arrays)."""
    return np.array(d._ary) if hasattr(d, "_ary") else d.copy_to_host()


# --- the kernel cache ------------------------------------------------------------------------

def test_kernels_are_generated_files_cached_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAGRAD_CACHE_DIR", str(tmp_path))
    expr = "x * y - 0.125"  # an expression no other test uses: a fresh kernel
    a = dev(np.arange(4, dtype=np.float32))
    out = empty((4,), np.float32)
    before = cache.cache_stats()
    cuda.elementwise(expr, ("a", "a"), ("float32",) * 2, "float32", (a, a), out)
    mid = cache.cache_stats()
    assert mid["misses"] == before["misses"] + 1
    files = list(cache.cache_dir().glob("k_*.py"))
    assert len(files) == 1
    text = files[0].read_text()
    assert "@cuda.jit(cache=True)" in text and expr in text
    cuda.elementwise(expr, ("a", "a"), ("float32",) * 2, "float32", (a, a), out)  # memory hit
    after = cache.cache_stats()
    assert after["misses"] == mid["misses"] and after["hits"] == mid["hits"] + 1
    np.testing.assert_allclose(host(out), np.arange(4) ** 2 - 0.125)
    keys = [k for k in cache._memory if k[:3] == ("cuda", cache.cuda_arch(), "ew") and expr in k]
    assert len(keys) == 1
