"""Tensor methods that are not ops of their own: operators, dtype/device conversion, fill/copy.

Operators call the op table directly (``a + 2`` passes the scalar through, so a float32 tensor
times ``2.0`` stays float32 exactly like PyTorch).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..device import as_device
from ..dtypes import dtype as DType
from ..errors import describe
from ..tensor import Tensor
from . import elementwise as ew
from .elementwise import OPS, binary_function, compute, fast_unary, inplace, rebase_inplace
from .linalg import matmul
from .movement import copy_array, int_varargs, to_dtype, transpose
from .registry import tensor_method
from .placement import to_device


def _operand(x):
    """Operators accept tensors, Python numbers and NumPy arrays; anything else is not ours."""
    if isinstance(x, (Tensor, int, float, complex, bool, np.number, np.bool_)):
        return x
    if isinstance(x, (np.ndarray, list, tuple)):
        from ..creation import tensor
        return tensor(x)
    return None


def _binary(name: str):
    op = OPS[name]

    def fallback(self, other):
        other = _operand(other)
        return NotImplemented if other is None else compute(op, (self, other))

    forward = binary_function(op, fallback)

    def reflected(self, other):
        other = _operand(other)
        return NotImplemented if other is None else compute(op, (other, self))

    def inplace_(self, other):
        other = _operand(other)
        return NotImplemented if other is None else inplace(op, self, (self, other))
    return forward, reflected, inplace_


for _dunder, _name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                       ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
                       ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
    _f, _r, _i = _binary(_name)
    tensor_method(f"__{_dunder}__", _f)
    tensor_method(f"__r{_dunder}__", _r)
    tensor_method(f"__i{_dunder}__", _i)

for _dunder, _name in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                       ("ge", "ge")):
    tensor_method(f"__{_dunder}__", _binary(_name)[0])


def _square(x):
    return compute(OPS["mul"], (x, x))


# A float tensor to one of these Python-number powers takes the form PyTorch computes it with
# (products, roots, reciprocals: the same roundings), each a vectorized kernel where the C
# library's pow keeps the loop scalar, far slower.
_POW_FORMS = {
    2: _square,
    3: lambda x: compute(OPS["mul"], (_square(x), x)),
    0.5: lambda x: compute(OPS["sqrt"], (x,)),
    -0.5: lambda x: compute(OPS["rsqrt"], (x,)),
    -1: lambda x: compute(OPS["reciprocal"], (x,)),
    -2: lambda x: compute(OPS["reciprocal"], (_square(x),)),
}


def _pow_check(self, exponent):
    if type(exponent) in (int, float) and self.dtype.is_floating_point:
        form = _POW_FORMS.get(exponent)
        if form is not None:
            return form(self)
    if (not self.dtype.is_floating_point and isinstance(exponent, int) and exponent < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return compute(OPS["pow"], (self, exponent))


def pow(input, exponent) -> Tensor:
    """``input ** exponent`` (either may be a Python scalar)."""
    if not isinstance(input, Tensor):
        return compute(OPS["pow"], (input, exponent))
    return _pow_check(input, _operand(exponent))


tensor_method("__pow__", lambda self, other: _pow_check(self, _operand(other)))
tensor_method("pow", pow)
tensor_method("__neg__", lambda self: fast_unary(OPS["neg"], self))
tensor_method("__pos__", lambda self: self)
tensor_method("__abs__", ew.abs)
tensor_method("__invert__", lambda self: ew.logical_not(self) if self.dtype is dtypes.bool_
              else ew.bitwise_not(self))
tensor_method("__matmul__", lambda self, other: matmul(self, other))
tensor_method("__rmatmul__", lambda self, other: matmul(other, self))


# --- dtype and device conversion -----------------------------------------------------------

def parse_to_args(args: tuple, kwargs: dict, device_given: list | None = None) -> tuple:
    """``(device, dtype, copy)`` from the arguments of ``Tensor.to`` / ``Module.to``; the device is
    validated (a clear error for a device this machine does not have). ``device_given[0]`` is set
    when the arguments name a device."""
    kwargs = dict(kwargs)
    dtype, copy = kwargs.pop("dtype", None), kwargs.pop("copy", False)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif not isinstance(a, bool):  # a positional non_blocking flag is accepted and ignored
            device = a
    if device_given is not None:
        device_given[0] = device is not None
    return as_device(device), dtype, copy


def to(self, *args, **kwargs) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; ``copy=True`` copies.

    Example: ``x.to("cuda", dg.float16)`` (a differentiable copy on the GPU).
    """
    device_given = [False]
    device, dtype, copy = parse_to_args(args, kwargs, device_given)
    out = to_dtype(self, dtype or self.dtype, copy=copy and not device_given[0])
    if device_given[0]:
        out = to_device(out, device, copy=copy and out is self)
    return out


def _caster(dt: DType):
    def cast(self, memory_format=None) -> Tensor:
        return to_dtype(self, dt)
    cast.__name__ = dt.name
    return cast


tensor_method("to", to)
for _meth, _dt in (("float", dtypes.float32), ("double", dtypes.float64), ("half", dtypes.float16),
                   ("long", dtypes.int64), ("int", dtypes.int32), ("short", dtypes.int16),
                   ("char", dtypes.int8), ("byte", dtypes.uint8), ("bool", dtypes.bool_)):
    tensor_method(_meth, _caster(_dt))
tensor_method("type_as", lambda self, other: to_dtype(self, other.dtype))
tensor_method("cpu", lambda self, memory_format=None: to_device(self, "cpu"))
tensor_method("cuda", lambda self, device=None, non_blocking=False, memory_format=None:
              to_device(self, "cuda" if device is None else device))


_LEGACY_TYPE_NAMES = {  # PyTorch's legacy tensor type names, e.g. x.type() == 'torch.FloatTensor'
    "float16": "dynagrad.HalfTensor", "float32": "dynagrad.FloatTensor",
    "float64": "dynagrad.DoubleTensor", "uint8": "dynagrad.ByteTensor",
    "int8": "dynagrad.CharTensor", "int16": "dynagrad.ShortTensor", "int32": "dynagrad.IntTensor",
    "int64": "dynagrad.LongTensor", "bool": "dynagrad.BoolTensor",
    "complex64": "dynagrad.ComplexFloatTensor", "complex128": "dynagrad.ComplexDoubleTensor"}


def _type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return _LEGACY_TYPE_NAMES[self.dtype.name]
    return to_dtype(self, dtype)


tensor_method("type", _type)
tensor_method("T", property(lambda self: self.permute(tuple(reversed(range(self.ndim))))))
tensor_method("mT", property(lambda self: transpose(self, -2, -1) if self.ndim >= 2
                             else _mt_error(self)))
tensor_method("H", property(lambda self: self.T.conj()))  # conjugate transposes
tensor_method("mH", property(lambda self: self.mT.conj()))


def _mt_error(self):
    raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                       f"{self.ndim}-D tensor.")


# --- new_* constructors -------------------------------------------------------------------

def _new(fn_name):
    def make(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        from .. import creation
        size = int_varargs(size, f"new_{fn_name}", "size")  # x.new_zeros(2, 3) or ((2, 3))
        return getattr(creation, fn_name)(size, dtype=dtype or self.dtype,
                                          device=device or self.device,
                                          requires_grad=requires_grad)
    return make


tensor_method("new_zeros", _new("zeros"))
tensor_method("new_ones", _new("ones"))
tensor_method("new_empty", _new("empty"))


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from ..creation import full
    if not isinstance(size, (tuple, list)):  # unlike new_zeros, no spread-out sizes (PyTorch)
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from ..creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


tensor_method("new_full", _new_full)
tensor_method("new_tensor", _new_tensor)


# --- fill / copy --------------------------------------------------------------------------

def _check_writable(self, op: str) -> None:
    if not self._data.flags.writeable:
        raise RuntimeError(f"{op}: unsupported operation: the tensor is an expanded view "
                           f"(more than one element refers to the same memory location); clone "
                           f"it first ({describe(self)})")


def fill_(self, value) -> Tensor:
    """Set every element to ``value`` (a number or a 0-dim tensor)."""
    _check_writable(self, "fill_")
    vt = value if isinstance(value, Tensor) else None
    if vt is not None and vt.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{vt.ndim} dimensions.")
    if grad_mode.GRAD_ENABLED[0] and (self._requires_grad or (vt is not None and vt._requires_grad)):
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        return rebase_inplace(self, lambda old: old * 0 + (vt.to(self.dtype) if vt is not None
                                                           else value))
    self._data[...] = value.item() if vt is not None else value
    self._vc[0] += 1
    return self


def zero_(self) -> Tensor:
    return fill_(self, 0)


def copy_(self, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast and cast) into this tensor's memory."""
    _check_writable(self, "copy_")
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: expected a Tensor source (got {describe(src)})")
    from ..shapes import broadcast_shapes
    if broadcast_shapes("copy_", tuple(self.shape), tuple(src.shape)) != tuple(self.shape):
        raise RuntimeError(f"copy_: source {describe(src)} cannot be broadcast to the destination "
                           f"{describe(self)}")
    if grad_mode.GRAD_ENABLED[0] and (self._requires_grad or src._requires_grad):
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        return rebase_inplace(self, lambda old: src.to(self.device, self.dtype)
                              .expand(tuple(self.shape)).clone())
    copy_array(src._data, self._data)  # (either buffer on any device: the copy moves it)
    self._vc[0] += 1
    return self


tensor_method("fill_", fill_)
tensor_method("zero_", zero_)
tensor_method("copy_", copy_)


# --- torch-level spellings of Tensor methods, pin_memory, new_empty_strided -------------------

def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is a floating point type."""
    return input.dtype.is_floating_point


def is_nonzero(input: Tensor) -> bool:
    """The one element of ``input`` as a bool (an error for any other element count)."""
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have one shape."""
    return input.is_same_size(other)


def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype holds negative values."""
    return input.is_signed()


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same memory, no history."""
    return input.detach()


def fill(input: Tensor, value) -> Tensor:
    """A copy of ``input`` with every element ``value`` (a number or a 0-dim tensor); the
    gradient reaches ``value``, as torch's.

    Example:
        >>> import dynagrad as dg
        >>> dg.fill(dg.zeros(2), 3.0).tolist()
        [3.0, 3.0]
    """
    return fill_(input.clone(), value)


def pin_memory(self, device=None) -> Tensor:
    """A copy in page-locked host memory (faster and asynchronous copies to a GPU); needs CUDA,
    as torch's."""
    if self.is_cuda:
        raise RuntimeError(f"cannot pin a tensor on {self.device}: only dense CPU tensors can be "
                           f"pinned (got {describe(self)})")
    if self.is_pinned():
        return self
    from ..kernels.cuda import runtime
    if not runtime.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    arr = runtime.require("pin_memory").pinned_array(self._data.shape, self._data.dtype)
    arr[...] = self._data
    out = ew._wrap(arr, self.dtype)
    out._pinned = True
    return out


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False) -> Tensor:
    """``empty_strided`` with this tensor's dtype and device unless given."""
    from ..creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


tensor_method("pin_memory", pin_memory)
tensor_method("new_empty_strided", new_empty_strided)
