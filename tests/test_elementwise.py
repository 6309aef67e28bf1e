"""Elementwise ops: the records of tests/opinfos/elementwise.py (forward against float64 NumPy,
gradients, PyTorch parity), then what no record holds: bitwise type errors, operators, special
values, integer semantics and promotion, in-place variants, float32 accuracy in ulps.
"""
import math

import numpy as np
import pytest

import dynagrad as dg
from harness import assert_rounds_like_float64, check_op, float32_ulps
from opinfo import family, params
from opinfos.elementwise import erf


@pytest.mark.parametrize("info,dtype", params(family("elementwise")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor",
                                  "bitwise_left_shift", "bitwise_right_shift"])
def test_bitwise_ops_refuse_floats(name):
    with pytest.raises(TypeError, match=name):
        getattr(dg, name)(dg.tensor([1.0]), dg.tensor([2.0]))


def test_bitwise_not_and_operators():
    x = dg.tensor([0, 5, -3])
    assert dg.bitwise_not(x).tolist() == [-1, -6, 2]
    assert (~dg.tensor([True, False])).tolist() == [False, True]
    assert (x & 1).tolist() == [0, 1, 1] and (x | 2).tolist() == [2, 7, -1]
    assert (x ^ 1).tolist() == [1, 4, -4] and (x << 1).tolist() == [0, 10, -6]


def test_isnan_isinf_isfinite_nan_to_num():
    x = dg.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert dg.isnan(x).tolist() == [False, True, False, False]
    assert dg.isinf(x).tolist() == [False, False, True, True]
    assert dg.isfinite(x).tolist() == [True, False, False, False]
    assert dg.isfinite(dg.tensor([1, 2])).tolist() == [True, True]
    big = float(np.finfo(np.float32).max)
    assert dg.nan_to_num(x).tolist() == [1.0, 0.0, big, -big]
    assert dg.nan_to_num(x, nan=2.0, posinf=3.0, neginf=-3.0).tolist() == [1.0, 2.0, 3.0, -3.0]
    g = dg.tensor([1.0, float("nan"), 2.0], dtype=dg.float64, requires_grad=True)
    dg.nan_to_num(g).sum().backward()
    assert g.grad.tolist() == [1.0, 0.0, 1.0]


def test_clamp_forward_grad_and_alias():
    rng = np.random.default_rng(6)
    x = rng.uniform(-3, 3, (3, 4))
    out = dg.clamp(dg.tensor(x), -1.0, 0.5)
    np.testing.assert_allclose(out.numpy(), np.clip(x, -1, 0.5).astype(np.float32))
    assert dg.clip(dg.tensor(x), min=0.0).numpy().min() >= 0
    assert dg.tensor([1, 5, 9]).clamp(2, 6).tolist() == [2, 5, 6]
    xt = dg.tensor(x, dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(lambda t: t.clamp(-1.0, 0.5), (xt,))
    lo = dg.tensor(rng.uniform(-2, 0, (4,)), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(lambda t, m: t.clamp(min=m), (xt, lo))
    with pytest.raises(RuntimeError, match="At least one"):
        dg.clamp(dg.tensor(x))


def test_where_method_keeps_self_where_the_condition_holds():
    # torch: x.where(condition, y) is where(condition, x, y); gradients reach x and y alike
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    a, b = rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,))
    c = a > 0
    x, y = dg.tensor(a, requires_grad=True), dg.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, want = x.where(dg.tensor(c), y), tx.where(torch.tensor(c), ty)
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    (out * dg.tensor(a)).sum().backward()
    (want * torch.tensor(a)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    scalar = dg.tensor(a).where(dg.tensor(c), 0.0)
    assert scalar.dtype is dg.float64
    np.testing.assert_array_equal(scalar.numpy(), torch.tensor(a).where(torch.tensor(c), 0.0))
    assert not hasattr(dg.Tensor, "where_") and not hasattr(torch.Tensor, "where_")


def test_lerp_where_square_float_power_rsub():
    rng = np.random.default_rng(7)
    a, b, w = (rng.uniform(-2, 2, (2, 3)) for _ in range(3))
    np.testing.assert_allclose(dg.lerp(dg.tensor(a), dg.tensor(b), dg.tensor(w)).numpy(),
                               a + w * (b - a), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dg.lerp(dg.tensor(a), dg.tensor(b), 0.75).numpy(),
                               a + 0.75 * (b - a), rtol=1e-5, atol=1e-6)
    ts = [dg.tensor(v, dtype=dg.float64, requires_grad=True) for v in (a, b, w)]
    assert dg.autograd.gradcheck(dg.lerp, ts)
    c = a > 0
    out = dg.where(dg.tensor(c), dg.tensor(a), dg.tensor(b))
    np.testing.assert_allclose(out.numpy(), np.where(c, a, b).astype(np.float32))
    assert dg.autograd.gradcheck(lambda x, y: dg.where(dg.tensor(c), x, y), ts[:2])
    assert dg.where(dg.tensor(c), dg.tensor(a, dtype=dg.float32), 0.0).dtype is dg.float32
    with pytest.raises(RuntimeError, match="boolean"):
        dg.where(dg.tensor([1, 0]), dg.tensor([1.0, 2.0]), 0.0)
    np.testing.assert_allclose(dg.square(dg.tensor(a)).numpy(), (a * a).astype(np.float32),
                               rtol=1e-6)
    fp = dg.float_power(dg.tensor([2, 3]), 2)
    assert fp.dtype is dg.float64 and fp.tolist() == [4.0, 9.0]
    assert dg.rsub(dg.tensor([1.0, 2.0]), 5.0).tolist() == [4.0, 3.0]


# --- integer semantics, promotion, scalars ---------------------------------------------------

def test_integer_division_semantics_match_python():
    a = dg.tensor([7, -7, 7, -7])
    b = dg.tensor([2, 2, -2, -2])
    assert (a // b).tolist() == [3, -4, -4, 3]
    assert (a % b).tolist() == [1, 1, -1, -1]
    assert dg.fmod(a, b).tolist() == [1, -1, 1, -1]
    assert (a / b).dtype is dg.float32 and (a / b).tolist() == [3.5, -3.5, -3.5, 3.5]
    assert dg.div(a, b, rounding_mode="trunc").tolist() == [3, -3, -3, 3]
    assert dg.div(a, b, rounding_mode="floor").tolist() == [3, -4, -4, 3]
    with pytest.raises(ZeroDivisionError):
        a // dg.tensor([1, 0, 1, 1])
    assert (dg.tensor([2, 3]) ** 3).tolist() == [8, 27]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        dg.tensor([2, 3]) ** -1


def test_promotion_through_ops():
    f32 = dg.ones(2)
    i64 = dg.tensor([1, 2])
    assert (f32 * 2.0).dtype is dg.float32
    assert (i64 * 2.5).dtype is dg.float32
    assert (i64 + 1).dtype is dg.int64
    assert (dg.tensor([1, 2], dtype=dg.int32) + i64).dtype is dg.int64
    assert (dg.tensor([1, 2], dtype=dg.uint8) + dg.tensor([1, 2], dtype=dg.int8)).dtype is dg.int16
    assert (f32 + dg.ones(2, dtype=dg.float64)).dtype is dg.float64
    assert (f32 + dg.tensor(1.0, dtype=dg.float64)).dtype is dg.float32  # 0-dim does not win
    assert (dg.ones(2, dtype=dg.float16) + f32).dtype is dg.float32
    assert dg.exp(i64).dtype is dg.float32
    assert (dg.tensor([True]) + dg.tensor([True])).tolist() == [True]
    assert (dg.tensor([True, False]) + 1).dtype is dg.int64
    assert (dg.tensor([250], dtype=dg.uint8) + 10).tolist() == [4]  # uint8 wraps like PyTorch
    h = dg.tensor([1.5, 2.5], dtype=dg.float16) * 2
    assert h.dtype is dg.float16 and h.tolist() == [3.0, 5.0]


def test_reflected_operators():
    x = dg.tensor([1.0, 2.0, 4.0])
    assert (1 - x).tolist() == [0.0, -1.0, -3.0]
    assert (8 / x).tolist() == [8.0, 4.0, 2.0]
    assert (2 ** x).tolist() == [2.0, 4.0, 16.0]
    assert (7 // x).tolist() == [7.0, 3.0, 1.0]
    assert (3 + x).tolist() == [4.0, 5.0, 7.0] and (2 * x).tolist() == [2.0, 4.0, 8.0]
    assert (-x).tolist() == [-1.0, -2.0, -4.0] and abs(-x).tolist() == [1.0, 2.0, 4.0]
    assert (x == 2.0).tolist() == [False, True, False]
    assert (np.float32(2) * x).tolist() == [2.0, 4.0, 8.0]


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add: shapes \(2, 3\) and \(4,\) are not broadcastable"):
        dg.ones(2, 3) + dg.ones(4)


# --- in-place variants ---------------------------------------------------------------------

def test_inplace_variants_match_out_of_place():
    rng = np.random.default_rng(8)
    x = dg.tensor(rng.uniform(0.5, 2, (3, 4)))
    for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "neg", "abs", "floor", "relu"):
        y = x.clone()
        v = y._version
        assert getattr(y, name + "_")() is y
        assert y._version == v + 1
        np.testing.assert_allclose(y.numpy(), getattr(x, name)().numpy(), rtol=1e-6)
    y = x.clone()
    y.add_(1.0).mul_(dg.tensor([2.0, 1.0, 1.0, 1.0])).sub_(x, alpha=2).div_(2.0)
    expected = ((x.numpy() + 1) * np.array([2.0, 1, 1, 1]) - 2 * x.numpy()) / 2
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    t = x.clone().T  # in place through a non-contiguous view writes the base
    t.mul_(0.0)
    assert float(t.abs().sum()) == 0.0
    y = x.clone()
    y += 1
    y *= 2
    np.testing.assert_allclose(y.numpy(), (x.numpy() + 1) * 2, rtol=1e-6)
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.tensor([1, 2]).add_(0.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        dg.ones(3).add_(dg.ones(2, 3))


def test_inplace_autograd():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.mul_(2)
    y = x * 1.0
    y.mul_(3.0)
    y.exp_()
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(3 * np.array([1.0, 2.0])), rtol=1e-5)
    w = dg.tensor([0.5, 0.25], requires_grad=True)
    z = x * 1.0
    z.add_(w * 2)
    z.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]


# --- PyTorch parity ------------------------------------------------------------------------

def test_torch_parity_int_and_special_values():
    torch = pytest.importorskip("torch")
    a = np.array([7, -7, 0, 3, -1])
    b = np.array([2, -3, 5, -2, 4])
    for name in ("floor_divide", "remainder", "fmod", "maximum", "minimum", "mul", "sub"):
        ours = getattr(dg, name)(dg.tensor(a), dg.tensor(b)).tolist()
        assert ours == getattr(torch, name)(torch.tensor(a), torch.tensor(b)).tolist(), name
    special = np.array([float("nan"), 0.0, -0.0, float("inf"), -float("inf"), 2.5, -2.5, 0.5])
    for name in ("sign", "round", "floor", "ceil", "trunc", "relu", "sigmoid", "tanh", "exp",
                 "log", "sqrt", "rsqrt", "abs", "frac"):
        ours = getattr(dg, name)(dg.tensor(special, dtype=dg.float64)).numpy()
        ref = getattr(torch, name)(torch.tensor(special, dtype=torch.float64)).numpy()
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref), err_msg=name)
        np.testing.assert_allclose(ours[~np.isnan(ours)], ref[~np.isnan(ref)], err_msg=name)
    x = np.array([1.0, float("nan"), 3.0])
    y = np.array([2.0, 1.0, float("nan")])
    for name in ("maximum", "minimum"):
        ours = getattr(dg, name)(dg.tensor(x), dg.tensor(y)).numpy()
        ref = getattr(torch, name)(torch.tensor(x), torch.tensor(y)).numpy().astype(np.float32)
        np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("name,ref", [("exp", np.exp), ("tanh", np.tanh), ("erf", erf),
                                      ("sigmoid", lambda v: 1 / (1 + np.exp(-v)))])
def test_float32_transcendentals_are_accurate_to_a_few_ulp(name, ref):
    # the float32 kernels use vectorizable polynomials, not libm: hold them to float32 rounding
    x = np.concatenate([np.linspace(-20, 20, 20001), np.linspace(-1e-3, 1e-3, 2001)])
    x = x.astype(np.float32)
    got = getattr(dg, name)(dg.tensor(x)).numpy().astype(np.float64)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    tiny = np.abs(want) < np.finfo(np.float32).tiny
    ulp = np.abs(got - want)[~tiny] / np.spacing(np.abs(want[~tiny]).astype(np.float32))
    assert ulp.max() <= 4.0, f"{name}: {ulp.max():.1f} ulp"
    specials = getattr(dg, name)(dg.tensor([float("nan"), float("inf"), -float("inf")])).numpy()
    with np.errstate(all="ignore"):
        expected = ref(np.array([np.nan, np.inf, -np.inf]))
    np.testing.assert_array_equal(specials, expected.astype(np.float32))


@pytest.mark.parametrize("name,ref", [("log2", np.log2), ("log10", np.log10), ("exp2", np.exp2)])
def test_float32_log2_log10_exp2_are_accurate_and_exact_where_expected(name, ref):
    # vectorizable float32 forms (log's mantissa split, exp's polynomial): within 2 ulp over the
    # whole range, subnormals included; exact at powers of two (log2), of ten (log10, as far as
    # float32 holds them) and at integers (exp2); the special values as NumPy's
    if name == "exp2":
        x = np.concatenate([np.linspace(-160, 130, 200001), np.linspace(-1, 1, 20001)])
        exact = np.arange(-149, 128, dtype=np.float32)
    else:
        x = np.concatenate([np.geomspace(1e-45, 3e38, 100001), np.linspace(0.5, 2, 20001)])
        exact = (2.0 ** np.arange(-149, 128) if name == "log2" else 10.0 ** np.arange(-10, 11))
    got, want32, ulp = float32_ulps(name, ref, x)
    assert ulp.max() <= 2.0, f"{name}: {ulp.max():.2f} ulp"
    assert_rounds_like_float64(name, ref, exact)
    assert_rounds_like_float64(name, ref, [np.nan, np.inf, -np.inf, 0.0, -1.0, 200.0, -200.0])


@pytest.mark.parametrize("name,ref,low", [("expm1", np.expm1, -40.0), ("log1p", np.log1p, -1.0)])
def test_float32_expm1_and_log1p_are_accurate_to_a_few_ulp(name, ref, low):
    # vectorizable float32 forms as well, relatively accurate near 0 where exp(x) - 1 and
    # log(1 + x) would lose it; overflow to inf, log1p(-1) = -inf, below -1 nan
    x = np.concatenate([np.linspace(low, 88.0, 40001)[1:], np.linspace(-1e-3, 1e-3, 2001),
                        np.geomspace(1e-30, 1e30, 2001), -np.geomspace(1e-30, 0.99, 2001)])
    got, want32, ulp = float32_ulps(name, ref, x)
    assert ulp.max() <= 4.0, f"{name}: {ulp.max():.1f} ulp"
    np.testing.assert_array_equal(got[np.isinf(want32)], want32[np.isinf(want32)])
    assert_rounds_like_float64(name, ref, [np.nan, np.inf, -np.inf, -1.0, -2.0, 0.0])


@pytest.mark.parametrize("name,ref", [("sin", np.sin), ("cos", np.cos), ("tan", np.tan)])
def test_float32_sin_cos_tan_round_like_float64_and_take_libm_beyond_the_bound(name, ref):
    # the vectorized float64 evaluation up to 2^19 in magnitude rounds as the float64 reference
    # does (0.5 ulp); an array with any element beyond it (or inf) takes libm, within 1 ulp
    bound = 2.0 ** 19
    rng = np.random.default_rng(21)
    near_quarter_turns = np.arange(1, 300_000, 7) * (np.pi / 2)  # reduction's hard cases
    x = np.concatenate([rng.uniform(-bound, bound, 200_000), rng.uniform(-10, 10, 100_000),
                        near_quarter_turns, -near_quarter_turns, np.geomspace(1e-30, 1, 2001),
                        [bound, -bound]])
    got, want32, ulp = float32_ulps(name, ref, x)
    assert ulp.max() <= 0.5001, f"{name}: {ulp.max():.4f} ulp"
    beyond = np.concatenate([[3e5, -7.5, 0.25], np.geomspace(bound * 1.01, 3e38, 2001)])
    got, want32, ulp = float32_ulps(name, ref, beyond)
    assert ulp.max() <= 1.0, f"{name} beyond the bound: {ulp.max():.3f} ulp"
    assert_rounds_like_float64(name, ref, [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45])
    zeros = getattr(dg, name)(dg.tensor(np.array([0.0, -0.0], np.float32))).numpy()
    assert list(np.signbit(zeros)) == ([False, False] if name == "cos" else [False, True])
    # large (threaded), strided and in-place inputs, below and beyond the bound
    for scale in (100.0, 1e7):
        a = (rng.standard_normal((700, 400)) * scale).astype(np.float32)
        want = ref(a.astype(np.float64)).astype(np.float32)
        close = dict(rtol=1.2e-7, atol=1.5e-7)  # (tan is not bounded: relative for it)
        np.testing.assert_allclose(getattr(dg, name)(dg.tensor(a)).numpy(), want, **close)
        t = dg.tensor(a.T.copy()).t()
        np.testing.assert_allclose(getattr(t, name)().numpy(), want, **close)
        inplace = dg.tensor(a)
        getattr(inplace, name + "_")()
        np.testing.assert_allclose(inplace.numpy(), want, **close)


@pytest.mark.parametrize("name,ref,max_ulp,checkpoints", [
    # a vectorized float64 evaluation (two argument reductions, a fitted polynomial): the float64
    # reference rounded (0.5 ulp)
    ("atan", np.arctan, 0.5001, [np.sqrt(2) - 1, 1.0, np.sqrt(2) + 1]),
    # log1p of a cancellation-free argument, log(2|x|) from 2^12: within 2 ulp
    ("asinh", np.arcsinh, 2.0, [4095.99, 4096.0, 4096.01])])
def test_float32_odd_functions_are_accurate_over_the_whole_range(name, ref, max_ulp, checkpoints):
    # subnormal inputs exact, the sign of -0.0 kept, the special values as NumPy's
    x = np.concatenate([np.geomspace(1e-45, 3e38, 200_001), np.linspace(0, 10, 200_001),
                        checkpoints])
    x = np.concatenate([x, -x])
    got, want32, ulp = float32_ulps(name, ref, x)
    assert ulp.max() <= max_ulp, f"{name}: {ulp.max():.4f} ulp"
    tiny = np.abs(want32) < np.finfo(np.float32).tiny
    np.testing.assert_array_equal(got[tiny], want32[tiny])
    assert_rounds_like_float64(name, ref, [np.nan, np.inf, -np.inf, 0.0, -0.0])
    assert np.signbit(getattr(dg, name)(dg.tensor([-0.0])).numpy()[0])


def test_float32_sin_gradient_is_cos():
    x = np.linspace(-50, 50, 10001).astype(np.float32)
    t = dg.tensor(x, requires_grad=True)
    t.sin().sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.cos(x.astype(np.float64)), atol=1.5e-7)


_PORTABLE_MATH_PROBE = """
import json, math, numpy as np, dynagrad as dg
from dynagrad._runtime import cpu_target as _cpu_target
import dynagrad.nn.functional as F
assert not _cpu_target.compiles_for_avx512()
x = np.concatenate([np.linspace(-20, 20, 40001), [-103.5, -95.0, -88.0, 88.5, 89.0, 100.0]])
x = x.astype(np.float32)
x64 = x.astype(np.float64)
with np.errstate(all="ignore"):
    refs = {"exp": np.exp(x64), "tanh": np.tanh(x64), "erf": np.vectorize(math.erf)(x64),
            "gelu": 0.5 * x64 * np.vectorize(math.erfc)(-x64 / math.sqrt(2)),
            "sin": np.sin(x64), "cos": np.cos(x64)}
report = {}
for name, want in refs.items():
    t = dg.tensor(x)
    got = (F.gelu(t) if name == "gelu" else getattr(t, name)()).numpy().astype(np.float64)
    with np.errstate(over="ignore"):
        want32 = want.astype(np.float32)  # classes by float32: normal, subnormal or 0, inf
    normal = np.isfinite(want32) & (np.abs(want32) >= np.finfo(np.float32).tiny)
    tiny = np.isfinite(want32) & ~normal
    err = np.abs(got - want)[normal]
    report[name] = {"ulp": float((err / np.spacing(np.abs(want32[normal]))).max()),
                    "rel": float((err / np.abs(want[normal])).max()),
                    "subnormal": np.array_equal(got[tiny], want32[tiny]),
                    "inf": np.array_equal(got[np.isinf(want32)], want32[np.isinf(want32)])}
print(json.dumps(report))
"""


def test_float32_math_without_avx512_builds_powers_of_two_by_bits(tmp_path):
    # without AVX-512, ldexp is a libm call per element, so exp scales by bit-built powers of two
    # instead; that path must be as accurate, with the same subnormal results and overflow to inf
    import json
    import os
    import subprocess
    import sys
    env = {**os.environ, "NUMBA_CPU_NAME": "generic", "DYNAGRAD_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CPU_FEATURES", None)
    out = subprocess.run([sys.executable, "-c", _PORTABLE_MATH_PROBE], env=env, text=True,
                         capture_output=True, check=True).stdout
    report = json.loads(out)
    for name in ("exp", "tanh", "erf"):
        assert report[name]["ulp"] <= 4.0, (name, report[name])
    for name in ("sin", "cos"):
        assert report[name]["ulp"] <= 0.5001, (name, report[name])
    assert report["gelu"]["rel"] <= 1e-6, report["gelu"]  # what the AVX-512 path keeps, tails too
    assert report["exp"]["subnormal"] and report["exp"]["inf"], report["exp"]


def test_float32_gelu_matches_float64_reference():
    import dynagrad.nn.functional as F
    x = np.linspace(-10, 10, 20001).astype(np.float32)
    xt = dg.tensor(x, requires_grad=True)
    y = F.gelu(xt)
    y.backward(dg.ones_like(y))
    erfc = np.vectorize(math.erfc)
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * erfc(-x64 / math.sqrt(2))
    dwant = 0.5 * erfc(-x64 / math.sqrt(2)) + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    # |x| < 3: within ~8 ulp; the negative tail keeps its relative accuracy to ~1e-5 even at 1e-23
    # (set by the float32 rounding of x / sqrt(2)), where 1 + erf(x / sqrt(2)) would lose it all
    core = np.abs(x) < 3
    np.testing.assert_allclose(y.detach().numpy()[core], want[core], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(xt.grad.numpy(), dwant, rtol=1e-6, atol=2e-7)


_POW_FORMS = {2: lambda x: x * x, 3: lambda x: x * x * x, 0.5: np.sqrt,
              -0.5: lambda x: 1 / np.sqrt(x), -1: lambda x: 1 / x, -2: lambda x: 1 / (x * x)}


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 2.0, -1.0])
def test_float_to_a_common_python_power_takes_pytorchs_direct_form(exponent):
    # these exponents run as products, roots and reciprocals (as PyTorch computes them), each
    # rounding step for step: bit-identical to the direct forms, special values included
    x = np.array([-2.0, -0.0, 0.0, 0.3, 1.5, 7.0, np.inf, -np.inf, np.nan], np.float32)
    with np.errstate(all="ignore"):
        want = _POW_FORMS[exponent](x)
    got = (dg.tensor(x) ** exponent).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    base = np.array([0.4, 1.3, 2.5], np.float32)
    t = dg.tensor(base, requires_grad=True)
    dg.pow(t, exponent).sum().backward()
    b64 = base.astype(np.float64)
    np.testing.assert_allclose(t.grad.numpy(), exponent * b64 ** (exponent - 1), rtol=1e-6)


def test_float32_log_is_accurate_to_a_few_ulp_subnormals_included():
    # a vectorizable float32 form (libm's log keeps a loop scalar): subnormal inputs are scaled
    # into the normal range first; log(0) = -inf, negative inputs give nan
    x = np.concatenate([np.geomspace(1e-45, 3e38, 40001), np.linspace(0.5, 2.0, 40001),
                        [1.0, 2.0, 0.5, np.finfo(np.float32).tiny, np.finfo(np.float32).max]])
    x = x.astype(np.float32)
    got = dg.tensor(x).log().numpy().astype(np.float64)
    want = np.log(x.astype(np.float64))
    nonzero = want != 0
    ulp = np.abs(got - want)[nonzero] / np.spacing(np.abs(want[nonzero]).astype(np.float32))
    assert ulp.max() <= 2.0, f"log: {ulp.max():.1f} ulp"
    assert got[x == 1.0].tolist() == [0.0]  # exactly
    specials = np.array([0.0, -0.0, -1.0, -1e-40, np.inf, -np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(dg.tensor(specials).log().numpy(),
                                  [-np.inf, -np.inf, np.nan, np.nan, np.inf, np.nan, np.nan])


def test_float32_gelu_of_tiny_and_special_inputs():
    # tiny |x|: GELU(x) ~ x/2 (the scaled constants inside must not underflow first); the limits
    # at +-inf (PyTorch returns NaN for both); zeros keep their sign
    import dynagrad.nn.functional as F
    tiny = np.array([1e-30, -1e-30, 3e-38, -3e-38, 1e-40, -1e-40], np.float32)
    y = F.gelu(dg.tensor(tiny)).numpy()
    np.testing.assert_allclose(y[:4], tiny[:4].astype(np.float64) / 2, rtol=1e-6)
    np.testing.assert_array_equal(y[4:], (tiny[4:].astype(np.float64) / 2).astype(np.float32))
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, -30.0], np.float32)
    y = F.gelu(dg.tensor(special)).numpy()
    np.testing.assert_array_equal(y, [np.inf, 0.0, np.nan, 0.0, 0.0, 0.0])
    assert np.signbit(y).tolist() == [False, True, False, False, True, True]


def test_round_is_half_to_even_even_next_to_a_half():
    x = np.array([0.49999997, 0.5, 1.5, 2.5, -0.5, -2.5, 3.7], np.float32)
    np.testing.assert_array_equal(dg.tensor(x).round().numpy(), np.round(x))
    np.testing.assert_array_equal(dg.tensor(x.astype(np.float64)).round().numpy(),
                                  np.round(x.astype(np.float64)))
