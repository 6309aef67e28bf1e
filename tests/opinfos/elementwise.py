"""Records of the elementwise ops: unary and binary math, comparisons, logical and bitwise ops, the
ops of special signatures (clamp, lerp, where, ...) and their aliases.

Unary ops run in float32 and float64 on a (3, 4), a 0-d and a (1,) input and, as a Tensor method,
on a transposed view; binary ops on same-shape and broadcasting operands, 0-d ones, and a
transposed view with a Python scalar. Gradients: finite differences in float64 on small inputs
(broadcasting ones reduce the gradient back), compared with torch's as well.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

import dynagrad as dg
from opinfo import OpInfo, Sample, alias, integers, mask, sampler, signed, uniform

erf = np.vectorize(math.erf)  # (NumPy has none)

TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}
TORCH_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-12)}
GRAD_TOL = {"float64": (1e-9, 1e-12)}
FLOATS = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}
F32 = {"cpu": (dg.float32,), "cuda": (dg.float32,)}
F64 = {"cpu": (dg.float64,), "cuda": (dg.float32,)}


def away_from_zero(x):
    """A domain: values at least 0.2 from 0 (where the op or its gradient has a pole or kink)."""
    return np.sign(x + 1e-12) * (0.2 + np.abs(x))


def draw(domain, shape, rng):
    """Inputs from ``domain``: (low, high), "int" (whole numbers from -2 to 2) or a transform of
    uniform values from [-3, 3)."""
    if domain == "int":
        return np.asarray(rng.integers(-2, 3, size=shape), np.float64)
    if callable(domain):
        return np.asarray(domain(rng.uniform(-3, 3, size=shape)))
    lo, hi = domain
    return np.asarray(rng.uniform(lo, hi, size=shape))


def _record(name, ref, sampler, dtypes=FLOATS, **kw):
    """An elementwise record, with the family's tolerances unless ``kw`` sets others."""
    fields = dict(tol=TOL, torch_tol=TORCH_TOL, grad_tol=GRAD_TOL)
    fields.update(kw)
    return OpInfo(name, "elementwise", sampler, ref, dtypes, **fields)


def unary(name, ref, domain):
    """A unary op: ``ref`` its float64 reference, ``domain`` where its inputs come from."""
    rng = np.random.default_rng(0)
    forward = [Sample((draw(domain, shape, rng),)) for shape in [(3, 4), (), (1,)]]
    # a transposed view, through the Tensor method
    forward.append(Sample((draw(domain, (4, 3), rng).T,), layout="T", method=True))
    grad = [Sample((draw(domain, (2, 3), np.random.default_rng(seed)),)) for seed in (1, 9)]
    return _record(name, ref, sampler(forward, grad, [Sample((signed((2, 3)),))]))


BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)), ((3,), ())]
BINARY_GRAD_SHAPES = [((2, 3), (2, 3)), ((2, 1), (3,))]  # broadcasting reduces the gradient back


def binary(name, ref, dx, dy, cuda=None, **kw):
    """A binary op: ``ref`` its float64 reference, ``dx`` and ``dy`` its operands' domains;
    ``cuda`` the CUDA sample's operands (default: values away from 0, the second a row)."""
    rng = np.random.default_rng(2)
    forward = [Sample((draw(dx, sx, rng), draw(dy, sy, rng))) for sx, sy in BINARY_SHAPES]
    # a transposed view and a Python scalar
    forward.append(Sample((draw(dx, (4, 3), rng).T, float(draw(dy, (), rng))), layout="T"))
    rng = np.random.default_rng(3)
    grad = [Sample((draw(dx, sx, rng), draw(dy, sy, rng))) for sx, sy in BINARY_GRAD_SHAPES]
    grad.append(Sample((draw(dx, (2, 3), rng), 1.5)))
    rng = np.random.default_rng(9)
    grad.append(Sample((draw(dx, (2, 3), rng), draw(dy, (3,), rng))))
    cuda = [Sample(cuda or (signed((2, 3)), signed((3,), 1)))]
    return _record(name, ref, sampler(forward, grad, cuda), **kw)


def _scalar_as_tensor(name):
    """torch's ``name``, which wants a tensor where our samples pass a Python scalar."""
    def fn(x, y):
        import torch
        return getattr(torch, name)(x, y if isinstance(y, torch.Tensor) else
                                    torch.tensor(y, dtype=x.dtype))
    return fn


UNARY = [
    unary("exp", np.exp, (-3, 3)),
    unary("exp2", np.exp2, (-3, 3)),
    unary("expm1", np.expm1, (-3, 3)),
    unary("log", np.log, (0.1, 3)),
    unary("log2", np.log2, (0.1, 3)),
    unary("log10", np.log10, (0.1, 3)),
    unary("log1p", np.log1p, (-0.5, 3)),
    unary("sqrt", np.sqrt, (0.1, 3)),
    unary("rsqrt", lambda x: 1 / np.sqrt(x), (0.1, 3)),
    unary("sin", np.sin, (-3, 3)),
    unary("cos", np.cos, (-3, 3)),
    unary("tan", np.tan, (-1.2, 1.2)),
    unary("asin", np.arcsin, (-0.9, 0.9)),
    unary("acos", np.arccos, (-0.9, 0.9)),
    unary("atan", np.arctan, (-3, 3)),
    unary("asinh", np.arcsinh, (-3, 3)),
    unary("sinh", np.sinh, (-3, 3)),
    unary("cosh", np.cosh, (-3, 3)),
    unary("tanh", np.tanh, (-3, 3)),
    unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-5, 5)),
    unary("erf", erf, (-2, 2)),
    unary("reciprocal", lambda x: 1 / x, away_from_zero),
    unary("neg", np.negative, (-3, 3)),
    unary("abs", np.abs, away_from_zero),
    unary("sign", np.sign, (-3, 3)),
    unary("floor", np.floor, (-3, 3)),
    unary("ceil", np.ceil, (-3, 3)),
    unary("trunc", np.trunc, (-3, 3)),
    unary("round", np.round, (-3, 3)),
    unary("frac", lambda x: x - np.trunc(x), (-3, 3)),
    unary("relu", lambda x: np.maximum(x, 0), away_from_zero),
]

BINARY = [
    binary("add", np.add, (-3, 3), (-3, 3)),
    binary("sub", np.subtract, (-3, 3), (-3, 3)),
    binary("mul", np.multiply, (-3, 3), (-3, 3)),
    binary("div", np.divide, (-3, 3), away_from_zero),
    binary("floor_divide", np.floor_divide, (-5, 5), away_from_zero, differentiable=False,
           cuda=(integers((2, 3)), integers((3,), 1, low=1)),
           dtypes={"cpu": (dg.float32, dg.float64), "cuda": (dg.int64,)}),
    binary("remainder", np.mod, (-5, 5), away_from_zero),
    binary("fmod", np.fmod, (-5, 5), away_from_zero),
    binary("pow", np.power, (0.5, 2), (-2, 2), cuda=(uniform((2, 3), 0, 0.5, 2.0), signed((3,)))),
    binary("maximum", np.maximum, (-3, 3), (-3, 3), torch=_scalar_as_tensor("maximum")),
    binary("minimum", np.minimum, (-3, 3), (-3, 3), torch=_scalar_as_tensor("minimum")),
    binary("atan2", np.arctan2, (-3, 3), away_from_zero, torch=_scalar_as_tensor("atan2")),
    binary("eq", np.equal, "int", "int", differentiable=False),
    binary("ne", np.not_equal, "int", "int", differentiable=False),
    binary("lt", np.less, (-3, 3), (-3, 3), differentiable=False),
    binary("le", np.less_equal, "int", "int", differentiable=False),
    binary("gt", np.greater, (-3, 3), (-3, 3), differentiable=False),
    binary("ge", np.greater_equal, "int", "int", differentiable=False),
]


def logical(name, ref):
    """A logical op: an integer input with a broadcasting bool mask (on CUDA: two float inputs)."""
    rng = np.random.default_rng(4)
    forward = [Sample((rng.integers(0, 2, (3, 4)).astype(float), mask(rng.integers(0, 2, 4))))]
    cuda = [Sample((signed((2, 3)), signed((3,), 1)))]
    return _record(name, ref, sampler(forward, cuda=cuda),
                   {"cpu": (dg.int64,), "cuda": (dg.float32,)}, differentiable=False)


def bitwise(name, ref):
    """A bitwise op on int64 operands, the second broadcasting."""
    rng = np.random.default_rng(5)
    forward = [Sample((rng.integers(0, 64, (3, 4)).astype(float),
                       rng.integers(0, 4, (4,)).astype(float)))]
    cuda = [Sample((integers((2, 3), low=0), integers((3,), 1, low=0, high=3)))]
    return _record(name, ref, sampler(forward, cuda=cuda),
                   {"cpu": (dg.int64,), "cuda": (dg.int64,)}, differentiable=False)


LOGICAL = [logical("logical_and", np.logical_and), logical("logical_or", np.logical_or),
           logical("logical_xor", np.logical_xor)]
BITWISE = [bitwise("bitwise_and", np.bitwise_and), bitwise("bitwise_or", np.bitwise_or),
           bitwise("bitwise_xor", np.bitwise_xor),
           bitwise("bitwise_left_shift", np.left_shift),
           bitwise("bitwise_right_shift", np.right_shift)]


_SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf])


def _others():
    """The ops of special signatures (their special cases are tested in test_elementwise.py), in
    the dtypes those tests compile."""
    rng = np.random.default_rng(6)
    x, lo = uniform((3, 4), 6), rng.uniform(-2, 0, (4,))
    a, b, w = (uniform((2, 3), 7 + k, -2, 2) for k in range(3))
    c = mask(a > 0)
    cuda = [Sample((signed((2, 3)),))]
    cuda2 = [Sample((signed((2, 3)), signed((3,), 1)))]
    return [
        _record("clamp", lambda x, min=None, max=None: np.clip(x, min, max), sampler(
            {dg.float64: [Sample((x, -1.0, 0.5)), Sample((x,), {"min": 0.0})],
             dg.int64: [Sample((np.array([1.0, 5.0, 9.0]), 2, 6))]},
            grad=[Sample((x, -1.0, 0.5)), Sample((x,), {"min": lo})],
            cuda=[Sample((signed((2, 3)), -0.5, 0.5))]),
            {"cpu": (dg.float64, dg.int64), "cuda": (dg.float32,)}),
        # the default limits are the dtype's: torch is the oracle
        _record("nan_to_num", None, sampler(
            [Sample((_SPECIAL,)), Sample((_SPECIAL,), {"nan": 2.0, "posinf": 3.0,
                                                       "neginf": -3.0})],
            grad=[Sample((np.array([1.0, -2.5, 2.0]),))], cuda=cuda)),
        _record("lerp", lambda a, b, w: a + w * (b - a), sampler(
            [Sample((a, b, w)), Sample((a, b, 0.75))], grad=[Sample((a, b, w))],
            cuda=[Sample((signed((2, 3)), signed((2, 3), 1), 0.3))]), F64),
        _record("where", np.where, sampler(
            {dg.float32: [Sample((c, a, 0.0))], dg.float64: [Sample((c, a, b))]},
            grad=[Sample((c, a, b))],
            cuda=[Sample((mask(signed((2, 3), 2) > 0), signed((2, 3)), signed((3,), 1)))]),
            torch="where"),
        _record("isnan", np.isnan, sampler([Sample((_SPECIAL,))], cuda=cuda), F32,
                differentiable=False),
        _record("isinf", np.isinf, sampler([Sample((_SPECIAL,))], cuda=cuda), F32,
                differentiable=False),
        _record("isfinite", np.isfinite, sampler(
            {dg.float32: [Sample((_SPECIAL,))], dg.int64: [Sample((np.array([1.0, 2.0]),))]},
            cuda=cuda), {"cpu": (dg.float32, dg.int64), "cuda": (dg.float32,)},
            differentiable=False),
        _record("logical_not", np.logical_not, sampler(
            [Sample((np.random.default_rng(4).integers(0, 2, (3, 4)).astype(float),))],
            cuda=cuda), {"cpu": (dg.int64,), "cuda": (dg.float32,)}, differentiable=False),
        _record("bitwise_not", np.invert, sampler(
            {dg.int64: [Sample((np.array([0.0, 5.0, -3.0]),))],
             dg.bool: [Sample((np.array([1.0, 0.0]),))]},
            cuda=[Sample((integers((2, 3)),))]),
            {"cpu": (dg.int64, dg.bool), "cuda": (dg.int64,)}, differentiable=False),
        _record("float_power", np.float_power, sampler(
            {dg.int64: [Sample((np.array([2.0, 3.0]), 2))],
             dg.float64: [Sample((uniform((2, 3), 3, 0.5, 2), uniform((2, 3), 4, -2, 2)))]},
            grad=[Sample((uniform((2, 3), 3, 0.5, 2), uniform((2, 3), 4, -2, 2)))],
            cuda=[Sample((uniform((2, 3), 0, 0.5, 2.0), signed((3,))))]),
            {"cpu": (dg.int64, dg.float64), "cuda": (dg.float32,)},
            out_dtype=lambda dtype: dg.float64),
        _record("square", lambda x: x * x, sampler(
            [Sample((a,))], grad=[Sample((a,))], cuda=cuda), F64, check_inplace=True),
        _record("rsub", lambda x, y: y - x, sampler(
            [Sample((np.array([1.0, 2.0]), 5.0))], grad=[Sample((a, 5.0))], cuda=cuda2),
            torch="rsub"),
    ]


OTHERS = _others()
_BY_NAME = {info.name: info for info in UNARY + BINARY + OTHERS}

ALIASES = {"multiply": "mul", "subtract": "sub", "divide": "div", "true_divide": "div",
           "negative": "neg", "absolute": "abs", "greater": "gt", "greater_equal": "ge",
           "less": "lt", "less_equal": "le", "not_equal": "ne", "arcsin": "asin",
           "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "fix": "trunc", "clip": "clamp"}

RECORDS = UNARY + BINARY + LOGICAL + BITWISE + OTHERS + [
    alias(name, _BY_NAME[target], torch=_scalar_as_tensor(name) if target == "atan2" else "")
    for name, target in ALIASES.items()]


# --- issue 26: more of torch's pointwise functions ------------------------------------------

def _inplace_unary(name, ref, domain):
    """``unary``'s record, with the in-place variant run on every sample too."""
    return replace(unary(name, ref, domain), check_inplace=True)


def _pair(dx, dy, shapes=((3, 4), (4,)), seed=10):
    """Two operands from ``dx`` and ``dy``, the second broadcasting to the first's shape (so the
    in-place variant applies)."""
    rng = np.random.default_rng(seed)
    return draw(dx, shapes[0], rng), draw(dy, shapes[1], rng)


def _torch_tensors(name, *, method=False):
    """torch's ``name``, which wants tensors where our samples pass Python scalars."""
    def fn(x, *args, **kwargs):
        import torch
        args = [a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=x.dtype)
                for a in args]
        return getattr(x, name)(*args, **kwargs) if method else \
            getattr(torch, name)(x, *args, **kwargs)
    return fn


MORE_UNARY = [
    _inplace_unary("acosh", np.arccosh, (1.1, 4)),
    _inplace_unary("atanh", np.arctanh, (-0.9, 0.9)),
    _inplace_unary("deg2rad", np.deg2rad, (-200, 200)),
    _inplace_unary("rad2deg", np.rad2deg, (-3, 3)),
]

MORE_BINARY = [
    binary("hypot", np.hypot, away_from_zero, away_from_zero, torch=_torch_tensors("hypot")),
    binary("logaddexp", np.logaddexp, (-3, 3), (-3, 3), torch=_torch_tensors("logaddexp")),
    binary("logaddexp2", np.logaddexp2, (-3, 3), (-3, 3), torch=_torch_tensors("logaddexp2")),
    binary("copysign", np.copysign, away_from_zero, away_from_zero),
    binary("fmax", np.fmax, (-3, 3), (-3, 3), torch=_torch_tensors("fmax")),
    binary("fmin", np.fmin, (-3, 3), (-3, 3), torch=_torch_tensors("fmin")),
]


def _more_others():
    """The new ops of special signatures or dtypes (their special values are tested in
    test_elementwise_more.py)."""
    x, y = _pair((-3, 3), (-3, 3))
    xi, yi = _pair("int", "int", seed=11)
    pos = _pair((-40, 40), (1, 30), seed=12)
    cuda = [Sample((signed((2, 3)),))]
    cuda2 = [Sample((signed((2, 3)), signed((3,), 1)))]
    ints = {"cpu": (dg.int64,), "cuda": (dg.int64,)}
    a, b, c = (uniform((2, 3), 20 + k, -2, 2) for k in range(3))
    away = away_from_zero(uniform((2, 3), 23))
    special = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan])
    whole = np.array([-2.0, 0.0, 3.0])
    sign_tests = {"cpu": (dg.float32, dg.int64), "cuda": (dg.float32,)}
    return [
        _record("isposinf", np.isposinf, sampler(
            {dg.float32: [Sample((special,))], dg.int64: [Sample((whole,))]},
            cuda=cuda), sign_tests, differentiable=False),
        _record("isneginf", np.isneginf, sampler(
            {dg.float32: [Sample((special,))], dg.int64: [Sample((whole,))]},
            cuda=cuda), sign_tests, differentiable=False),
        _record("signbit", np.signbit, sampler(
            {dg.float32: [Sample((special,)), Sample((-special,))],
             dg.int64: [Sample((whole,))]}, cuda=cuda), sign_tests,
            differentiable=False),
        _record("heaviside", np.heaviside, sampler(
            [Sample((xi, yi)), Sample((xi, np.array(0.5)))],
            cuda=[Sample((integers((2, 3)), integers((3,), 1)))]),
            {"cpu": (dg.float32, dg.int64), "cuda": (dg.int64,)}, differentiable=False,
            check_inplace=True, out_dtype=lambda dtype: dtype),
        _record("nextafter", np.nextafter, sampler(
            [Sample((x, y)), Sample((x, x[:1]))], cuda=cuda2), F64, differentiable=False,
            check_inplace=True, tol={}, torch_tol={}),
        _record("gcd", np.gcd, sampler([Sample(pos)], cuda=[Sample(pos)]), ints,
                differentiable=False, check_inplace=True),
        _record("lcm", np.lcm, sampler([Sample(pos)], cuda=[Sample(pos)]), ints,
                differentiable=False, check_inplace=True),
        _record("frexp", lambda v: list(np.frexp(v)), sampler(
            [Sample((special,)), Sample((x,))], grad=[Sample((a,))], cuda=cuda), tol={},
            torch_tol={}),
        _record("ldexp", lambda v, e: v * 2.0 ** e, sampler(
            [Sample((x, y)), Sample((x, np.arange(-2, 2)))], grad=[Sample((a, b))],
            cuda=cuda2), check_inplace=True),
        _record("positive", lambda v: v, sampler(
            [Sample((x,)), Sample((x,), method=True)], grad=[Sample((a,))], cuda=cuda),
            {"cpu": (dg.float32, dg.int64), "cuda": (dg.float32,)}),
        _record("clamp_min", np.maximum, sampler(
            [Sample((x, 0.5)), Sample((x, y))], grad=[Sample((a, 0.5)), Sample((a, b))],
            cuda=cuda2), F64, check_inplace=True, torch=_torch_tensors("clamp_min")),
        _record("clamp_max", np.minimum, sampler(
            [Sample((x, 0.5)), Sample((x, y))], grad=[Sample((a, 0.5)), Sample((a, b))],
            cuda=cuda2), F64, check_inplace=True, torch=_torch_tensors("clamp_max")),
        _record("addcmul", lambda i, t1, t2, value=1: i + value * t1 * t2, sampler(
            [Sample((x, x, y)), Sample((x, y, x[:1]), {"value": 0.5})],
            grad=[Sample((a, b, c), {"value": -2.0})],
            cuda=[Sample((signed((2, 3)), signed((3,), 1), signed((2, 3), 2)), {"value": 2.0})]),
            check_inplace=True),
        _record("addcdiv", lambda i, t1, t2, value=1: i + value * t1 / t2, sampler(
            [Sample((x, x, away_from_zero(y))), Sample((x, y, away_from_zero(x)),
                                                       {"value": 0.5})],
            grad=[Sample((a, b, away), {"value": -2.0})],
            cuda=[Sample((signed((2, 3)), signed((3,), 1), signed((2, 3), 2)), {"value": 2.0})]),
            check_inplace=True),
        _record("isclose", np.isclose, sampler(
            {dg.float32: [Sample((x, x + 1e-6)), Sample((x, x + y * 1e-5), {"rtol": 0.0})],
             dg.float64: [Sample((special, special[::-1].copy()), {"equal_nan": True}),
                          Sample((x, x + 1e-3), {"rtol": 1e-3, "atol": 1e-4})],
             dg.int64: [Sample((xi, yi), {"atol": 1.0})]}, cuda=cuda2),
            {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)},
            differentiable=False),
        _record("allclose", lambda u, v, **kw: np.array(np.allclose(u, v, **kw)), sampler(
            [Sample((x, x + 1e-7)), Sample((x, x + 1e-3)), Sample((x, y[:1]), {"atol": 10.0})],
            cuda=cuda2), F32,
            op=lambda u, v, **kw: dg.tensor(dg.allclose(u, v, **kw), device=u.device),
            torch=lambda *args, **kw: __import__("torch").tensor(
                __import__("torch").allclose(*args, **kw)), differentiable=False),
        _record("equal", lambda u, v: np.array(u.shape == v.shape and (u == v).all()), sampler(
            [Sample((x, x)), Sample((x, y)), Sample((x, x[:2]))], cuda=cuda2), F32,
            op=lambda u, v: dg.tensor(dg.equal(u, v), device=u.device),
            torch=lambda *args: __import__("torch").tensor(__import__("torch").equal(*args)),
            differentiable=False),
    ]


MORE_OTHERS = _more_others()
_BY_NAME.update({info.name: info for info in MORE_UNARY + MORE_BINARY})
MORE_ALIASES = {"arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh"}

RECORDS += MORE_UNARY + MORE_BINARY + MORE_OTHERS + [
    alias(name, _BY_NAME[target]) for name, target in MORE_ALIASES.items()]
