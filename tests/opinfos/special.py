"""Records of the special functions (dynagrad/ops/special.py): the gamma family, error functions,
Bessel functions and orthogonal polynomials.

Each op runs in float32 and float64 on a (3, 4), a 0-d and a (1,) input from its domain, on a
transposed view (through the Tensor method where torch has one), and in float64 on the values
where it has poles or domain edges that torch defines (lgamma at negative non-integers and poles,
digamma at 0 and -0, erfinv at +-1, logit outside [0, 1], ...). Integer inputs (int64) give the
default float dtype. Binary ops broadcast and take Python numbers where torch does. References:
SciPy in float64 (SciPy computes each op, but the float32 results are checked against torch,
whose kernels are independent); the orthogonal polynomials against their three-term recurrences.
Gradients: finite differences in float64 and torch's, where torch has them; the ops without a
gradient in torch are not differentiable here either (tests/test_special.py checks that).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc
from opinfo import OpInfo, Sample, index, sampler, uniform

import dynagrad as dg

TOL = {"float32": (2e-6, 1e-6), "float64": (1e-12, 1e-12)}
TORCH_TOL = {"float32": (5e-5, 5e-6), "float64": (1e-9, 1e-12)}
GRAD_TOL = {"float64": (1e-8, 1e-10)}
DTYPES = {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}
FLOATS = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}


def float_result(dtype):
    """The output dtype: the input's float dtype, the default one for integer inputs."""
    return dtype if dtype.is_floating_point else dg.float32


def _record(name, ref, forward, grad, cuda, dtypes=DTYPES, **kw):
    fields = {"tol": TOL, "torch_tol": TORCH_TOL, "grad_tol": GRAD_TOL,
              "out_dtype": float_result}
    fields.update(kw)
    return OpInfo(name, "special", sampler(forward, grad, cuda), ref, dtypes, **fields)


def _cuda(lo, hi):
    return [Sample((uniform((2, 3), 11, lo, hi),))]


def unary(name, ref, domain, edges=(), ints=(1.0, 2.0, 3.0), grad_domain=None, method=True,
          **kw):
    """A unary op: ``domain`` (low, high) its inputs' range, ``edges`` the poles and domain
    edges torch defines (float64 only), ``ints`` whole numbers in its domain (the int64 sample),
    ``grad_domain`` where its gradient is checked (default: ``domain``)."""
    lo, hi = domain

    def forward(dtype):
        if not dtype.is_floating_point:
            return [Sample((np.array(ints),))]
        samples = [Sample((uniform(s, k, lo, hi),)) for k, s in enumerate([(3, 4), (), (1,)])]
        samples.append(Sample((uniform((4, 3), 7, lo, hi).T,), layout="T", method=method))
        if edges and dtype is dg.float64:
            samples.append(Sample((np.array(edges, dtype=np.float64),)))
        return samples
    glo, ghi = grad_domain or domain
    grad = [Sample((uniform((2, 3), seed, glo, ghi),)) for seed in (1, 9)]
    return _record(name, ref, forward, grad, _cuda(glo, ghi), **kw)


# torch's float64 Airy function and Bessel functions of the first and second kinds hold about
# 6 digits (SciPy's 15): compared with an absolute tolerance
BESSEL_TORCH_TOL = {"float32": (5e-5, 5e-6), "float64": (1e-5, 1e-6)}


def no_grad(name, ref, domain, edges=(), **kw):
    """A unary op torch gives no gradient (the Bessel functions): forward only."""
    return unary(name, ref, domain, edges, method=False, differentiable=False,
                 torch=f"special.{name}", **kw)


def binary(name, ref, dx, dy, edges=(), scalars=True, grads=(True, True), ints=True, **kw):
    """A binary op on (input, other): ``dx``, ``dy`` their domains. Operands broadcast, take a
    Python number (where ``scalars``); ``grads`` says which operand
    torch differentiates (the other is then a fixed tensor in the gradient samples)."""
    def draw(domain, shape, seed):
        return uniform(shape, seed, *domain)

    def forward(dtype):
        if not dtype.is_floating_point:
            return [Sample((np.array([1.0, 2.0, 3.0]), np.array([2.0, 1.0, 3.0])))]
        samples = [Sample((draw(dx, sx, k), draw(dy, sy, k + 5)))
                   for k, (sx, sy) in enumerate([((3, 4), (3, 4)), ((3, 1), (4,)), ((), (3,))])]
        samples.append(Sample((draw(dx, (4, 3), 3).T, draw(dy, (4, 3), 4).T), layout="T"))
        if scalars:
            samples += [Sample((draw(dx, (2, 3), 5), float(np.mean(dy)))),
                        Sample((float(np.mean(dx)), draw(dy, (2, 3), 6)))]
        if edges and dtype is dg.float64:
            samples.append(Sample(tuple(np.array(e, dtype=np.float64) for e in edges)))
        return samples

    def operand(k, domain, shape, seed, dtype=dg.float64):
        value = draw(domain, shape, seed)
        return value if grads[k] else dg.tensor(value, dtype=dtype)
    grad = [Sample((operand(0, dx, sx, seed), operand(1, dy, sy, seed + 1)))
            for seed, (sx, sy) in [(1, ((2, 3), (2, 3))), (3, ((2, 1), (3,)))]]
    cuda = [Sample((operand(0, dx, (2, 3), 11, dg.float32),
                    operand(1, dy, (3,), 12, dg.float32)))]
    return _record(name, ref, forward, grad, cuda, DTYPES if ints else FLOATS, **kw)


# --- the gamma family ---------------------------------------------------------------------------

def _lgamma(x):
    return np.where(x == -np.inf, np.inf, sc.gammaln(x))  # torch: lgamma(-inf) = +inf


def _either_order(fn):
    """``fn(n, x)`` called as ``polygamma(n, x)`` or as the method ``x.polygamma(n)``."""
    return lambda a, b: fn(a, b) if isinstance(a, int) else fn(b, a)


def _torch_polygamma(a, b):
    import torch
    return _either_order(torch.polygamma)(a, b)


def _polygamma():
    def forward(dtype):
        if not dtype.is_floating_point:
            return [Sample((1, np.array([1.0, 2.0, 3.0])))]
        x = uniform((3, 4), 1, 0.2, 4)
        samples = [Sample((n, x)) for n in (0, 1, 2, 3)]
        samples += [Sample((2, uniform((), 2, 0.2, 4))),
                    Sample((uniform((4, 3), 3, 0.2, 4).T, 1), layout="T", method=True),
                    Sample((1, -uniform((3,), 4, 0.1, 0.9) - np.array([0.0, 1.0, 2.0])))]
        return samples
    grad = [Sample((n, uniform((2, 3), 5 + n, 0.3, 3))) for n in (0, 1, 3)]
    return _record("polygamma", _either_order(sc.polygamma), forward, grad,
                   [Sample((1, uniform((2, 3), 11, 0.3, 3)))], torch=_torch_polygamma)


def _mvlgamma():
    def forward(dtype):
        if not dtype.is_floating_point:
            return [Sample((np.array([2.0, 3.0, 5.0]), 3))]
        return [Sample((uniform((3, 4), 1, 1.1, 5), 3)), Sample((uniform((), 2, 0.6, 5), 1)),
                Sample((uniform((4, 3), 3, 1.6, 5).T, 4), layout="T", method=True)]
    grad = [Sample((uniform((2, 3), seed, 1.2, 4), p)) for seed, p in ((1, 1), (2, 3))]
    return _record("mvlgamma", sc.multigammaln, forward, grad,
                   [Sample((uniform((2, 3), 11, 1.5, 4), 2))])


def _logit_ref(x, eps=None):
    if eps is not None and eps >= 0:
        x = np.where(x < eps, eps, np.where(x > 1 - eps, 1 - eps, x))
    return np.log(x / (1 - x))


def _logit():
    outside = np.array([-0.5, 0.0, 0.01, 0.5, 0.97, 1.0, 2.0])

    def forward(dtype):
        if not dtype.is_floating_point:
            return [Sample((np.array([0.0, 1.0, 2.0]),)), Sample((np.array([0.0, 1.0]), 0.25))]
        samples = [Sample((uniform((3, 4), 1, 0.02, 0.98),)),
                   Sample((uniform((), 2, 0.02, 0.98),)),
                   Sample((uniform((3, 4), 3, -0.2, 1.2), 0.05)),
                   Sample((uniform((4, 3), 4, 0.02, 0.98).T,), layout="T", method=True)]
        if dtype is dg.float64:
            samples += [Sample((outside,)), Sample((outside, 0.05)), Sample((outside, -0.1)),
                        Sample((outside, 0.7))]
        return samples
    grad = [Sample((uniform((2, 3), 1, 0.1, 0.9),)), Sample((uniform((2, 3), 2, 0.1, 0.9), 0.05)),
            # torch's values where the input is clamped, or outside [0, 1] (not differentiable
            # there: compared with torch only)
            Sample((np.array([-0.5, 0.01, 0.5, 0.99, 2.0]), 0.05), gradcheck=False),
            Sample((np.array([-0.5, 0.25, 2.0]),), gradcheck=False)]
    return _record("logit", _logit_ref, forward, grad, [Sample((uniform((2, 3), 11, 0.1, 0.9),))])


# --- the polynomials: references by their three-term recurrences --------------------------------

def _recurrence(p1, step, shift=False, limit=None):
    """The reference of an orthogonal polynomial (x, n) with torch's conventions (n truncated,
    0 below 0): ``p1(x)`` is P_1, ``step(k, x, P_(k-1), P_k)`` gives P_(k+1); P_0 = 1."""
    def ref(x, n):
        x, n = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(n, np.float64))
        out = np.empty(x.shape)
        for i in np.ndindex(x.shape):
            k, t = int(n[i]), (2 * x[i] - 1 if shift else x[i])
            if k < 0:
                out[i] = 0.0
                continue
            p, q = 1.0, p1(t)
            for j in range(1, k):
                p, q = q, step(j, t, p, q)
            out[i] = p if k == 0 else q
        return out
    return ref




def _chebyshev_step(j, x, p, q):  # (the same recurrence for every Chebyshev kind)
    return 2 * x * q - p


_POLYNOMIALS = {
    "chebyshev_polynomial_t": (lambda x: x, _chebyshev_step, False),
    "chebyshev_polynomial_u": (lambda x: 2 * x, _chebyshev_step, False),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, _chebyshev_step, False),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, _chebyshev_step, False),
    "shifted_chebyshev_polynomial_t": (lambda x: x, _chebyshev_step, True),
    "shifted_chebyshev_polynomial_u": (lambda x: 2 * x, _chebyshev_step, True),
    "shifted_chebyshev_polynomial_v": (lambda x: 2 * x - 1, _chebyshev_step, True),
    "shifted_chebyshev_polynomial_w": (lambda x: 2 * x + 1, _chebyshev_step, True),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda j, x, p, q: 2 * x * q - 2 * j * p, False),
    "hermite_polynomial_he": (lambda x: x, lambda j, x, p, q: x * q - j * p, False),
    "laguerre_polynomial_l": (lambda x: 1 - x,
                              lambda j, x, p, q: ((2 * j + 1 - x) * q - j * p) / (j + 1), False),
    "legendre_polynomial_p": (lambda x: x,
                              lambda j, x, p, q: ((2 * j + 1) * x * q - j * p) / (j + 1), False),
}


def polynomial(name):
    """An orthogonal polynomial ``(input, n)``: degrees 0 to 10 (torch switches to a closed form
    above 6 or 8), ``n`` a Python int, an int64 tensor, a float tensor (truncated), negative (0),
    and ``x`` a Python number; x at the interval's ends +-1 (shifted: 0 and 1)."""
    p1, step, shift = _POLYNOMIALS[name]
    lo, hi = (-0.2, 1.2) if shift else (-1.2, 1.2)
    ends = [0.0, 1.0] if shift else [-1.0, 1.0]

    def forward(dtype):
        if not dtype.is_floating_point:
            return [Sample((np.array([0.0, 1.0, 2.0]), 3)),
                    Sample((np.array([1.0, 2.0, 3.0]), index([0, 2, 4])))]
        x = uniform((3, 4), 1, lo, hi)
        return [Sample((x, n)) for n in (0, 1, 2, 5, 10, -1)] + [
            Sample((x, index([[0], [3], [9]]))),
            Sample((uniform((2, 3), 2, lo, hi), np.array([0.0, 2.7, 7.2]))),
            Sample((np.array(ends * 3), index([0, 0, 3, 3, 10, 10])))] + (
            # a Python number for x: the result takes the default dtype
            [Sample((0.75, index([0, 1, 4, 9])))] if dtype is dg.float32 else [])
    return _record(name, _recurrence(p1, step, shift), forward, [],
                   [Sample((uniform((2, 3), 11, lo, hi), 3))], differentiable=False,
                   torch=f"special.{name}", tol={"float32": (1e-5, 1e-5),
                                                 "float64": (1e-10, 1e-10)},
                   torch_tol={"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-10)})


_INF, _NAN = np.inf, np.nan

RECORDS = [
    unary("lgamma", _lgamma, (0.1, 5), ints=(1.0, 2.0, 5.0), grad_domain=(0.3, 4),
          edges=(0.0, -0.0, -1.0, -2.0, -1.5, -2.5, -3.7, 1e-30, _INF, -_INF, _NAN)),
    unary("digamma", sc.psi, (0.1, 5), ints=(1.0, 2.0, 5.0), grad_domain=(0.3, 4),
          edges=(0.0, -0.0, -1.0, -2.0, -1.5, -2.5, 1e-30, _INF, _NAN)),
    _polygamma(),
    _mvlgamma(),
    binary("igamma", sc.gammainc, (0.5, 3), (0.1, 4), scalars=False, grads=(False, True),
           ints=False, edges=([0.0, 1.0, 1.0, 2.0, _INF, 2.0], [1.0, 0.0, -1.0, _INF, 1.0, 0.0])),
    binary("igammac", sc.gammaincc, (0.5, 3), (0.1, 4), scalars=False, grads=(False, True),
           ints=False, edges=([0.0, 1.0, 1.0, 2.0, _INF, 2.0], [1.0, 0.0, -1.0, _INF, 1.0, 0.0])),
    unary("erfinv", sc.erfinv, (-0.95, 0.95), ints=(0.0, 1.0, -1.0),
          edges=(-1.0, 1.0, 1.5, -1.5, 0.0, 0.999, -0.999999)),
    unary("erfc", sc.erfc, (-3, 3), ints=(-1.0, 0.0, 2.0), edges=(-30.0, 30.0, _INF, -_INF)),
    unary("i0", sc.i0, (-4, 4), ints=(-2.0, 0.0, 3.0), edges=(0.0, 100.0, 800.0, -_INF)),
    binary("xlogy", sc.xlogy, (-3, 3), (0.1, 3), torch="xlogy",
           edges=([0.0, 0.0, 0.0, 1.0, 2.0, _NAN, 0.0], [0.0, -1.0, _NAN, 0.0, -1.0, 1.0, 2.0])),
    _logit(),
    unary("sinc", np.sinc, (-3, 3), ints=(0.0, 1.0, -2.0), edges=(0.0, 1e-20, -0.5, _INF)),
    # torch.special only
    unary("erfcx", sc.erfcx, (-2, 3), method=False, torch="special.erfcx",
          edges=(-30.0, 0.0, 1e5, _INF, -_INF)),
    unary("ndtr", sc.ndtr, (-3, 3), method=False, torch="special.ndtr",
          edges=(-40.0, 0.0, 40.0, _INF, -_INF)),
    unary("ndtri", sc.ndtri, (0.05, 0.95), method=False, torch="special.ndtri",
          ints=(0.0, 1.0, 2.0), edges=(0.0, 1.0, -0.1, 1.1, 1e-300)),
    unary("log_ndtr", sc.log_ndtr, (-10, 5), method=False, torch="special.log_ndtr",
          edges=(-40.0, 40.0, -_INF, _INF)),
    unary("entr", sc.entr, (0.05, 3), method=False, torch="special.entr", ints=(0.0, 1.0, 3.0),
          edges=(0.0, -1.0, _INF)),
    binary("xlog1py", sc.xlog1py, (-3, 3), (-0.9, 3), torch="special.xlog1py",
           edges=([0.0, 0.0, 0.0, 1.0, 2.0, _NAN, 0.0], [-1.0, -2.0, _NAN, -1.0, -2.0, 1.0, 2.0])),
    binary("zeta", sc.zeta, (1.5, 4), (0.5, 3), grads=(False, True), torch="special.zeta",
           edges=([1.0, 2.0, 0.5, 3.0, 2.0], [1.0, 0.0, 1.0, -1.5, -2.0])),
    unary("i0e", sc.i0e, (-4, 4), method=False, torch="special.i0e", edges=(0.0, 800.0)),
    unary("i1", sc.i1, (-4, 4), method=False, torch="special.i1", ints=(-1.0, 0.0, 2.0),
          edges=(0.0, -700.0)),
    unary("i1e", sc.i1e, (-4, 4), method=False, torch="special.i1e", ints=(-1.0, 0.0, 2.0),
          edges=(0.0, -800.0)),
    no_grad("airy_ai", lambda x: sc.airy(x)[0], (-5, 3), edges=(-_INF, _INF, 0.0, 100.0),
            torch_tol=BESSEL_TORCH_TOL),
    no_grad("bessel_j0", sc.j0, (-10, 10), edges=(0.0, _INF, 1e10), torch_tol=BESSEL_TORCH_TOL),
    no_grad("bessel_j1", sc.j1, (-10, 10), edges=(0.0, _INF, -1e10), torch_tol=BESSEL_TORCH_TOL),
    no_grad("bessel_y0", sc.y0, (0.1, 10), edges=(0.0, -1.0, _INF), torch_tol=BESSEL_TORCH_TOL),
    no_grad("bessel_y1", sc.y1, (0.1, 10), edges=(0.0, -1.0, _INF), torch_tol=BESSEL_TORCH_TOL),
    no_grad("modified_bessel_i0", sc.i0, (-4, 4), edges=(0.0, 100.0)),
    no_grad("modified_bessel_i1", sc.i1, (-4, 4), edges=(0.0, -100.0)),
    no_grad("modified_bessel_k0", sc.k0, (0.1, 5), edges=(0.0, -1.0, _INF)),
    no_grad("modified_bessel_k1", sc.k1, (0.1, 5), edges=(0.0, -1.0, _INF)),
    no_grad("scaled_modified_bessel_k0", sc.k0e, (0.1, 5), edges=(0.0, -1.0, 1e3)),
    no_grad("scaled_modified_bessel_k1", sc.k1e, (0.1, 5), edges=(0.0, -1.0, 1e3)),
    no_grad("spherical_bessel_j0", lambda x: sc.spherical_jn(0, x), (-10, 10),
            edges=(0.0, 1e-10, _INF)),
    *[polynomial(name) for name in _POLYNOMIALS],
]
