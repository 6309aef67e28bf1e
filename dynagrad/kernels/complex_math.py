"""The elementwise ops on complex buffers: one vectorised NumPy call per op on host arrays.

Complex elementwise ops do not go through the generated kernels (their scalar expressions and
``scalarlib``'s float bodies are written for real numbers, and every complex dtype would be one
more compile per op): ``ops.elementwise.compute`` runs the function here on the host buffers, and
a CUDA operand makes a host round trip (copied to the host, computed, the result copied back).

Example:
    >>> import numpy as np
    >>> FUNCTIONS["mul"](np.array([1j]), np.array([1j]))
    array([-1.+0.j])
"""
from __future__ import annotations

import numpy as np


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _lerp(x, y, w):
    return x + w * (y - x)


def _where(c, x, y):
    return np.where(c, x, y)


# op name -> function of the operand arrays (or scalars), all of the op's compute dtype
FUNCTIONS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "pow": np.power, "neg": np.negative, "reciprocal": np.reciprocal, "abs": np.abs,
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "sigmoid": _sigmoid, "eq": np.equal, "ne": np.not_equal,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "where": _where,
    "lerp": _lerp,
}

# ops whose result is real for a complex input (``abs``: the magnitude)
REAL_RESULT = frozenset({"abs"})

# PyTorch's own words where it refuses an op on complex input (the rest: "not implemented")
_REFUSALS = {
    "sign": (NotImplementedError, ("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")),
    "clamp": (NotImplementedError, "clamp is not supported for complex types"),
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
}
for _name in ("floor", "ceil", "trunc", "round", "frac"):
    _REFUSALS[_name] = (NotImplementedError, f"{_name} is not supported for complex inputs")

TORCH_TYPE_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def refusal(name: str, type_name: str) -> Exception:
    """The exception PyTorch raises for elementwise op ``name`` on a complex dtype."""
    cls, msg = _REFUSALS.get(name, (NotImplementedError, None))
    if msg is None:
        msg = f'"{name}" not implemented for \'{TORCH_TYPE_NAMES.get(type_name, type_name)}\''
    return cls(msg)


def run(name: str, operands: list):
    """``FUNCTIONS[name]`` over host arrays and scalars, with NumPy's warnings off (PyTorch
    computes 1/0 and log(0) silently too)."""
    with np.errstate(all="ignore"):
        return np.asarray(FUNCTIONS[name](*operands))
