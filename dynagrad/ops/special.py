"""Special functions: the gamma family, error functions, Bessel functions and orthogonal
polynomials, each computed by one vectorised SciPy (``scipy.special``) or NumPy call on the host
buffer.

One mechanism serves every op: a ``Special`` row of the table below names the op, its host
function, PyTorch's parameters, and one gradient formula per tensor parameter, written with
dynagrad ops (so gradients of gradients and every device work). ``_run`` applies a row: torch's
dtype rule (integer and bool inputs give the default float dtype; tensors and Python numbers
promote as in ``result_type``), broadcasting, the host call in the compute dtype (float32 stays
float32, float16 computes in float32), and the graph node. The registry then attaches
``dg.<name>``, ``Tensor.<name>`` and ``Tensor.<name>_`` where PyTorch has them; the names only
``torch.special`` has are reached through ``dg.special``.

CUDA tensors take a host round trip: their values are copied to the host, computed there by SciPy
and the result copied back to the device (these functions are not on any training hot path).

Gradients exist exactly where PyTorch defines them. A row without formulas (the Bessel functions,
the polynomials) gives a result that does not require grad, as torch's; a formula PyTorch lacks
(``igamma`` with respect to its first argument, ``zeta`` with respect to ``x``) raises
NotImplementedError when backward reaches it, as torch's does.

Values follow torch's wherever torch defines them (digamma(0) = -inf, digamma(-0) = inf, lgamma
at the poles and at -inf = inf, erfinv(+-1) = +-inf, logit outside [0, 1] = nan, the polynomials'
rules for negative and fractional degrees); float64 results carry SciPy's accuracy, which is
better than torch's for the Airy and Bessel J and Y functions. Two deliberate differences:
polygamma(n >= 1) at the poles (non-positive integers) is inf where torch's series gives large
finite values, and at +-inf it is SciPy's value (0 at +inf) where torch gives nan.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([0.5, 3.0], requires_grad=True)
    >>> y = dg.lgamma(x); y.sum().backward()
    >>> [round(v, 4) for v in y.tolist()], [round(v, 4) for v in x.grad.tolist()]
    ([0.5724, 0.6931], [-1.9635, 0.9228])
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..dtypes import result_type
from ..errors import describe
from ..kernels.buffers import host, move_array
from ..shapes import broadcast_shapes
from ..tensor import Tensor, _wrap
from .elementwise import logical_and, logical_or, rebase_inplace, sum_to, where
from .placement import common_device, like
from .registry import REGISTRY, register, tensor_method


@dataclass(frozen=True, eq=False)
class Special:
    """One special-function op.

    ``host(*operands, **params)`` computes the values from NumPy arrays (or NumPy scalars) in the
    compute dtype (a string names a ``scipy.special`` function); its result may be wider and is
    cast back. ``signature`` lists torch's
    parameters (``"n, input"``, ``"input, eps=None"``); ``tensors`` those that are tensors, the
    others are ``params`` checked by ``check(name, **params)``. ``grads`` holds one formula
    ``f(g, *operands, **params)`` per tensor parameter (None: not differentiable); empty, the
    result never requires grad. ``torch_level``: PyTorch has ``torch.<name>``, ``Tensor.<name>``
    and ``Tensor.<name>_`` (else only ``torch.special.<name>``). ``scalars``: Python numbers may
    stand for tensor parameters (not all of them at once). ``ints``: integer and bool inputs
    compute in the default float dtype (else they are refused, as torch's ``igamma`` does);
    ``half``: float16 is supported. ``doc``: what the function is, for its docstring.
    """
    name: str
    host: Callable | str
    signature: str = "input"
    tensors: tuple = ("input",)
    grads: tuple = ()
    torch_level: bool = False
    scalars: bool = False
    ints: bool = True
    half: bool = True
    check: Callable | None = None
    doc: str = ""


# --- applying a row ------------------------------------------------------------------------------

def _operand(row: Special, value, name: str, position: int):
    """A tensor parameter: a Tensor, or a Python number where the row takes them (torch's rule)."""
    if isinstance(value, Tensor):
        return value
    if row.scalars and isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"{row.name}(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


def _dtypes(row: Special, operands) -> tuple:
    """(output dtype, compute dtype) of ``row`` on ``operands``, or torch's error."""
    rt = result_type(*operands)
    if not rt.is_floating_point:
        if not row.ints:
            raise NotImplementedError(f"{row.name}: not implemented for {rt.name} (got "
                                      + ", ".join(describe(o) for o in operands) + ")")
        rt = dtypes.get_default_dtype()
    if rt is dtypes.float16 and not row.half:
        raise NotImplementedError(f"{row.name}: not implemented for float16 (got "
                                  + ", ".join(describe(o) for o in operands) + ")")
    return rt, rt.compute


def _run(row: Special, arguments: dict) -> Tensor:
    """``row`` on its bound ``arguments`` (parameter name -> value): values, then graph node."""
    names = list(arguments)
    operands = [_operand(row, arguments[n], n, names.index(n) + 1) for n in row.tensors]
    tensors = [o for o in operands if isinstance(o, Tensor)]
    if not tensors:
        raise TypeError(f"{row.name}(): expected a Tensor for at least one of "
                        f"{', '.join(row.tensors)}, got "
                        + ", ".join(type(o).__name__ for o in operands))
    params = {n: v for n, v in arguments.items() if n not in row.tensors}
    if row.check is not None:
        params = row.check(row.name, **params)
    out_dt, ct = _dtypes(row, operands)
    device = common_device(row.name, tensors)
    shape = broadcast_shapes(row.name, *(tuple(t.shape) for t in tensors))
    arrays = [host(o._data).astype(ct.np, copy=False) if isinstance(o, Tensor) else ct.np.type(o)
              for o in operands]
    with np.errstate(all="ignore"):
        values = _function(row.host)(*arrays, **params)
    values = np.asarray(values)
    if values.shape != shape:  # (Python numbers only: a result shaped by no tensor)
        values = np.broadcast_to(values, shape)
    # a fresh C-ordered buffer of the output dtype (a copy where the host call gave a view)
    res = np.array(values, dtype=out_dt.np, order="C", copy=None)
    out = _wrap(move_array(res, device), out_dt)
    if grad_mode.GRAD_ENABLED[0] and any(
            f is not None and isinstance(o, Tensor) and o._requires_grad
            for f, o in zip(row.grads, operands)):
        _record(row, operands, params, out)
    return out


def _backward(node, g):
    """One gradient per tensor parameter: the row's formula, summed over broadcast dims and cast
    to the input's dtype."""
    operands = [t if t is not None else s for t, s in zip(node.saved_tensors, node.scalars)]
    grads = []
    for formula, edge, meta in zip(node.row.grads, node.next_functions, node.meta):
        if formula is None or edge is None:
            grads.append(None)
            continue
        gi = formula(g, *operands, **node.params)
        shape, dt = meta
        if tuple(gi.shape) != shape:
            gi = sum_to(gi, shape)
        grads.append(gi if gi.dtype is dt else gi.to(dt))
    return tuple(grads)


_NODES: dict = {}  # row name -> its Node class, e.g. LgammaBackward0


def _record(row: Special, operands, params, out: Tensor) -> None:
    node = _NODES[row.name]()
    node.row, node.params = row, params
    node.scalars = [None if isinstance(o, Tensor) else o for o in operands]
    node.meta = [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in operands]
    tensors = [o if isinstance(o, Tensor) and f is not None else None
               for o, f in zip(operands, row.grads)]
    node.save(*[o if isinstance(o, Tensor) else None for o in operands])
    record(node, tensors, (out,))


def _run_inplace(row: Special, self: Tensor, arguments: dict) -> Tensor:
    """``self`` <- the row's result, where ``self`` is its ``input``: torch's in-place rules (the
    result must be castable to self's dtype and have self's shape) and autograd (self becomes the
    op's output in the graph)."""
    if not self._data.flags.writeable:
        raise RuntimeError(f"{row.name}_: unsupported operation: the tensor is a broadcast "
                           f"(expanded) view where several elements share one memory location; "
                           f"clone it first (got {describe(self)})")
    names = list(arguments)
    operands = [_operand(row, arguments[n], n, names.index(n) + 1) for n in row.tensors]
    out_dt, _ = _dtypes(row, operands)
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{row.name}_: result type {out_dt.name} can't be cast to the desired "
                           f"output type {self.dtype.name}")
    shape = broadcast_shapes(row.name, *(tuple(o.shape) for o in operands
                                         if isinstance(o, Tensor)))
    if shape != tuple(self.shape):
        raise RuntimeError(f"{row.name}_: output with shape {list(self.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")

    def compute(old: Tensor) -> Tensor:
        res = _run(row, {n: old if v is self else v for n, v in arguments.items()})
        return res if res.dtype is self.dtype else res.to(self.dtype)

    if grad_mode.GRAD_ENABLED[0] and any(isinstance(o, Tensor) and o._requires_grad
                                         for o in operands):
        if self._requires_grad and self.grad_fn is None:
            raise RuntimeError(f"{row.name}_: a leaf Variable that requires grad is being used "
                               "in an in-place operation.")
        return rebase_inplace(self, compute)
    self._data[...] = compute(self)._data
    self._vc[0] += 1
    return self


# --- the public functions -------------------------------------------------------------------------

def _signature(text: str) -> inspect.Signature:
    """``"input, eps=None"`` as an ``inspect.Signature``."""
    params = []
    for part in text.split(", "):
        name, _, default = part.partition("=")
        params.append(inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=ast.literal_eval(default) if default else inspect.Parameter.empty))
    return inspect.Signature(params, return_annotation="Tensor")


def _functions(row: Special) -> tuple:
    """``(function, Tensor method, in-place method)`` of ``row``; the method binds the tensor to
    ``input`` wherever torch's function takes it (``x.polygamma(n)`` is ``polygamma(n, x)``)."""
    sig = _signature(row.signature)
    params = list(sig.parameters.values())
    msig = sig.replace(parameters=[sig.parameters["input"]]
                       + [p for p in params if p.name != "input"])

    def bound(signature, args, kwargs):
        try:
            b = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{row.name}(): {exc} (signature: {row.name}({row.signature}))") \
                from None
        b.apply_defaults()
        return {p.name: b.arguments[p.name] for p in params}  # in torch's order

    def function(*args, **kwargs) -> Tensor:
        return _run(row, bound(sig, args, kwargs))

    def method(*args, **kwargs) -> Tensor:
        return _run(row, bound(msig, args, kwargs))

    def method_(self, *args, **kwargs) -> Tensor:
        return _run_inplace(row, self, bound(msig, (self,) + args, kwargs))

    where_ = "torch" if row.torch_level else "torch.special"
    function.__signature__, method.__signature__ = sig, msig
    method_.__signature__ = msig
    function.__name__ = method.__name__ = row.name
    method_.__name__ = row.name + "_"
    function.__doc__ = method.__doc__ = (
        f"``{row.name}({row.signature})``: {row.doc} Elementwise, as {where_}.{row.name} "
        f"(computed by SciPy on the host; see dynagrad.ops.special).")
    method_.__doc__ = f"In-place ``{row.name}`` (see {where_}.{row.name})."
    return function, (function if msig == sig else method), method_


def _register(row: Special) -> Callable:
    _NODES[row.name] = node_class(
        "".join(p.capitalize() for p in row.name.split("_")) + "Backward0", _backward)
    function, method, method_ = _functions(row)
    if not row.torch_level:  # only torch.special has it: no dg.<name>, no Tensor method
        register(row.name, function, "special", method=False, functional=False)
        return function
    register(row.name, function, "special", method=method is function, inplace=method_)
    if method is not function:  # the method takes its arguments in another order
        tensor_method(row.name, method)
        REGISTRY[row.name] = dataclasses.replace(REGISTRY[row.name], method=row.name)
    return function


# --- host functions and parameter checks ----------------------------------------------------------

def _scipy():
    """``scipy.special``, imported on first use: its import takes about as long as the rest of
    ``import dynagrad``."""
    import scipy.special
    return scipy.special


def _function(host):
    """A row's host function: itself, or the ``scipy.special`` function it names."""
    return getattr(_scipy(), host) if isinstance(host, str) else host


def _lgamma(x):
    """``log|Gamma(x)|``; torch takes lgamma(-inf) as +inf (SciPy: -inf)."""
    return np.where(x == -np.inf, np.inf, _scipy().gammaln(x))


def _mvlgamma(x, p):
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_j lgamma(x - j / 2)``, j < p."""
    x = np.asarray(x)
    half_steps = (np.arange(p) / 2).astype(x.dtype)
    return (_scipy().gammaln(x[..., None] - half_steps).sum(-1)
            + x.dtype.type(p * (p - 1) / 4 * math.log(math.pi)))


def _logit(x, eps):
    """``log(x / (1 - x))`` with ``x`` clamped to ``[eps, 1 - eps]`` (torch: a negative eps, or
    None, clamps nothing; below eps wins over above 1 - eps)."""
    if eps is not None and eps >= 0:
        lo, hi = x.dtype.type(eps), x.dtype.type(1 - eps)
        x = np.where(x < lo, lo, np.where(x > hi, hi, x))
    return _scipy().logit(x)


def _check_polygamma(name, n):
    n = _int_param(name, "n", 1, n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return {"n": n}


def _check_mvlgamma(name, p):
    p = _int_param(name, "p", 2, p)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return {"p": p}


def _check_logit(name, eps):
    if eps is not None and not isinstance(eps, (int, float)):
        raise TypeError(f"logit(): argument 'eps' (position 2) must be float or None, not "
                        f"{type(eps).__name__}")
    return {"eps": None if eps is None else float(eps)}


def _int_param(name: str, param: str, position: int, value) -> int:
    """An integer parameter: an int, or a one-element integer tensor (as torch takes them)."""
    if isinstance(value, Tensor) and value.numel() == 1 and not value.dtype.is_floating_point:
        return int(value.item())
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}(): argument '{param}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return value


def _polygamma(x, n):
    return _scipy().polygamma(n, x)


def _polynomial(evaluate, nan_above=None):
    """The host function of an orthogonal polynomial ``(x, n)`` with torch's conventions: ``n``
    truncated to an integer, 0 for negative (or NaN, infinite) ``n``; ``nan_above`` (float32
    limit, float64 limit): NaN beyond that degree (torch's Hermite polynomials)."""
    def host(x, n):
        x, n = np.broadcast_arrays(x, n)
        valid = np.isfinite(n)
        k = np.trunc(np.where(valid, n, -1)).astype(np.int64)
        values = _function(evaluate)(np.maximum(k, 0), x.astype(np.float64))
        values = np.where(k < 0, 0.0, values)
        if nan_above is not None:
            limit = nan_above[0] if x.dtype == np.float32 else nan_above[1]
            values = np.where(k > limit, np.nan, values)
        return values
    return host


def _chebyshev_v(k, x):
    """V_n = U_n - U_(n-1) (the third kind)."""
    return _scipy().eval_chebyu(k, x) - _chebyshev_u_below(k, x)


def _chebyshev_w(k, x):
    """W_n = U_n + U_(n-1) (the fourth kind)."""
    return _scipy().eval_chebyu(k, x) + _chebyshev_u_below(k, x)


def _chebyshev_u_below(k, x):
    """U_(n-1), 0 for n = 0."""
    return np.where(k > 0, _scipy().eval_chebyu(np.maximum(k - 1, 0), x), 0.0)


def _shifted(evaluate):
    """The polynomial at ``2x - 1`` (torch's shifted Chebyshev polynomials)."""
    return lambda k, x: _function(evaluate)(k, 2.0 * x - 1.0)


# --- gradient formulas ----------------------------------------------------------------------------

def _not_implemented(what: str):
    """The formula of a derivative PyTorch does not implement: backward raises as torch's."""
    def formula(*args, **kwargs):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return formula


_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _mvlgamma_grad(g, x, p):
    """``g * sum_j digamma(x - j / 2)``."""
    steps = like(np.arange(p) / 2, x, x.dtype)
    return g * digamma(x.unsqueeze(-1) - steps).sum(-1)


def _logit_grad(g, x, eps):
    """torch's rule: without eps NaN outside [0, 1] (and g * inf at 0 and 1); with eps, 0 where
    the input was clamped."""
    d = g / (x * (1 - x))
    if eps is None or eps < 0:
        return where(logical_or(x < 0, x > 1), math.nan, d)
    return where(logical_or(x < eps, x > 1 - eps), 0.0, d)


def _sinc_grad(g, x):
    """``(cos(pi x) pi x - sin(pi x)) / (pi x^2)``, 0 at 0."""
    a = x * math.pi
    return where(x == 0, 0.0, g * ((a * a.cos() - a.sin()) / (a * x)))


def _xlogy_grad_x(g, x, y):
    """``g log(y)``, 0 where ``x == 0`` and ``y <= 0`` (torch's rule)."""
    return where(logical_and(x == 0, y <= 0), 0.0, xlogy(g, y))


def _xlog1py_grad_x(g, x, y):
    """``g log1p(y)``, 0 where ``x == 0`` and ``y <= -1``."""
    return where(logical_and(x == 0, y <= -1), 0.0, xlog1py(g, y))


def _igamma_grad_x(g, a, x):
    """d/dx of the regularized lower incomplete gamma: ``x^(a-1) e^-x / Gamma(a)``."""
    return g * ((a - 1) * x.log() - x - lgamma(a)).exp()


# --- the table ------------------------------------------------------------------------------------

_TORCH = {"torch_level": True}
_BESSEL = "{0}{2}, the Bessel function of the {1} kind of order {2}."
_MODIFIED = "{0}{2}, the modified Bessel function of the {1} kind of order {2}."
_CHEBYSHEV = "{}, the Chebyshev polynomial of the {} kind (n truncated to an integer; 0 below 0)."
_BINARY = {"signature": "input, other", "tensors": ("input", "other")}
_POLY = {"signature": "input, n", "tensors": ("input", "n"), "scalars": True, "half": False}

ROWS = [
    # the gamma family
    Special("lgamma", _lgamma, grads=(lambda g, x: g * digamma(x),), **_TORCH,
            doc="log |Gamma(x)|, the logarithm of the gamma function's magnitude."),
    Special("digamma", "psi", grads=(lambda g, x: g * polygamma(1, x),), **_TORCH,
            doc="psi(x) = d/dx lgamma(x) (-inf at 0, inf at -0, nan at negative integers)."),
    Special("polygamma", _polygamma, "n, input", grads=(
        lambda g, x, n: g * polygamma(n + 1, x),), check=_check_polygamma, **_TORCH,
        doc="The n-th derivative of digamma (n >= 0)."),
    Special("mvlgamma", _mvlgamma, "input, p", grads=(_mvlgamma_grad,), check=_check_mvlgamma,
            **_TORCH, doc="The multivariate log-gamma function of dimension p."),
    Special("igamma", "gammainc", **_BINARY, ints=False, grads=(
        _not_implemented("igamma: input"), _igamma_grad_x), **_TORCH,
        doc="P(input, other), the regularized lower incomplete gamma function."),
    Special("igammac", "gammaincc", **_BINARY, ints=False, grads=(
        _not_implemented("igammac: input"), lambda g, a, x: -_igamma_grad_x(g, a, x)), **_TORCH,
        doc="Q(input, other) = 1 - P, the regularized upper incomplete gamma function."),
    # error functions
    Special("erfinv", "erfinv", grads=(
        lambda g, x: g * (erfinv(x).square().exp() * _SQRT_PI_OVER_2),), **_TORCH,
        doc="The inverse error function (+-inf at +-1, nan beyond)."),
    Special("erfc", "erfc", grads=(
        lambda g, x: g * ((-x.square()).exp() * -_TWO_OVER_SQRT_PI),), **_TORCH,
        doc="The complementary error function 1 - erf(x)."),
    Special("erfcx", "erfcx", half=False, grads=(
        lambda g, x: g * (x * erfcx(x) * 2 - _TWO_OVER_SQRT_PI),),
        doc="The scaled complementary error function exp(x^2) erfc(x)."),
    Special("ndtr", "ndtr", grads=(lambda g, x: g * ((x.square() * -0.5).exp() / _SQRT_2PI),),
            doc="The standard normal cumulative distribution function."),
    Special("ndtri", "ndtri", half=False, grads=(
        lambda g, x: g * ((ndtri(x).square() * 0.5).exp() * _SQRT_2PI),),
        doc="The standard normal quantile function, the inverse of ndtr."),
    Special("log_ndtr", "log_ndtr", half=False, grads=(
        lambda g, x: g * ((x.square() * -0.5 - log_ndtr(x)).exp() / _SQRT_2PI),),
        doc="log(ndtr(x)), accurate far into the lower tail."),
    # elementary compositions
    Special("xlogy", "xlogy", **_BINARY, scalars=True, grads=(
        _xlogy_grad_x, lambda g, x, y: g * x / y), **_TORCH,
        doc="input * log(other), 0 where input is 0 (unless other is nan)."),
    Special("xlog1py", "xlog1py", **_BINARY, scalars=True, grads=(
        _xlog1py_grad_x, lambda g, x, y: g * x / (y + 1)),
        doc="input * log1p(other), 0 where input is 0 (unless other is nan)."),
    Special("logit", _logit, "input, eps=None", grads=(_logit_grad,), check=_check_logit,
            **_TORCH, doc="log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given."),
    Special("sinc", np.sinc, grads=(_sinc_grad,), **_TORCH,
            doc="The normalized sinc function sin(pi x) / (pi x), 1 at 0."),
    Special("entr", "entr", grads=(lambda g, x: g * -(x.log() + 1),),
            doc="-x log(x), the entropy term (0 at 0, -inf for negative x)."),
    Special("zeta", "zeta", **_BINARY, scalars=True, half=False, grads=(
        _not_implemented("zeta"), lambda g, x, q: g * -x * zeta(x + 1, q)),
        doc="The Hurwitz zeta function zeta(input, other) = sum_k (k + other)^-input."),
    # modified Bessel functions with gradients
    Special("i0", "i0", grads=(lambda g, x: g * i1(x),), **_TORCH,
            doc="I0, the modified Bessel function of the first kind of order 0."),
    Special("i0e", "i0e", grads=(lambda g, x: g * (i1e(x) - x.sign() * i0e(x)),),
            doc="exp(-|x|) I0(x), the exponentially scaled I0."),
    Special("i1", "i1", grads=(
        lambda g, x: where(x == 0, g * 0.5, g * (i0(x) - i1(x) / x)),),
        doc="I1, the modified Bessel function of the first kind of order 1."),
    Special("i1e", "i1e", grads=(
        lambda g, x: where(x == 0, g * 0.5, g * (i0e(x) - i1e(x) * (x.sign() + 1 / x))),),
        doc="exp(-|x|) I1(x), the exponentially scaled I1."),
    # no gradient in torch: the results do not require grad
    Special("airy_ai", lambda x: _scipy().airy(x)[0], half=False, doc="The Airy function Ai."),
    Special("bessel_j0", "j0", half=False, doc=_BESSEL.format("J", "first", 0)),
    Special("bessel_j1", "j1", half=False, doc=_BESSEL.format("J", "first", 1)),
    Special("bessel_y0", "y0", half=False, doc=_BESSEL.format("Y", "second", 0)),
    Special("bessel_y1", "y1", half=False, doc=_BESSEL.format("Y", "second", 1)),
    Special("modified_bessel_i0", "i0", half=False,
            doc=_MODIFIED.format("I", "first", 0) + " (No gradient, as torch; see i0.)"),
    Special("modified_bessel_i1", "i1", half=False,
            doc=_MODIFIED.format("I", "first", 1) + " (No gradient, as torch; see i1.)"),
    Special("modified_bessel_k0", "k0", half=False,
            doc=_MODIFIED.format("K", "second", 0)),
    Special("modified_bessel_k1", "k1", half=False,
            doc=_MODIFIED.format("K", "second", 1)),
    Special("scaled_modified_bessel_k0", "k0e", half=False, doc="exp(x) K0(x)."),
    Special("scaled_modified_bessel_k1", "k1e", half=False, doc="exp(x) K1(x)."),
    Special("spherical_bessel_j0", lambda x: _scipy().spherical_jn(0, x), half=False,
            doc="The spherical Bessel function j0(x) = sin(x) / x."),
    Special("chebyshev_polynomial_t", _polynomial("eval_chebyt"), **_POLY,
            doc=_CHEBYSHEV.format("T_n", "first")),
    Special("chebyshev_polynomial_u", _polynomial("eval_chebyu"), **_POLY,
            doc=_CHEBYSHEV.format("U_n", "second")),
    Special("chebyshev_polynomial_v", _polynomial(_chebyshev_v), **_POLY,
            doc=_CHEBYSHEV.format("V_n", "third")),
    Special("chebyshev_polynomial_w", _polynomial(_chebyshev_w), **_POLY,
            doc=_CHEBYSHEV.format("W_n", "fourth")),
    Special("shifted_chebyshev_polynomial_t", _polynomial("eval_sh_chebyt"), **_POLY,
            doc=_CHEBYSHEV.format("T_n(2x - 1)", "first")),
    Special("shifted_chebyshev_polynomial_u", _polynomial("eval_sh_chebyu"), **_POLY,
            doc=_CHEBYSHEV.format("U_n(2x - 1)", "second")),
    Special("shifted_chebyshev_polynomial_v", _polynomial(_shifted(_chebyshev_v)), **_POLY,
            doc=_CHEBYSHEV.format("V_n(2x - 1)", "third")),
    Special("shifted_chebyshev_polynomial_w", _polynomial(_shifted(_chebyshev_w)), **_POLY,
            doc=_CHEBYSHEV.format("W_n(2x - 1)", "fourth")),
    Special("hermite_polynomial_h", _polynomial("eval_hermite", (128, 512)), **_POLY,
            doc="H_n, the physicists' Hermite polynomial (nan above degree 128 in float32, "
                "512 in float64, as torch)."),
    Special("hermite_polynomial_he", _polynomial("eval_hermitenorm", (128, 512)), **_POLY,
            doc="He_n, the probabilists' Hermite polynomial (nan above degree 128 in float32, "
                "512 in float64, as torch)."),
    Special("laguerre_polynomial_l", _polynomial("eval_laguerre"), **_POLY,
            doc="L_n, the Laguerre polynomial."),
    Special("legendre_polynomial_p", _polynomial("eval_legendre"), **_POLY,
            doc="P_n, the Legendre polynomial."),
]

FUNCTIONS = {row.name: _register(row) for row in ROWS}  # name -> public function

lgamma, digamma, polygamma, mvlgamma, igamma, igammac = (
    FUNCTIONS[n] for n in ("lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac"))
erfinv, erfc, i0, xlogy, logit, sinc = (
    FUNCTIONS[n] for n in ("erfinv", "erfc", "i0", "xlogy", "logit", "sinc"))
erfcx, ndtr, ndtri, log_ndtr, entr, xlog1py, zeta, i0e, i1, i1e = (
    FUNCTIONS[n] for n in ("erfcx", "ndtr", "ndtri", "log_ndtr", "entr", "xlog1py", "zeta",
                           "i0e", "i1", "i1e"))
