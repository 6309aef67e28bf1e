"""Scalar helpers for generated CUDA kernels: the names op expressions use, as in scalarlib.

Op expressions (``"fexp(x)"``, ``"np.floor(x)"``, ``"clamp(x, lo, hi)"``...) are shared by the CPU
and CUDA kernels. A generated CUDA module does ``from dynagrad.kernels.cuda.scalarlib import *``,
which gives it:

* every public helper of ``scalarlib`` (``sigmoid``, ``floor_div``, ``fexp``...);
* ``np``: a small stand-in for NumPy with the scalar functions expressions call (numba-cuda has no
  ``np.floor`` or ``np.fmod`` on the device) and NumPy's dtype constructors and constants;
* ``math``: the real ``math`` module on a GPU; under the simulator a copy whose overflowing
  functions return ``inf`` as on the device instead of raising ``OverflowError`` as Python does.

Each helper is a plain Python function on NumPy scalars (what the simulator runs) plus a numba-cuda
``overload`` for the device, compiled per argument type with constants of that type, so float32
math stays float32 on the GPU (``1.0`` would promote it to float64). float16 values never reach a
helper: kernels load half as float32.

Changing this file changes every CUDA kernel's cache key (cache.py hashes it).

Example:
    >>> from dynagrad.kernels.cuda import scalarlib as lib
    >>> float(lib.floor_div(7.0, -2.0)), float(lib.np.fmod(-7.0, 2.0)), float(lib.fsigmoid(0.0))
    (-4.0, -1.0, 0.5)
"""
from __future__ import annotations

import math as _pymath
from types import ModuleType

import numpy as _numpy
from numba.core import types as _types
from numba.cuda.core import config as _config
from numba.cuda.extending import overload as _overload

from ..cpu import scalarlib as _cpu_lib
from ..float_functions import ROWS
from ..cache import compiled_into_kernels

# its code, the CPU library's shared bodies and the float functions' rows compile into kernels
compiled_into_kernels(__name__, _cpu_lib.__name__, "dynagrad.kernels.float_functions")

__all__ = ["math", "np", "sigmoid", "floor_div", "py_mod", "int_fmod", "round_half_even", "frac",
           "nan_to_num", "fmax_nan", "fmin_nan", "fold_max", "fold_min", "clamp", "int_pow",
           "fgelu_grad", "fsilu_grad", "fgelu_tanh_grad", "fmish_grad",
           *(row.name for row in ROWS)]

_SIMULATOR = bool(_config.ENABLE_CUDASIM)
_NO_WARNINGS = dict(over="ignore", invalid="ignore", divide="ignore", under="ignore")


def _float_of(*args):
    """The NumPy float type device code computes ``args`` in: float32 when the first argument is
    float32 or float16, else float64 (integers and float64)."""
    t = args[0]
    return _numpy.float32 if t in (_types.float32, _types.float16) else _numpy.float64


def _np_call(fn, *args):
    with _numpy.errstate(**_NO_WARNINGS):  # the device does not warn on overflow either
        return fn(*args)


# --- the np stand-in ---------------------------------------------------------------------------

def _floor(x):
    """np.floor of one scalar."""
    return _np_call(_numpy.floor, x)


def _ceil(x):
    """np.ceil of one scalar."""
    return _np_call(_numpy.ceil, x)


def _trunc(x):
    """np.trunc of one scalar."""
    return _np_call(_numpy.trunc, x)


def _fmod(x, y):
    """np.fmod of two scalars (remainder with the sign of ``x``)."""
    return _np_call(_numpy.fmod, x, y)


def _rounding(py_fn, math_fn) -> None:
    @_overload(py_fn)
    def _impl(x):
        if isinstance(x, _types.Float):
            return lambda x: math_fn(x)
        if isinstance(x, (_types.Integer, _types.Boolean)):
            return lambda x: x


for _fn, _dev in ((_floor, _pymath.floor), (_ceil, _pymath.ceil), (_trunc, _pymath.trunc)):
    _rounding(_fn, _dev)  # numba-cuda's math.floor/ceil/trunc keep the float type


@_overload(_fmod)
def _fmod_impl(x, y):
    if isinstance(x, _types.Float) or isinstance(y, _types.Float):
        T = _float_of(x, y)
        return lambda x, y: _pymath.fmod(T(x), T(y))


np = ModuleType("dynagrad_cuda_np", "NumPy names that CUDA kernel expressions may use.")
np.floor, np.ceil, np.trunc, np.fmod = _floor, _ceil, _trunc, _fmod
for _name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
              "bool_", "complex64", "complex128", "nan", "inf", "pi", "e"):
    setattr(np, _name, getattr(_numpy, _name))


# --- math: the device's math module; under the simulator, one that overflows to inf -------------

def _simulated_math() -> ModuleType:
    mod = ModuleType("dynagrad_cuda_math", "math with the device's overflow behaviour.")
    for name in dir(_pymath):
        if not name.startswith("_"):
            setattr(mod, name, getattr(_pymath, name))
    for name in ("exp", "expm1", "exp2", "sinh", "cosh", "log", "log2", "log10", "log1p", "sqrt",
                 "pow", "tan", "floor", "ceil", "trunc", "fmod"):
        ufunc = getattr(_numpy, "power" if name == "pow" else name)
        setattr(mod, name, lambda *a, _f=ufunc: _np_call(_f, *a))
    return mod


math = _simulated_math() if _SIMULATOR else _pymath


# --- scalarlib's helpers ------------------------------------------------------------------------

def sigmoid(x):
    """1 / (1 + exp(-x)) without overflow."""
    e = _np_call(_numpy.exp, -abs(x))
    return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)


@_overload(sigmoid)
def _sigmoid(x):
    T = _float_of(x)

    def impl(x):
        v = T(x)
        if v >= 0:  # split on the sign so exp never overflows
            return T(1.0) / (T(1.0) + _pymath.exp(-v))
        e = _pymath.exp(v)
        return e / (T(1.0) + e)
    return impl


def floor_div(x, y):
    """PyTorch's floating floor division (exact quotient from fmod, then floor): the CPU
    helper's body on the host; kernels get the overload below."""
    return _np_call(_cpu_lib.floor_div.py_func, x, y)


@_overload(floor_div)
def _floor_div(x, y):
    T = _float_of(x, y)

    def impl(x, y):
        a, b = T(x), T(y)
        if b == 0:
            return a / b  # inf or nan, as x / 0 in floating point
        m = _pymath.fmod(a, b)
        d = (a - m) / b
        if m != 0 and (b < 0) != (m < 0):
            d -= T(1.0)
        f = _pymath.floor(d)
        if d - f > T(0.5):
            f += T(1.0)
        return f
    return impl


def py_mod(x, y):
    """Remainder with the sign of the divisor (torch.remainder)."""
    r = _np_call(_numpy.fmod, x, y)
    return r + y if r != 0 and ((r < 0) != (y < 0)) else r


@_overload(py_mod)
def _py_mod(x, y):
    T = _float_of(x, y)

    def impl(x, y):
        b = T(y)
        r = _pymath.fmod(T(x), b)
        if r != 0 and ((r < 0) != (b < 0)):
            r += b
        return r
    return impl



def round_half_even(x):
    """Round to the nearest integer, ties to even (torch.round)."""
    return _numpy.rint(x)


@_overload(round_half_even)
def _round_half_even(x):
    from numba.cuda import libdevice
    if x == _types.float32:
        return lambda x: libdevice.rintf(x)
    if isinstance(x, _types.Float):
        return lambda x: libdevice.rint(_numpy.float64(x))
    return lambda x: x


def frac(x):
    """The fractional part, x - trunc(x)."""
    with _numpy.errstate(**_NO_WARNINGS):
        return x - _numpy.trunc(x)


@_overload(frac)
def _frac(x):
    return lambda x: x - _pymath.trunc(x)







# The CPU library's Python bodies of these helpers are type-generic: the device compiles the very
# same source, so each is defined once (in scalarlib.py) for both targets.
def _same_body(name: str):
    fn = getattr(_cpu_lib, name).py_func
    _overload(fn, strict=False)(lambda *args: fn)
    return fn


int_fmod, nan_to_num, fmax_nan, fmin_nan, clamp, int_pow = (
    _same_body(n) for n in ("int_fmod", "nan_to_num", "fmax_nan", "fmin_nan", "clamp", "int_pow"))


def fold_max(acc, v):
    """max()'s fold step: the larger, NaN if either is NaN."""
    return fmax_nan(acc, v)


def fold_min(acc, v):
    """min()'s fold step: the smaller, NaN if either is NaN."""
    return fmin_nan(acc, v)


_overload(fold_max)(lambda acc, v: fold_max)
_overload(fold_min)(lambda acc, v: fold_min)


# --- the f* functions op expressions call: a row each in kernels/float_functions.py ----------

def _float_function(row):
    """``row``'s host function (what the simulator runs, on NumPy scalars, overflowing to inf as
    the device does) and its device overload: both compute ``row.libm`` in ``x``'s float type."""
    body = f"    x = T(x)\n    return T({row.libm})\n"
    host_ns = {"math": _HOST_MATH, "sigmoid": sigmoid, "_float_of_value": _float_of_value}
    exec(f"def {row.name}(x):\n    T = _float_of_value(x)\n{body}", host_ns)
    host = host_ns[row.name]
    host.__doc__ = row.doc

    @_overload(host)
    def _device(x):
        device_ns = {"math": _pymath, "sigmoid": sigmoid, "T": _float_of(x)}
        exec(f"def impl(x):\n{body}", device_ns)
        return device_ns["impl"]
    return host


_HOST_MATH = _simulated_math()


def _float_of_value(x):
    """The NumPy float type the host form computes a value in (``_float_of`` for a value)."""
    return _numpy.float32 if isinstance(x, (_numpy.float32, _numpy.float16)) else _numpy.float64


for _row in ROWS:
    globals()[_row.name] = _float_function(_row)
del _row


_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


def fgelu_grad(x, g):
    """g * d/dx GELU(x) = g * (Phi(x) + x * phi(x))."""
    return g * (0.5 * _pymath.erfc(-x * _SQRT_HALF)
                + x * _INV_SQRT_2PI * _np_call(_numpy.exp, -0.5 * x * x))


@_overload(fgelu_grad)
def _fgelu_grad(x, g):
    T = _float_of(x)

    def impl(x, g):
        v = T(x)
        cdf = T(0.5) * _pymath.erfc(-v * T(_SQRT_HALF))
        pdf = T(_INV_SQRT_2PI) * _pymath.exp(T(-0.5) * v * v)
        return T(g) * (cdf + v * pdf)
    return impl


def fsilu_grad(x, g):
    """g * d/dx (x sigmoid(x))."""
    s = sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


@_overload(fsilu_grad)
def _fsilu_grad(x, g):
    T = _float_of(x)

    def impl(x, g):
        v = T(x)
        s = sigmoid(v)
        return T(g) * s * (T(1.0) + v * (T(1.0) - s))
    return impl


def fgelu_tanh_grad(x, g):
    """g * d/dx of GELU's tanh form."""
    c, a, b = _cpu_lib._GELU_TANH_C
    t = _np_call(_numpy.tanh, c * (x + a * x * x * x))
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + b * x * x))


@_overload(fgelu_tanh_grad)
def _fgelu_tanh_grad(x, g):
    T = _float_of(x)
    c, a, b = (T(k) for k in _cpu_lib._GELU_TANH_C)

    def impl(x, g):
        v = T(x)
        t = _pymath.tanh(c * (v + a * v * v * v))
        return T(g) * (T(0.5) * (T(1.0) + t)
                       + T(0.5) * v * (T(1.0) - t * t) * (c * (T(1.0) + b * v * v)))
    return impl


def fmish_grad(x, g):
    """g * d/dx (x tanh(softplus(x)))."""
    t = _np_call(_numpy.tanh, x if x > 20.0 else _np_call(_numpy.log1p, _np_call(_numpy.exp, x)))
    return g * (t + x * sigmoid(x) * (1.0 - t * t))


@_overload(fmish_grad)
def _fmish_grad(x, g):
    T = _float_of(x)

    def impl(x, g):
        v = T(x)
        t = _pymath.tanh(v if v > T(20.0) else _pymath.log1p(_pymath.exp(v)))
        return T(g) * (t + v * sigmoid(v) * (T(1.0) - t * t))
    return impl
