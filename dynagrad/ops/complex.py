"""Complex numbers: ``complex``, ``polar``, the views ``view_as_real``/``view_as_complex``/``real``/
``imag``, ``conj`` and its relatives, ``angle``, ``sgn``, ``isreal``, ``is_complex``.

Gradients follow PyTorch's convention: for a real loss ``L`` of a complex ``z = x + iy`` the
gradient is ``dL/dx + i dL/dy`` (the conjugate Wirtinger derivative, times two). An op's input
gradient is ``g * conj(ds/dz) + conj(g) * ds/dconj(z)`` for incoming gradient ``g``.

The values are computed by NumPy on the host buffer (a host round trip on CUDA), like the other
complex elementwise ops (see ``kernels.complex_math``). dynagrad has no lazy conjugate bit:
``conj`` returns a new conjugated tensor (PyTorch returns a view flagged ``is_conj``), so
``is_conj`` and ``is_neg`` are always False and ``resolve_conj``/``resolve_neg`` return their input.

Example:
    >>> import dynagrad as dg
    >>> z = dg.complex(dg.tensor([1.0, 3.0]), dg.tensor([2.0, -1.0]))
    >>> z, z.abs(), dg.view_as_real(z).shape
    (tensor([1.+2.j, 3.-1.j]), tensor([2.2361, 3.1623]), dynagrad.Size([2, 2]))
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..errors import describe
from ..kernels.buffers import device_index, host, move_array
from ..shapes import broadcast_shapes
from ..tensor import Tensor, _view, _wrap
from . import elementwise
from ._util import as_tensor_arg
from .elementwise import sum_to
from .placement import common_device
from .registry import register, tensor_method

_TORCH_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _torch_name(dt) -> str:
    return _TORCH_NAMES[dt.name]


def _tracks(*ts) -> bool:
    return grad_mode.GRAD_ENABLED[0] and any(t._requires_grad for t in ts)


def _host_result(res: np.ndarray, dt, like) -> Tensor:
    """``res`` (a host array) as a tensor of ``dt`` on the device of buffer ``like``."""
    res = np.asarray(res, dtype=dt.np, order="C")
    return _wrap(move_array(res, device_index(like)), dt)


def _parts(arr):
    """A ``(..., 2)`` real view of a complex buffer (host or CUDA): real and imaginary parts."""
    real = np.float32 if arr.dtype == np.complex64 else np.float64
    return arr[..., None].view(real)


# --- construction ------------------------------------------------------------------------

def _complex_back(node, g):
    shapes = node.shapes
    gr, gi = real(g), imag(g)
    return (sum_to(gr, shapes[0]) if node.next_functions[0] is not None else None,
            sum_to(gi, shapes[1]) if node.next_functions[1] is not None else None)


_ComplexNode = node_class("ComplexBackward0", _complex_back)


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """``real + i imag`` (float tensors of one dtype, broadcast), as ``torch.complex``.

    Example: ``dg.complex(dg.tensor([1.0]), dg.tensor([2.0]))`` is ``tensor([1.+2.j])``.
    """
    re, im = as_tensor_arg(real, "complex", "real"), as_tensor_arg(imag, "complex", "imag")
    for t in (re, im):
        if t.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                               f"{_torch_name(re.dtype)} and {_torch_name(im.dtype)}")
    if re.dtype is not im.dtype:
        raise RuntimeError(f"Expected object of scalar type {_torch_name(re.dtype)} but got "
                           f"scalar type {_torch_name(im.dtype)} for second argument")
    common_device("complex", (re, im))
    shape = broadcast_shapes("complex", tuple(re.shape), tuple(im.shape))
    out_dt = re.dtype.to_complex()
    res = np.empty(shape, out_dt.np)
    res.real, res.imag = host(re._data), host(im._data)
    out = _host_result(res, out_dt, re._data)
    if _tracks(re, im):
        node = _ComplexNode()
        node.shapes = (tuple(re.shape), tuple(im.shape))
        record(node, (re, im), (out,))
    return out


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))``, as ``torch.polar`` (float tensors of one dtype)."""
    a, t = as_tensor_arg(abs, "polar", "abs"), as_tensor_arg(angle, "polar", "angle")
    if a.dtype is not t.dtype:
        raise RuntimeError(f"Expected object of scalar type {_torch_name(a.dtype)} but got "
                           f"scalar type {_torch_name(t.dtype)} for second argument")
    if a.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"polar: expected float or double tensors, got {describe(a)}")
    return complex(a * t.cos(), a * t.sin())


# --- views of the parts ------------------------------------------------------------------

def _view_as_real_back(node, g):
    return (view_as_complex(g if g.stride(-1) == 1 and g.stride(-2) == 2 else g.contiguous()),)


def _view_as_complex_back(node, g):
    return (view_as_real(g),)


_ViewAsRealNode = node_class("ViewAsRealBackward0", _view_as_real_back)
_ViewAsComplexNode = node_class("ViewAsComplexBackward0", _view_as_complex_back)


def _record_view(cls, x: Tensor, out: Tensor) -> Tensor:
    if _tracks(x):
        record(cls(), (x,), (out,))
    return out


def view_as_real(input: Tensor) -> Tensor:
    """A real view ``(..., 2)`` of a complex tensor sharing its memory (real, imaginary parts)."""
    x = as_tensor_arg(input, "view_as_real")
    if not x.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    out = _view(x, _parts(x._data))
    out.dtype = x.dtype.to_real()
    return _record_view(_ViewAsRealNode, x, out)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float tensor whose last dim (size 2, stride 1) holds the parts."""
    x = as_tensor_arg(input, "view_as_complex")
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but "
                           f"got a tensor of scalar type: {_torch_name(x.dtype)}")
    if x.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if x.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in x.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if x.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    out_dt = x.dtype.to_complex()
    out = _view(x, x._data.view(out_dt.np)[..., 0])
    out.dtype = out_dt
    return _record_view(_ViewAsComplexNode, x, out)


def _real_back(node, g):
    return (complex(g, g.new_zeros(())),)


def _imag_back(node, g):
    return (complex(g.new_zeros(()), g),)


_RealNode = node_class("RealBackward0", _real_back)
_ImagNode = node_class("ImagBackward0", _imag_back)


def _part(x: Tensor, k: int, cls) -> Tensor:
    out = _view(x, _parts(x._data)[..., k])
    out.dtype = x.dtype.to_real()
    return _record_view(cls, x, out)


def real(input: Tensor) -> Tensor:
    """The real parts of a complex tensor as a view sharing its memory; other tensors: itself."""
    x = as_tensor_arg(input, "real")
    return _part(x, 0, _RealNode) if x.dtype.is_complex else x


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor as a view sharing its memory."""
    x = as_tensor_arg(input, "imag")
    if not x.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(x, 1, _ImagNode)


def _part_setter(getter):
    def set_part(self, value) -> None:
        part = getter(self)
        part.copy_(value if isinstance(value, Tensor) else part.new_full((), value))
    return set_part


# --- conjugation ---------------------------------------------------------------------------

_ConjNode = node_class("ConjPhysicalBackward0", lambda node, g: (conj(g),))


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate (a new tensor); a real tensor is returned as it is."""
    x = as_tensor_arg(input, "conj_physical")
    if not x.dtype.is_complex:
        return x
    out = _host_result(np.conjugate(host(x._data)), x.dtype, x._data)
    if _tracks(x):
        record(_ConjNode(), (x,), (out,))
    return out


def conj(input: Tensor) -> Tensor:
    """The complex conjugate. dynagrad has no lazy conjugate bit: this is ``conj_physical``
    (PyTorch returns a view flagged ``is_conj``; the values are the same)."""
    return conj_physical(input)


def conj_physical_(self: Tensor) -> Tensor:
    """Conjugate in place (a real tensor is left as it is)."""
    if self.dtype.is_complex:
        return self.copy_(conj_physical(self))
    return self


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` (dynagrad tensors never carry a lazy conjugate bit: see ``conj``)."""
    return as_tensor_arg(input, "resolve_conj")


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` (dynagrad tensors never carry a lazy negative bit)."""
    return as_tensor_arg(input, "resolve_neg")


def is_conj(input: Tensor) -> bool:
    """False: dynagrad has no lazy conjugate bit (see ``conj``)."""
    return False


def is_neg(input: Tensor) -> bool:
    """False: dynagrad has no lazy negative bit."""
    return False


def is_complex(input: Tensor) -> bool:
    """Whether ``input``'s dtype is complex (complex64 or complex128)."""
    return as_tensor_arg(input, "is_complex").dtype.is_complex


def isreal(input: Tensor) -> Tensor:
    """Elementwise: the imaginary part is zero (every element of a real tensor)."""
    x = as_tensor_arg(input, "isreal")
    if not x.dtype.is_complex:
        return _host_result(np.ones(x.shape, np.bool_), dtypes.bool_, x._data)
    return elementwise.eq(imag(x).detach(), 0)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (``input.mH``)."""
    x = as_tensor_arg(input, "adjoint")
    if x.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices."
                           f" Got {x.ndim}-D tensor.")
    return x.mH


# --- angle and sgn -------------------------------------------------------------------------

def _angle_back(node, g):
    (x,) = node.saved_tensors
    if not x.dtype.is_complex:
        return (g * 0,)
    # d angle: g * i z / |z|^2, zero at z == 0 (as PyTorch)
    mag2 = x.abs().square()
    return (elementwise.where(mag2 == 0, 0.0, g * x / mag2 * 1j),)


_AngleNode = node_class("AngleBackward0", _angle_back)


def angle(input: Tensor) -> Tensor:
    """The argument of each element in radians (a real tensor: pi for negatives, else 0; NaN
    stays NaN); integer inputs give the default float dtype."""
    x = as_tensor_arg(input, "angle")
    arr = host(x._data)
    if x.dtype.is_complex:
        out_dt = x.dtype.to_real()
        res = np.angle(arr)
    else:
        out_dt = x.dtype if x.dtype.is_floating_point else dtypes.get_default_dtype()
        res = np.where(arr < 0, math.pi, 0.0)
        if x.dtype.is_floating_point:
            res = np.where(np.isnan(arr), arr, res)
    out = _host_result(res, out_dt, x._data)
    if _tracks(x) and out_dt.is_floating_point:
        node = _AngleNode()
        node.save(x)
        record(node, (x,), (out,))
    return out


def _sgn_back(node, g):
    x, out = node.saved_tensors
    mag = x.abs()
    # s = z / |z|: ds/dz = 1 / (2|z|), ds/dconj(z) = -s^2 / (2|z|); zero at z == 0
    return (elementwise.where(mag == 0, 0.0, (g - out * out * conj(g)) / (mag * 2)),)


_SgnNode = node_class("SgnBackward0", _sgn_back)


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` for complex elements (0 at 0); ``sign`` for real ones."""
    x = as_tensor_arg(input, "sgn")
    if not x.dtype.is_complex:
        return elementwise.sign(x)
    arr = host(x._data)
    with np.errstate(all="ignore"):
        mag = np.abs(arr)
        res = np.where(mag == 0, 0, arr / np.where(mag == 0, 1, mag))
    out = _host_result(res, x.dtype, x._data)
    if _tracks(x):
        node = _SgnNode()
        node.save(x, out.detach())
        record(node, (x,), (out,))
    return out


def sgn_(self: Tensor) -> Tensor:
    return self.copy_(sgn(self))


# abs of complex z: d|z| is g * z / |z| (PyTorch's convention), in place of g * sign(x)
elementwise.COMPLEX_GRADS["abs"] = (lambda g, x, o: g * sgn(x),)


# --- dtype casts ---------------------------------------------------------------------------

def _caster(dt):
    def cast(self, memory_format=None) -> Tensor:
        return self.to(dt)
    cast.__name__ = {"complex64": "cfloat", "complex128": "cdouble"}[dt.name]
    cast.__doc__ = f"``self.to(dynagrad.{dt.name})``."
    return cast


register("complex", complex, "complex", method=False)
register("polar", polar, "complex", method=False)
register("view_as_real", view_as_real, "complex", method=False)
register("view_as_complex", view_as_complex, "complex", method=False)
register("real", real, "complex", method=False)
register("imag", imag, "complex", method=False)
tensor_method("real", property(real, _part_setter(real)))
tensor_method("imag", property(imag, _part_setter(imag)))
register("conj_physical", conj_physical, "complex", inplace=conj_physical_)
register("conj", conj, "complex")
register("resolve_conj", resolve_conj, "complex")
register("resolve_neg", resolve_neg, "complex")
register("is_conj", is_conj, "complex")
register("is_neg", is_neg, "complex")
register("is_complex", is_complex, "complex")
register("isreal", isreal, "complex")
register("adjoint", adjoint, "complex")
register("angle", angle, "complex")
register("sgn", sgn, "complex", inplace=sgn_)
tensor_method("cfloat", _caster(dtypes.complex64))
tensor_method("cdouble", _caster(dtypes.complex128))
