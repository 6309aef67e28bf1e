"""Creation functions: tensor, as_tensor, from_numpy, zeros/ones/full/empty (+ ``_like``), arange,
linspace, logspace, eye.

Example:
    >>> import dynagrad as dg
    >>> dg.tensor([1, 2]).dtype, dg.tensor([1.0]).dtype, dg.arange(3)
    (dynagrad.int64, dynagrad.float32, tensor([0, 1, 2]))
"""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from . import dtypes
from .device import CPU, as_device, factory_device
from .dtypes import dtype as DType
from .layout import laid_out_like
from .shapes import shape_arg
from .kernels.buffers import empty as empty_buffer
from .kernels.buffers import host, move_array
from .tensor import Tensor, _wrap

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye",
           "scalar_tensor", "is_tensor", "numel", "get_device"]


def _is_sequence(x) -> bool:
    """Whether ``tensor()`` reads ``x`` as a sequence of elements, as PyTorch does: lists,
    tuples and any other sequence (``deque``, ``range``, ``array.array``, ``memoryview``, a class
    with ``__len__`` and ``__getitem__``), but not text, bytes or mappings."""
    if isinstance(x, (list, tuple)):
        return True
    if isinstance(x, (str, bytes, bytearray, Mapping, Tensor, np.ndarray, np.generic)):
        return False
    return isinstance(x, Sequence) or (hasattr(x, "__len__") and hasattr(x, "__getitem__"))


def _infer_dtype(data) -> DType:
    """dtype PyTorch infers from Python data: bool, int64, or the default float dtype."""
    kinds = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            kinds.add(("t", x.dtype))
        elif _is_sequence(x):
            stack.extend(x)
        elif isinstance(x, (np.ndarray, np.generic)):  # NumPy scalars keep their dtype too
            kinds.add(("t", dtypes.from_numpy_dtype(x.dtype)))
        elif isinstance(x, (bool, np.bool_)):
            kinds.add(("b", None))
        elif isinstance(x, numbers.Integral):
            kinds.add(("i", None))
        elif isinstance(x, numbers.Real):
            kinds.add(("f", None))
        elif isinstance(x, numbers.Complex):
            kinds.add(("c", None))
        else:
            raise TypeError(f"tensor(): could not infer dtype of {type(x).__name__}")
    result = None
    for kind, dt in kinds:
        d = dt if kind == "t" else {"b": dtypes.bool_, "i": dtypes.int64,
                                    "f": dtypes.get_default_dtype(),
                                    "c": dtypes.default_complex_dtype()}[kind]
        result = d if result is None else dtypes.promote_types(result, d)
    return result or dtypes.get_default_dtype()


def _to_numpy(data):
    if isinstance(data, Tensor):
        return host(data._data)
    if _is_sequence(data):
        data = data if isinstance(data, list) else list(data)
        try:
            return np.array([_to_numpy(x) for x in data]) if any(
                isinstance(x, Tensor) or _is_sequence(x) for x in data) else np.array(data)
        except ValueError:
            raise ValueError(f"tensor(): {_ragged(data)}") from None
    return np.asarray(data)


def _ragged(data) -> str:
    """Where nested sequences stop being rectangular, for the error message."""
    level, dim = [data], 0
    while level:
        seqs = [x for x in level if _is_sequence(x) or getattr(x, "ndim", 0)]
        if len(seqs) != len(level):
            return f"expected a sequence at dim {dim} for every element (got a mix of sequences "\
                   "and scalars)"
        lengths = [len(x) for x in seqs]
        for n in lengths:
            if n != lengths[0]:
                return f"expected sequence of length {lengths[0]} at dim {dim} (got {n})"
        level, dim = [y for x in seqs for y in x], dim + 1
    return "expected a rectangular nested sequence of numbers"


def tensor(data, *, dtype: DType | None = None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, NumPy arrays, tensors).

    Example: ``dg.tensor([[1, 2], [3, 4]], dtype=dg.float32, device="cuda")``.
    """
    dev = factory_device(device)
    if not isinstance(data, Tensor) and hasattr(data, "__cuda_array_interface__"):
        from .interop import from_cuda_array_interface
        src = from_cuda_array_interface(data)  # a GPU array: copied on its device
        out = src.to(dev if device is not None else src.device, dtype or src.dtype, copy=True)
        return out.requires_grad_() if requires_grad else out
    if dtype is None:
        if isinstance(data, np.ndarray) or isinstance(data, np.generic):
            dtype = dtypes.from_numpy_dtype(data.dtype)
        else:
            dtype = _infer_dtype(data)
    arr = _to_numpy(data)
    if arr.dtype == object:
        raise ValueError("tensor(): expected a sequence of equal-length sequences (ragged input)")
    return _finish(np.array(arr, dtype=dtype.np, copy=True, order="C"), dtype, requires_grad,
                   dev)


def as_tensor(data, dtype: DType | None = None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when no conversion (of dtype
    or device) is needed."""
    dev = None if device is None else as_device(device)
    if not isinstance(data, Tensor) and hasattr(data, "__cuda_array_interface__"):
        from .interop import from_cuda_array_interface
        data = from_cuda_array_interface(data)  # CuPy, torch CUDA, Numba: no copy
    if isinstance(data, Tensor):
        out = data if dtype is None or dtype is data.dtype else data.to(dtype)
        return out if dev is None else out.to(dev)
    if isinstance(data, np.ndarray):
        src = dtypes.from_numpy_dtype(data.dtype)
        arr = data if dtype is None or dtype is src else data.astype(dtype.np)
        return _finish(arr, dtype or src, False, dev or CPU)
    return tensor(data, dtype=dtype, device=dev)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array`` (writes show through both ways)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    return _wrap(array, dtypes.from_numpy_dtype(array.dtype))


def scalar_tensor(value, *, dtype: DType | None = None, device=None) -> Tensor:
    return full((), value, dtype=dtype or dtypes.get_default_dtype(), device=device)


def _finish(arr: np.ndarray, dtype: DType, requires_grad: bool, dev=CPU) -> Tensor:
    """Wrap a host array built by a creation function, placed on ``dev``."""
    t = _wrap(arr if dev is CPU else move_array(arr, dev.index), dtype)
    if requires_grad:
        t.requires_grad = True
    return t


def _shape_dtype(size, dtype, op):
    return shape_arg(size, op), dtype or dtypes.get_default_dtype()


def zeros(*size, dtype: DType | None = None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros; ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    shape, dt = _shape_dtype(size, dtype, "zeros")
    return _filled(shape, 0, dt, requires_grad, factory_device(device))


def ones(*size, dtype: DType | None = None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    shape, dt = _shape_dtype(size, dtype, "ones")
    return _filled(shape, 1, dt, requires_grad, factory_device(device))


def empty(*size, dtype: DType | None = None, device=None, requires_grad: bool = False,
          memory_format=None) -> Tensor:
    """An uninitialised tensor."""
    shape, dt = _shape_dtype(size, dtype, "empty")
    return _filled(shape, None, dt, requires_grad, factory_device(device))


def full(size, fill_value, *, dtype: DType | None = None, device=None,
         requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it when not given)."""
    dev = factory_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = dtype or (dtypes.scalar_dtype(fill_value))
    return _filled(shape_arg((size,) if isinstance(size, int) else size, "full"), fill_value, dt,
                   requires_grad, dev)


def _filled(shape: tuple, value, dt: DType, requires_grad: bool, dev) -> Tensor:
    """A new tensor on ``dev`` holding ``value`` everywhere (``None``: uninitialised)."""
    if dev is CPU:
        if value is None:
            arr = np.empty(shape, dt.np)
        else:  # np.zeros maps fresh pages lazily: much cheaper than writing zeros
            arr = np.zeros(shape, dt.np) if value == 0 else np.full(shape, value, dt.np)
    else:
        arr = empty_buffer(shape, dt.np, dev.index)
        if value is not None:
            arr[...] = value
    t = _wrap(arr, dt)
    if requires_grad:
        t.requires_grad = True
    return t


def _like(fn, input: Tensor, *args, dtype=None, device=None, requires_grad=False):
    device = input.device if device is None else device
    return laid_out_like(lambda shape: fn(shape, *args, dtype=dtype or input.dtype,
                                          device=device, requires_grad=requires_grad),
                         tuple(input.shape), input._data)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    return _like(zeros, input, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    return _like(ones, input, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    return _like(empty, input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    return _like(full, input, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype: DType | None = None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values ``start, start+step, ...`` below ``end``; int64 unless a bound or step is a float."""
    dev = factory_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound ({end}) and lower bound ({start}) inconsistent "
                           f"with step sign ({step})")
    if dtype is None:
        dtype = dtypes.int64 if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                    for v in vals) else dtypes.get_default_dtype()
    n = max(0, math.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step) if dtype.is_floating_point else \
        np.arange(start, start + n * step, step, dtype=np.int64)[:n]
    return _finish(arr.astype(dtype.np), dtype, requires_grad, dev)


def linspace(start, end, steps: int, *, dtype: DType | None = None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    dev = factory_device(device)
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative (got {steps})")
    dt = dtype or dtypes.get_default_dtype()
    return _finish(np.linspace(start, end, steps, dtype=np.float64).astype(dt.np), dt,
                   requires_grad, dev)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype: DType | None = None,
             device=None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    dt = dtype or dtypes.get_default_dtype()
    return _finish(np.power(base, np.linspace(start, end, steps, dtype=np.float64)).astype(dt.np),
                   dt, requires_grad, factory_device(device))


def eye(n: int, m: int | None = None, *, dtype: DType | None = None, device=None,
        requires_grad: bool = False) -> Tensor:
    """Identity matrix of shape ``(n, m)``."""
    dt = dtype or dtypes.get_default_dtype()
    return _finish(np.eye(n, n if m is None else m, dtype=dt.np), dt, requires_grad,
                   factory_device(device))


def range_(start, end, step=1, *, dtype: DType | None = None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Deprecated, as in PyTorch: ``start, start + step, ...`` up to ``end`` *inclusive*, in the
    default float dtype unless ``dtype`` says otherwise (use ``arange``, which excludes ``end``).

    Example:
        >>> import dynagrad as dg
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     dg.range(0, 1, 0.25).tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = dtype or dtypes.get_default_dtype()
    n = math.floor((end - start) / step) + 1
    values = start + step * np.arange(n, dtype=np.float64 if dt.is_floating_point else np.int64)
    return _finish(values.astype(dt.np), dt, requires_grad, factory_device(device))


def empty_strided(size, stride, *, dtype: DType | None = None, device=None,
                  requires_grad: bool = False, layout=None, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of shape ``size`` laid out with element strides ``stride`` (the
    memory holds just the elements those strides reach).

    Example:
        >>> import dynagrad as dg
        >>> dg.empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
    """
    shape, strides = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"mismatch in length of strides and shape (got size {shape} and "
                           f"stride {strides})")
    if any(s < 0 for s in shape) or any(s < 0 for s in strides):
        raise RuntimeError(f"empty_strided: negative sizes or strides are not allowed (got size "
                           f"{shape} and stride {strides})")
    dt = dtype or dtypes.get_default_dtype()
    dev = factory_device(device)
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    flat = empty_buffer((span,), dt.np, None if dev is CPU else dev.index)
    byte_strides = tuple(s * dt.itemsize for s in strides)
    if type(flat) is np.ndarray:
        arr = np.lib.stride_tricks.as_strided(flat, shape, byte_strides, writeable=True)
    else:
        arr = flat.as_strided(shape, byte_strides)
    out = _wrap(arr, dt)
    return out.requires_grad_() if requires_grad else out


def asarray(obj, *, dtype: DType | None = None, device=None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing its memory where it can (a tensor, a NumPy or CUDA array, a
    DLPack exporter, a buffer with ``dtype``): ``copy=True`` always copies, ``copy=False``
    raises where sharing is impossible, None copies only then.

    Example:
        >>> import numpy as np, dynagrad as dg
        >>> a = np.zeros(2, np.float32); t = dg.asarray(a); t[0] = 1.0; a.tolist()
        [1.0, 0.0]
    """
    if copy:
        out = tensor(obj, dtype=dtype, device=device)
        return out.requires_grad_() if requires_grad else out
    if isinstance(obj, (bytes, bytearray, memoryview)) and dtype is not None:
        obj = frombuffer(obj, dtype=dtype)
    elif (not isinstance(obj, (Tensor, np.ndarray)) and hasattr(obj, "__dlpack__")
          and not hasattr(obj, "__cuda_array_interface__")):
        from .interop import from_dlpack
        obj = from_dlpack(obj)
    out = as_tensor(obj, dtype=dtype, device=device)
    if copy is False:
        ours = obj.data_ptr() if isinstance(obj, Tensor) else _address(obj)
        if ours is None or ours != out.data_ptr():
            raise ValueError(f"asarray: copy=False, but {type(obj).__name__} cannot share its "
                             f"memory as a tensor of that dtype and device")
    return out.requires_grad_() if requires_grad else out


def _address(obj) -> int | None:
    """The address of the first element of an array-like, None for other objects."""
    for attr in ("__array_interface__", "__cuda_array_interface__"):
        face = getattr(obj, attr, None)
        if face is not None:
            return face["data"][0]
    return None


def frombuffer(buffer, *, dtype: DType, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over an object with the buffer protocol (``bytearray``, ``array.array``,
    ``mmap``...), sharing its memory: ``count`` elements (-1: all) after ``offset`` bytes.

    Example:
        >>> import dynagrad as dg
        >>> dg.frombuffer(bytearray(b"\\x01\\x00\\x02\\x00"), dtype=dg.int16).tolist()
        [1, 2]
    """
    size = memoryview(buffer).nbytes
    if offset < 0 or offset > size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({size} bytes) minus 1")
    if count < 0 and (size - offset) % dtype.itemsize:
        raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({dtype.itemsize})")
    if count == 0 or (count < 0 and size == offset):
        raise ValueError("both buffer length (0) and count (0) must not be 0")
    if count > 0 and count * dtype.itemsize > size - offset:
        raise ValueError(f"requested buffer length ({count} * {dtype.itemsize} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer length "
                         f"({size} bytes)")
    arr = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    out = _wrap(arr, dtype)
    return out.requires_grad_() if requires_grad else out


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def get_device(input: Tensor) -> int:
    """The CUDA device index of ``input``, or -1 for a CPU tensor."""
    return input.get_device()
