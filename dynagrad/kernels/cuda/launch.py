"""Launch a compiled CUDA kernel with as little host work per launch as numba's argument ABI allows.

A dynagrad kernel is compiled for one signature (``cache._compile_cuda``), so everything numba's
``kernel[grid, block](*args)`` re-derives on every launch - the launch configuration object, the
stream object, the current context, a wrapper and a layout object per array - never changes. A
``Launcher`` derives it once and packs each argument straight into the values numba's ABI expects
(an array is ``meminfo, parent, size, itemsize, data, *shape, *strides``; a scalar a ctypes value
of its declared type). Packed here, a launch costs a fraction of the host time numba's
dispatcher spends on it.

A kernel whose signature holds a type packed nowhere here, or one compiled in debug or cooperative
mode, launches through numba's dispatcher as before; so does every kernel, after one warning, if a
numba-cuda release has moved the internals read here (written against numba-cuda 0.30). The
simulator never gets here: its kernels are Python functions the simulator runs.

Example (on a GPU)::

    launcher = Launcher(dispatcher, "add")   # dispatcher: compiled for one signature
    launcher[blocks, threads](x, y, out)     # numba device arrays and scalars, as numba takes them
"""
from __future__ import annotations

import ctypes
import threading
import warnings

import numpy as np

from . import runtime as _runtime


def _array_packer(ty, position: int, what: str):
    from numba.cuda.np import numpy_support
    dtype = numpy_support.as_dtype(ty.dtype)
    ndim, itemsize = ty.ndim, dtype.itemsize

    def pack(arg, out: list) -> None:
        if arg.ndim != ndim or arg.dtype != dtype:
            raise TypeError(f"CUDA kernel {what}: argument {position} must be a {ndim}-d {dtype} "
                            f"device array, got {arg.ndim}-d {arg.dtype}")
        out += (0, 0, arg.size, itemsize, arg.device_ctypes_pointer.value or 0)
        out += arg.shape
        out += arg.strides
    return pack


def _scalar_packer(convert):
    def pack(arg, out: list) -> None:
        out.append(convert(arg))
    return pack


def _as_is(value):
    return value


def _half_bits(value) -> ctypes.c_uint16:
    return ctypes.c_uint16(int(np.float16(value).view(np.uint16)))


def _packer(ty, position: int, what: str, types):
    """How to pack an argument of numba type ``ty`` (as numba's ``_Kernel._prepare_args``), or
    None when this module does not handle that type."""
    if isinstance(ty, types.Array):
        return _array_packer(ty, position, what)
    if isinstance(ty, types.Integer):
        return _scalar_packer(getattr(ctypes, f"c_{ty}"))
    if ty == types.float32:
        return _scalar_packer(ctypes.c_float)
    if ty == types.float64:
        return _scalar_packer(ctypes.c_double)
    if ty == types.float16:
        return _scalar_packer(_half_bits)
    if ty == types.boolean:
        return _scalar_packer(_as_is)  # numba passes booleans as they are
    return None


_thread = threading.local()  # .token: this thread's key in the loaded-function tables


def _thread_token() -> object:
    """An object unique to the calling thread for as long as the process runs (a thread id can be
    reused by a later thread, which would then skip making the device's context current)."""
    token = getattr(_thread, "token", None)
    if token is None:
        token = _thread.token = object()
    return token


_core: dict = {}     # cuda.core's launch, LaunchConfig and the default stream, found once
_configs: dict = {}  # (grid, block) -> cuda.core LaunchConfig, shared by every kernel


def _load_core() -> None:
    from cuda.core import LaunchConfig, Stream, launch
    _core.update(launch=launch, config=LaunchConfig, stream=Stream.from_handle(0))


def config(grid, block):
    """cuda.core's launch configuration for ``(grid, block)``, made once (``launch_values``
    takes it)."""
    made = _configs.get((grid, block))
    if made is None:
        made = _configs[(grid, block)] = _core["config"](grid=grid, block=block)
    return made


class Launcher:
    """``launcher[grid, block](*args)`` launches ``dispatcher``'s one compiled kernel on the
    default stream, as ``dispatcher[grid, block](*args)`` would."""

    __slots__ = ("dispatcher", "_kernel", "_pack", "_functions", "_what")

    def __init__(self, dispatcher, what: str):
        from numba.cuda import types
        kernel = next(iter(dispatcher.overloads.values()))
        packers = tuple(_packer(t, i, what, types) for i, t in enumerate(kernel.argument_types))
        if None in packers or kernel.extensions or kernel.debug or kernel.cooperative:
            raise NotImplementedError(f"{what}: launched through numba's dispatcher")
        if not _core:
            _load_core()
        self.dispatcher, self._kernel, self._pack, self._what = dispatcher, kernel, packers, what
        self._functions: dict = {}  # (thread token, device) -> the loaded kernel function
        self._function((_thread_token(), _runtime.current_index()))  # fails here, if at all

    def __getitem__(self, launch):
        grid, block = launch
        made = config(grid, block)
        return lambda *args: self._launch(made, args)

    def _function(self, key: tuple):
        # numba loads the module into the device's context and makes that context current in
        # this thread: a thread that has not launched on this device yet goes through it once.
        function = self._functions[key] = self._kernel._codelibrary.get_cufunc().kernel
        return function

    def _launch(self, launch_config, args: tuple) -> None:
        if len(args) != len(self._pack):
            raise TypeError(f"CUDA kernel {self._what}: {len(self._pack)} arguments expected, "
                            f"got {len(args)}")
        values: list = []
        for pack, arg in zip(self._pack, args):
            pack(arg, values)
        self.launch_values(launch_config, values)

    def pack(self, position: int, arg, values: list) -> None:
        """Append argument ``position``'s values for ``arg`` (a numba device array or scalar)."""
        self._pack[position](arg, values)

    def launch_values(self, launch_config, values: list) -> None:
        """Launch with arguments already packed (``pack``, or ``flat_array_values`` for a 1-D
        unit-stride array parameter) under a configuration from ``config(grid, block)``."""
        key = (_thread_token(), _runtime.current_index())
        function = self._functions.get(key) or self._function(key)
        _core["launch"](_core["stream"], launch_config, function, *values)


def flat_array_values(address: int, n: int, itemsize: int) -> tuple:
    """What numba's ABI passes for a 1-D unit-stride array of ``n`` items at ``address``."""
    return (0, 0, n, itemsize, address, n, itemsize)


_warned: list = []


def launcher(dispatcher, what: str):
    """A ``Launcher`` for ``dispatcher``, or the dispatcher itself where one cannot pack its
    arguments (see the module docstring)."""
    try:
        return Launcher(dispatcher, what)
    except NotImplementedError:
        return dispatcher
    except (AttributeError, ImportError, StopIteration, TypeError) as exc:
        if not _warned:
            _warned.append(exc)
            warnings.warn(f"dynagrad: this numba-cuda's launch internals differ from those "
                          f"dynagrad packs arguments for ({exc!r}); CUDA kernels launch through "
                          f"numba's dispatcher instead, correct but ~30 us slower each",
                          RuntimeWarning, stacklevel=2)
        return dispatcher
