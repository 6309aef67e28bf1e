"""dtype objects and PyTorch's type-promotion rules (``torch.result_type`` semantics).

Example:
    >>> import dynagrad as dg
    >>> dg.promote_types(dg.uint8, dg.int8)
    dynagrad.int16
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "dtype", "float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool_",
    "half", "float", "double", "short", "int", "long", "promote_types", "result_type",
    "get_default_dtype", "set_default_dtype", "from_numpy_dtype", "complex64", "complex128",
    "cfloat", "cdouble", "set_default_tensor_type",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3  # promotion categories, ordered


class dtype:
    """A tensor element type. Compare with ``is`` or ``==``; ``dg.float32`` is the default."""

    __slots__ = ("name", "np", "itemsize", "category", "rank", "is_signed", "compute")

    def __init__(self, name: str, np_dtype, category: int, rank: int, is_signed: bool):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.rank = rank          # order inside the category (for promotion)
        self.is_signed = is_signed
        self.compute = self       # dtype the CPU kernels compute in (set below for narrow types)

    @property
    def is_floating_point(self) -> bool:
        return self.category == _FLOAT

    @property
    def is_complex(self) -> bool:
        return self.category == _COMPLEX

    def to_real(self) -> dtype:
        """The real dtype of a complex dtype's parts (other dtypes: themselves), as torch."""
        return _REAL_OF.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this floating dtype (complex dtypes: themselves)."""
        if self.category == _COMPLEX:
            return self
        if self.category != _FLOAT:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.name}")
        return _COMPLEX_OF[self]

    def __repr__(self) -> str:
        return f"dynagrad.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


float16 = dtype("float16", np.float16, _FLOAT, 0, True)
float32 = dtype("float32", np.float32, _FLOAT, 1, True)
float64 = dtype("float64", np.float64, _FLOAT, 2, True)
bool_ = dtype("bool", np.bool_, _BOOL, 0, False)
uint8 = dtype("uint8", np.uint8, _INT, 0, False)
int8 = dtype("int8", np.int8, _INT, 0, True)
int16 = dtype("int16", np.int16, _INT, 1, True)
int32 = dtype("int32", np.int32, _INT, 2, True)
int64 = dtype("int64", np.int64, _INT, 3, True)
complex64 = dtype("complex64", np.complex64, _COMPLEX, 1, True)
complex128 = dtype("complex128", np.complex128, _COMPLEX, 2, True)
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (float16, float32, float64, bool_, uint8, int8, int16, int32, int64, complex64, complex128)
# a complex dtype's parts; float16 has no complex dtype here (PyTorch's complex32 is not
# supported), so its complex form is complex64, the smallest that holds it
_REAL_OF = {complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128}
# Kernels compile for few dtypes (each one is a Numba compile): narrow types compute in a wide one
# and the result is cast back, which wraps integers exactly like PyTorch's narrow arithmetic.
float16.compute = float32
for _t in (uint8, int8, int16, int32):
    _t.compute = int64

_BY_NUMPY = {t.np: t for t in ALL}
_BY_NAME = {t.name: t for t in ALL}


def from_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The dynagrad dtype of a NumPy dtype; TypeError for types dynagrad does not hold."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"dynagrad has no dtype for numpy {np_dtype!r}; supported: "
                        + ", ".join(t.name for t in ALL)) from None


def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo.category == _FLOAT:  # float64 + complex64: complex128
            return _COMPLEX_OF[lo] if lo.rank > hi.rank else hi
        return hi
    if a.category >= _FLOAT:
        return a if a.rank > b.rank else b
    if a.category == _BOOL:
        return a
    if a.is_signed == b.is_signed:
        return a if a.rank > b.rank else b
    # uint8 with a signed type: the smallest signed type that holds both
    signed = a if a.is_signed else b
    return int16 if signed is int8 else signed


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to, as ``torch.promote_types``."""
    return _PROMOTE[(a, b)]


_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the dtype of Python floats and of float-producing creation functions."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating point dtypes are allowed, got {d!r}")
    _default_float = d


# the legacy CPU tensor type names PyTorch's set_default_tensor_type takes
_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16"}


def set_default_tensor_type(t) -> None:
    """Deprecated PyTorch form of ``set_default_dtype``: ``t`` is a floating point tensor type or
    its name (``"torch.DoubleTensor"``, ``"dynagrad.FloatTensor"``, a class of that name).

    Example:
        >>> import dynagrad as dg
        >>> dg.set_default_tensor_type("torch.DoubleTensor"); dg.get_default_dtype()
        dynagrad.float64
        >>> dg.set_default_tensor_type("torch.FloatTensor")
    """
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if name is None or isinstance(t, dtype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    short = name.rsplit(".", 1)[-1]
    if short not in _TENSOR_TYPES:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(from_name(_TENSOR_TYPES[short]))


def default_complex_dtype() -> dtype:
    """The complex dtype of Python complex numbers: complex128 when the default float dtype is
    float64, else complex64 (as PyTorch)."""
    return complex128 if _default_float is float64 else complex64


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar takes part in promotion with."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (builtins_int, np.integer)):
        return int64
    if isinstance(value, (complex, np.complexfloating)):
        return default_complex_dtype()
    return _default_float


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower-priority group only lifts the category."""
    if higher is None:
        return lower
    if lower is None or higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:  # a float tensor keeps its precision: float64 * 1j: complex128
        return _COMPLEX_OF[higher] if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool_ or lower.category == _FLOAT:
        return _PROMOTE[(higher, lower)]
    return higher


def result_type(*operands) -> dtype:
    """dtype of an op over ``operands`` (tensors and Python scalars), as ``torch.result_type``.

    Tensors with dimensions decide; 0-dim tensors and then Python scalars only raise the category
    (a float32 tensor times ``2.0`` stays float32; an int tensor times ``2.0`` becomes float32).
    """
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim = d if dim is None else _PROMOTE[(dim, d)]
            else:
                zero = d if zero is None else _PROMOTE[(zero, d)]
        else:
            s = scalar_dtype(x)
            wrapped = s if wrapped is None else _PROMOTE[(wrapped, s)]
    return _combine(dim, _combine(zero, wrapped))


import builtins as _b  # noqa: E402  (the module shadows int/float/bool names above)

builtins_int = _b.int


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's casting rules let an op write a ``from_`` result into a ``to`` tensor
    (in place, ``out=``): never to a lower category (float -> integer, integer -> bool); any
    width within a category.

    Example:
        >>> import dynagrad as dg
        >>> dg.can_cast(dg.float64, dg.float16), dg.can_cast(dg.float32, dg.int32)
        (True, False)
    """
    return from_.category <= to.category
