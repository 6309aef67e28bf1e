"""The float functions op expressions call (``fexp(x)``, ``flog(x)``...), one row each for both
targets.

A row names the function, its vectorizable float32 body on the CPU (a function of
``kernels/cpu/scalarlib.py``, or None where there is none) and ``libm``: one expression in ``x``
and ``T`` (``x``'s float type, so constants keep float32 on a GPU) that every other case computes
- other dtypes on the CPU, every dtype on a CUDA device, and the simulator's host code. Each
scalar library builds its ``f*`` functions from these rows, so adding a function is one row here
(plus its float32 body, if it has one), and ``tests/test_scalar_functions.py`` checks that every
name an op expression uses resolves on both targets.

Example:
    >>> from dynagrad.kernels.float_functions import ROWS
    >>> next(r for r in ROWS if r.name == "fexp").libm
    'math.exp(x)'
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FloatFunction:
    name: str            # what op expressions call
    float32: str | None  # the CPU's float32 body in kernels/cpu/scalarlib (vectorizable), if any
    libm: str            # the expression for every other case, in x and T (x's float type)
    doc: str


def _logarithm(fn: str, pole: str) -> str:
    """A logarithm's expression: ``math.<fn>`` above its pole, -inf at it, nan below."""
    return (f"math.{fn}(x) if x > T({pole}) else "
            f"(T(-math.inf) if x == T({pole}) else T(math.nan))")


ROWS = (
    FloatFunction("fexp", "_exp32", "math.exp(x)", "exp(x) (inf on overflow)."),
    FloatFunction("fexpm1", "_expm1_32", "math.expm1(x)", "exp(x) - 1, accurate near 0."),
    FloatFunction("fexp2", "_exp2_32", "T(2.0) ** x", "2**x, exact at integers."),
    FloatFunction("flog", "_log32", _logarithm("log", "0.0"), "log(x) (-inf at 0, nan below)."),
    FloatFunction("flog1p", "_log1p32", _logarithm("log1p", "-1.0"),
                  "log(1 + x), accurate near 0 (-inf at -1, nan below)."),
    FloatFunction("flog2", "_log2_32", _logarithm("log2", "0.0"),
                  "log2(x) (-inf at 0, nan below), exact at powers of two."),
    FloatFunction("flog10", "_log10_32", _logarithm("log10", "0.0"),
                  "log10(x) (-inf at 0, nan below)."),
    FloatFunction("ftanh", "_tanh32", "math.tanh(x)", "tanh(x)."),
    FloatFunction("fsigmoid", "_sigmoid32", "sigmoid(x)", "1 / (1 + exp(-x)) without overflow."),
    FloatFunction("ferf", "_erf32", "math.erf(x)", "erf(x)."),
    FloatFunction("fgelu", "_gelu32", "T(0.5) * x * math.erfc(-x * T(0.7071067811865476))",
                  "GELU, x * Phi(x) (the exact erf form)."),
    # sin, cos and tan's float32 bodies are exact only within SINCOS_BOUND: the ops check their
    # input against it first (``Elementwise.bounded``) and take math.sin & co. beyond it
    FloatFunction("fsin", "_sin32", "math.sin(x)", "sin(x) (float32: |x| <= SINCOS_BOUND)."),
    FloatFunction("fcos", "_cos32", "math.cos(x)", "cos(x) (float32: |x| <= SINCOS_BOUND)."),
    FloatFunction("ftan", "_tan32", "math.tan(x)", "tan(x) (float32: |x| <= SINCOS_BOUND)."),
    FloatFunction("fatan", "_atan32", "math.atan(x)", "atan(x)."),
    FloatFunction("fasinh", "_asinh32", "math.asinh(x)", "asinh(x)."),
)
