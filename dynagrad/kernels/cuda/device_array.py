"""``DeviceArray``: a strided view of CUDA memory that answers to NumPy's array vocabulary.

A CUDA tensor's buffer is a ``DeviceArray``. It offers the parts of ``numpy.ndarray`` the op layer
uses on a buffer - ``shape``, ``strides``, ``flags``, ``reshape``, ``transpose``, basic indexing,
``astype``, ``copy``, ``__setitem__`` - so view ops are written once for both devices.

How views stay exact without device code: every ``DeviceArray`` carries a *geometry*, a NumPy array
with the same shape, strides and dtype whose data pointer is a made-up address (``_BASE`` plus the
byte offset). NumPy's own view functions run on the geometry and the new offset is read back from
the pointer. The geometry's memory is never read or written: only view-making functions reach it
(``__array_function__`` refuses everything else), and computing functions go to CUDA kernels.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.cuda.device_array import DeviceArray
    >>> a = DeviceArray.from_host(np.arange(6, dtype=np.float32).reshape(2, 3))  # doctest: +SKIP
    >>> a.T.to_host().tolist()                                                 # doctest: +SKIP
    [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
"""
from __future__ import annotations

import math

import numpy as np

_BASE = 1 << 44  # the made-up address of byte 0 of every block, as geometries see it


class _Interface:
    __slots__ = ("__array_interface__",)


def _geometry(shape: tuple, strides: tuple | None, dtype: np.dtype, offset: int,
              writeable: bool = True) -> np.ndarray:
    holder = _Interface()
    holder.__array_interface__ = {"shape": tuple(shape), "strides": strides, "version": 3,
                                  "typestr": dtype.str, "data": (_BASE + offset, not writeable)}
    return np.asarray(holder)


def _offset_of(geo: np.ndarray) -> int:
    return geo.__array_interface__["data"][0] - _BASE


# NumPy functions that only make views: run on the geometry, wrap the result on the same block.
_VIEW_FUNCTIONS = {np.swapaxes, np.transpose, np.broadcast_to, np.squeeze, np.expand_dims,
                   np.moveaxis, np.diagonal, np.reshape, np.ravel, np.atleast_1d, np.atleast_2d,
                   np.atleast_3d, np.broadcast_arrays}


class DeviceArray:
    """``shape``/``strides`` (bytes)/``dtype`` over a ``cuda_memory.Block``, like an ndarray."""

    __slots__ = ("_geo", "block", "_fresh", "_kernel_view", "__weakref__")

    def __init__(self, block, geo: np.ndarray, fresh: bool = False):
        self.block = block
        self._geo = geo
        self._fresh = fresh  # made by empty(): the only array on its block, as NumPy's base=None
        self._kernel_view = None  # the numba device array, made on the first launch

    # --- creation ------------------------------------------------------------------------
    @classmethod
    def empty(cls, shape: tuple, dtype, device_index: int | None = None) -> "DeviceArray":
        """Uninitialised contiguous memory on a device (from the caching allocator)."""
        from . import memory as cuda_memory
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        block = cuda_memory.allocate(math.prod(shape) * dtype.itemsize, device_index)
        return cls(block, _geometry(shape, None, dtype, 0), fresh=True)

    @classmethod
    def from_host(cls, arr: np.ndarray, device_index: int | None = None) -> "DeviceArray":
        """Copy a NumPy array to the device (contiguous)."""
        arr = np.asarray(arr, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
        if arr.size and 0 in arr.strides:
            # a C-contiguous view can still hold a zero stride on a length-1 axis
            # (``arr[:, None]``): the copy reads the strides and drops such an axis as a
            # broadcast one, so it is given a fresh array's strides
            arr = arr.copy()
        out = cls.empty(arr.shape, arr.dtype, device_index)
        if arr.size:
            out.kernel_view().copy_to_device(arr)
        return out

    def _like(self, geo: np.ndarray) -> "DeviceArray":
        return DeviceArray(self.block, geo)

    # --- what an ndarray answers ------------------------------------------------------------
    def _set_shape(self, shape) -> None:
        """``arr.shape = s`` reshapes in place as NumPy does: AttributeError if it needs a copy."""
        try:
            self._geo = np.reshape(self._geo, shape, copy=False)
            self._kernel_view = None
        except ValueError:
            raise AttributeError("incompatible shape for in-place modification; use reshape() "
                                 "to make a copy") from None

    shape = property(lambda self: self._geo.shape, _set_shape)
    strides = property(lambda self: self._geo.strides)
    dtype = property(lambda self: self._geo.dtype)
    ndim = property(lambda self: self._geo.ndim)
    size = property(lambda self: self._geo.size)
    itemsize = property(lambda self: self._geo.itemsize)
    nbytes = property(lambda self: self._geo.nbytes)
    flags = property(lambda self: self._geo.flags)  # c_contiguous, writeable (False: broadcast)
    offset = property(lambda self: _offset_of(self._geo))
    device_index = property(lambda self: self.block.device_index)
    # like ndarray.base: None for an array that owns its memory, else what it views
    base = property(lambda self: None if self._fresh else self.block)

    @property
    def data_ptr(self) -> int:
        """The device address of the first element."""
        return self.block.ptr + self.offset

    def kernel_view(self):
        """The numba device array a kernel launch takes (same memory, shape and strides); made
        once per DeviceArray, since building one costs microseconds on every launch."""
        view = self._kernel_view
        if view is None:
            geo = self._geo
            view = self._kernel_view = self.block.array(geo.shape, geo.strides, geo.dtype,
                                                        self.offset)
        return view

    def __len__(self) -> int:
        return len(self._geo)

    def __repr__(self) -> str:
        return (f"DeviceArray(shape={self.shape}, dtype={self.dtype}, "
                f"device=cuda:{self.device_index})")

    # --- views -------------------------------------------------------------------------------
    def __getitem__(self, key) -> "DeviceArray":
        key = key if isinstance(key, tuple) else (key,)
        _check_basic_key(key)
        if Ellipsis not in key:  # an all-integer key would make NumPy read an element: keep a view
            key = key + (Ellipsis,)
        return self._like(self._geo[key])

    def view(self, dtype=None) -> "DeviceArray":
        return self._like(self._geo.view() if dtype is None else self._geo.view(np.dtype(dtype)))

    def reshape(self, *shape) -> "DeviceArray":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        try:
            return self._like(np.reshape(self._geo, shape, copy=False))
        except ValueError:  # the strides admit no view of that shape: copy first, as NumPy does
            return _reshape_copy(self, shape)

    def ravel(self) -> "DeviceArray":
        return self.reshape(-1)

    def transpose(self, *axes) -> "DeviceArray":
        return self._like(self._geo.transpose(*axes))

    T = property(lambda self: self._like(self._geo.T))

    def squeeze(self, axis=None) -> "DeviceArray":
        return self._like(self._geo.squeeze(axis))

    def swapaxes(self, a: int, b: int) -> "DeviceArray":
        return self._like(self._geo.swapaxes(a, b))

    def as_strided(self, shape: tuple, strides: tuple, offset_bytes: int = 0,
                   writeable: bool = True) -> "DeviceArray":
        """A view with explicit byte strides, ``offset_bytes`` past this array's first element."""
        return self._like(_geometry(shape, tuple(strides), self.dtype,
                                    self.offset + offset_bytes, writeable))

    def __array_function__(self, func, types, args, kwargs):
        if func not in _VIEW_FUNCTIONS:
            raise _no_kernel(func.__name__)
        block = self.block
        result = func(*_geometries(args), **_geometries(kwargs))
        if isinstance(result, (list, tuple)):
            return type(result)(DeviceArray(block, r) for r in result)
        return DeviceArray(block, result)

    # --- data movement -----------------------------------------------------------------------
    def copy(self) -> "DeviceArray":
        """A contiguous copy on the same device."""
        return self.astype(self.dtype)

    def astype(self, dtype, copy: bool = True) -> "DeviceArray":
        dtype = np.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        out = DeviceArray.empty(self.shape, dtype, self.device_index)
        copy_into(self, out)
        return out

    def __setitem__(self, key, value) -> None:
        target = self[key] if key is not Ellipsis else self
        if isinstance(value, DeviceArray):
            copy_into(value, target)
        elif isinstance(value, np.ndarray) and value.ndim:
            copy_into(DeviceArray.from_host(value, self.device_index), target)
        else:
            from . import runner as cuda
            if target.size:
                cuda.fill(target.kernel_view(), np.asarray(value).astype(self.dtype)[()])

    def to_host(self) -> np.ndarray:
        """A NumPy copy in host memory."""
        src = self if self.flags.c_contiguous else self.copy()
        if not src.size:
            return np.empty(src.shape, src.dtype)
        return src.kernel_view().copy_to_host()

    def tolist(self):
        return self.to_host().tolist()

    def item(self):
        return self.to_host().item()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert a cuda tensor's memory to a NumPy array implicitly; use "
                        "Tensor.cpu() to copy it to host memory first")

    __array_ufunc__ = None  # NumPy ufuncs on a DeviceArray raise TypeError instead of reading it


def _reshape_copy(arr: DeviceArray, shape: tuple) -> DeviceArray:
    dense = arr.copy()
    return dense._like(np.reshape(dense._geo, shape, copy=False))


def copy_into(src: DeviceArray, dst: DeviceArray) -> None:
    """``dst[...] = src`` with broadcasting and dtype conversion (one CUDA kernel)."""
    if src.device_index != dst.device_index:
        raise RuntimeError(f"copy between cuda:{src.device_index} and cuda:{dst.device_index} is "
                           "not supported; go through the CPU")
    if not dst.size:
        return
    from . import runner as cuda
    if src.shape != dst.shape:
        src = src._like(np.broadcast_to(src._geo, dst.shape))
    cuda.copy(src.kernel_view(), dst.kernel_view())


def _check_basic_key(key: tuple) -> None:
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
            raise IndexError("a cuda buffer takes only basic indices (integers, slices, None, "
                             f"...); got {type(k).__name__}")


def _geometries(obj):
    if isinstance(obj, DeviceArray):
        return obj._geo
    if isinstance(obj, (list, tuple)):
        return type(obj)(_geometries(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _geometries(v) for k, v in obj.items()}
    return obj


def _no_kernel(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{what}: this operation has no CUDA kernel in dynagrad yet, so it cannot run on a cuda "
        "tensor; move the tensor to the CPU with .cpu() for this step")
