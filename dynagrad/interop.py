"""Zero-copy exchange with other array libraries: ``__cuda_array_interface__`` and DLPack.

* Out: a CUDA tensor exposes ``__cuda_array_interface__`` (CuPy, Numba, PyTorch read it); every
  tensor exports DLPack (``__dlpack__``/``__dlpack_device__``), so ``torch.from_dlpack(t)`` and
  ``cupy.from_dlpack(t)`` share its memory.
* In: ``dg.as_tensor`` takes any object with ``__cuda_array_interface__`` (a CuPy array, a torch
  CUDA tensor, a Numba device array) without copying; ``dg.from_dlpack`` takes any DLPack
  exporter, on the CPU or a GPU.

Imported memory is wrapped, not copied: writes on either side show on the other, and the exporter
stays alive while a dynagrad tensor views it.

Example:
    >>> import numpy as np, dynagrad as dg
    >>> a = np.arange(3.0)
    >>> t = dg.from_dlpack(a); t[0] = 7.0
    >>> a[0]
    7.0
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import dtypes
from .kernels.cuda.device_array import DeviceArray, _geometry
from .ops.registry import tensor_method
from .tensor import Tensor, _wrap

__all__ = ["from_dlpack", "to_dlpack"]

_KDL_CPU, _KDL_CUDA = 1, 2
# DLPack data type codes
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_COMPLEX, _KDL_BOOL = 0, 1, 2, 5, 6


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]

_CAPSULE_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


# --- __cuda_array_interface__ -----------------------------------------------------------------

def cuda_array_interface(t: Tensor) -> dict:
    """Version 3 of the interface for a CUDA tensor (AttributeError for a CPU one, as PyTorch,
    so ``hasattr(t, '__cuda_array_interface__')`` tells the two apart)."""
    arr = t._data
    if type(arr) is not DeviceArray:
        raise AttributeError("a CPU tensor has no __cuda_array_interface__; use "
                             "__array_interface__ via .numpy(), or DLPack")
    if t.requires_grad:
        raise RuntimeError("Can't get __cuda_array_interface__ on a Tensor that requires grad. "
                           "Use tensor.detach() first.")
    return {"shape": tuple(arr.shape), "typestr": arr.dtype.str, "version": 3,
            "strides": None if arr.flags.c_contiguous else tuple(arr.strides),
            # our kernels run on the legacy default stream (1): a consumer on another stream syncs
            "data": (arr.data_ptr if arr.size else 0, False), "stream": 1}


def from_cuda_array_interface(obj) -> Tensor:
    """A CUDA tensor viewing ``obj``'s memory (anything with ``__cuda_array_interface__``)."""
    iface = obj.__cuda_array_interface__
    dtype = np.dtype(iface["typestr"])
    shape = tuple(iface["shape"])
    strides = iface.get("strides")
    if strides is None:
        strides = _c_strides(shape, dtype.itemsize)
    ptr = iface["data"][0]
    return _wrap(_foreign(ptr, shape, tuple(strides), dtype, _device_of_pointer(ptr), obj),
                 dtypes.from_numpy_dtype(dtype))


def _device_of_pointer(ptr: int) -> int:
    """The ordinal of the GPU that holds ``ptr`` (the current device under the simulator)."""
    from .kernels.cuda import runtime as _runtime
    _runtime.require("__cuda_array_interface__")
    if _runtime.is_simulator() or ptr == 0:
        return _runtime.current_index()
    from numba.cuda.cudadrv import driver
    binding = driver.binding
    err, ordinal = binding.cuPointerGetAttribute(
        binding.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
    if int(err) != 0:
        raise RuntimeError(f"__cuda_array_interface__: address {ptr:#x} is not CUDA device "
                           f"memory (cuPointerGetAttribute failed with {err})")
    return int(ordinal)


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _foreign(ptr: int, shape: tuple, strides: tuple, dtype: np.dtype, device_index: int,
             owner) -> DeviceArray:
    """A DeviceArray over foreign memory starting at ``ptr`` (strides in bytes, any sign)."""
    from .kernels.cuda.memory import ForeignBlock
    lo = hi = 0
    if 0 not in shape:
        for n, s in zip(shape, strides):
            lo, hi = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
        hi += dtype.itemsize
    block = ForeignBlock(ptr + lo, hi - lo, device_index, owner)
    return DeviceArray(block, _geometry(shape, strides, dtype, -lo))


# --- DLPack --------------------------------------------------------------------------------------

_DL_CODES = {"f": _KDL_FLOAT, "i": _KDL_INT, "u": _KDL_UINT, "b": _KDL_BOOL,
             "c": _KDL_COMPLEX}
_NP_KINDS = {v: k for k, v in _DL_CODES.items()}
_exports: dict = {}  # address of a DLManagedTensor -> what it keeps alive until its deleter runs


@_DELETER
def _release(managed) -> None:
    _exports.pop(ctypes.addressof(managed.contents), None)


# raw-pointer forms for the capsule destructor: the capsule is being deallocated there, so it must
# not be wrapped in a py_object (that would revive and re-free it)
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule_ptr) -> None:
    # A capsule nobody consumed still owns its tensor: run the deleter. A consumer renames it.
    if _capsule_is_valid(capsule_ptr, _CAPSULE_NAME):
        managed = ctypes.cast(_capsule_pointer(capsule_ptr, _CAPSULE_NAME),
                              ctypes.POINTER(_DLManagedTensor))
        managed.contents.deleter(managed)


def dlpack_device(t: Tensor) -> tuple:
    """``(device_type, device_id)``: (1, 0) on the CPU, (2, n) on CUDA device n."""
    arr = t._data
    return (_KDL_CUDA, arr.device_index) if type(arr) is DeviceArray else (_KDL_CPU, 0)


def to_dlpack(t: Tensor, stream=None, **kwargs):
    """A DLPack capsule sharing ``t``'s memory (the legacy ``"dltensor"`` capsule)."""
    if t.requires_grad:
        raise RuntimeError("Can't export a Tensor that requires grad through DLPack. Use "
                           "tensor.detach() first.")
    arr = t._data
    if type(arr) is not DeviceArray:
        return arr.__dlpack__()  # NumPy exports host memory itself
    # our kernels run on the default stream and are ordered with any consumer stream by
    # synchronising here (stream=None/-1 asks for no synchronisation)
    if stream not in (None, -1):
        from . import cuda
        cuda.synchronize(arr.device_index)
    return _make_capsule(arr, t)


def _make_capsule(arr: DeviceArray, keep) -> object:
    managed = _DLManagedTensor()
    ndim = arr.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*arr.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // arr.itemsize for s in arr.strides))
    tensor = managed.dl_tensor
    tensor.data = arr.data_ptr
    tensor.device = _DLDevice(_KDL_CUDA, arr.device_index)
    tensor.ndim = ndim
    tensor.dtype = _DLDataType(_DL_CODES[arr.dtype.kind], arr.itemsize * 8, 1)
    tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed.deleter = _release
    address = ctypes.addressof(managed)
    _exports[address] = (managed, shape, strides, arr, keep)
    return _api.PyCapsule_New(address, _CAPSULE_NAME,
                              ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with ``ext``, any object with ``__dlpack__`` (a NumPy array, a
    PyTorch/CuPy/JAX array, a dynagrad tensor) or a DLPack capsule.

    Example: ``dg.from_dlpack(torch_tensor)`` (no copy; a CUDA one becomes a dynagrad CUDA tensor).
    """
    if isinstance(ext, Tensor):
        return ext.detach()
    if hasattr(ext, "__dlpack_device__") and ext.__dlpack_device__()[0] == _KDL_CPU:
        return _host_tensor(np.from_dlpack(ext))
    if hasattr(ext, "__dlpack__"):
        capsule = ext.__dlpack__(stream=None) if hasattr(ext, "__dlpack_device__") and \
            ext.__dlpack_device__()[0] == _KDL_CUDA else ext.__dlpack__()
    else:
        capsule = ext  # a bare capsule (the older protocol)
    if not _api.PyCapsule_IsValid(capsule, _CAPSULE_NAME):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or an unused DLPack "
                        f"capsule, got {type(ext).__name__}")
    managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule, _CAPSULE_NAME),
                          ctypes.POINTER(_DLManagedTensor))
    dl = managed.contents.dl_tensor
    dtype = _numpy_dtype(dl.dtype)
    shape = tuple(dl.shape[k] for k in range(dl.ndim))
    if dl.strides:
        strides = tuple(dl.strides[k] * dtype.itemsize for k in range(dl.ndim))
    else:
        strides = _c_strides(shape, dtype.itemsize)
    ptr = (dl.data or 0) + dl.byte_offset
    if dl.device.device_type == _KDL_CPU:
        keeper = _DLPackOwner(managed)
        _api.PyCapsule_SetName(capsule, _USED_NAME)
        arr = np.asarray(_HostMemory(shape, strides, dtype, ptr, keeper))
        return _host_tensor(arr)
    if dl.device.device_type != _KDL_CUDA:
        raise RuntimeError(f"from_dlpack: device type {dl.device.device_type} is not supported "
                           "(dynagrad holds tensors on the CPU and CUDA GPUs)")
    keeper = _DLPackOwner(managed)
    _api.PyCapsule_SetName(capsule, _USED_NAME)  # we now own the tensor: the deleter is ours
    arr = _foreign(ptr, shape, strides, dtype, int(dl.device.device_id), keeper)
    return _wrap(arr, dtypes.from_numpy_dtype(dtype))


class _DLPackOwner:
    """Calls a consumed DLPack tensor's deleter once no dynagrad view needs its memory."""

    def __init__(self, managed):
        self._managed = managed

    def __del__(self):
        managed = self._managed
        if managed and managed.contents.deleter:
            managed.contents.deleter(managed)


class _HostMemory:
    """A host DLPack tensor described to NumPy (``np.asarray`` views it, keeping the owner)."""

    def __init__(self, shape, strides, dtype, ptr, owner):
        self.owner = owner
        self.__array_interface__ = {"version": 3, "shape": shape, "strides": strides,
                                    "typestr": dtype.str, "data": (ptr, False)}


def _numpy_dtype(dt: _DLDataType) -> np.dtype:
    kind = _NP_KINDS.get(dt.code)
    if kind is None or dt.lanes != 1:
        raise RuntimeError(f"from_dlpack: unsupported DLPack dtype (code {dt.code}, {dt.bits} "
                           f"bits, {dt.lanes} lanes)")
    return np.dtype(bool) if kind == "b" else np.dtype(f"{kind}{dt.bits // 8}")


def _host_tensor(arr: np.ndarray) -> Tensor:
    return _wrap(arr, dtypes.from_numpy_dtype(arr.dtype))


tensor_method("__cuda_array_interface__", property(cuda_array_interface))
tensor_method("__dlpack__", to_dlpack)
tensor_method("__dlpack_device__", dlpack_device)
