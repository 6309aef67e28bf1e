"""``torch.accelerator``: the device-agnostic accelerator API, answered from ``dg.cuda`` (CUDA is
dynagrad's only accelerator).

Without a usable GPU, ``is_available()`` is False, ``device_count()`` 0, ``current_accelerator()``
None, and the functions that need a device raise PyTorch's RuntimeError.

Example:
    >>> import dynagrad as dg
    >>> dev = dg.accelerator.current_accelerator() if dg.accelerator.is_available() else "cpu"
"""
from __future__ import annotations

import contextlib

from . import cuda as _cuda
from .device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "empty_cache", "get_device_capability", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_peak_memory_stats", "set_device_idx", "set_device_index",
           "synchronize"]


def _need() -> None:
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def is_available() -> bool:
    """Whether a GPU dynagrad can use is present."""
    return _cuda.is_available()


def device_count() -> int:
    """How many GPUs dynagrad can use (0 without one)."""
    return _cuda.device_count() if _cuda.is_available() else 0


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device("cuda")`` where a GPU is usable, else None (dynagrad decides this at run time, so
    ``check_available`` changes nothing)."""
    return _device("cuda") if _cuda.is_available() else None


def current_device_index() -> int:
    _need()
    return _cuda.current_device()


def set_device_index(device, /) -> None:
    _need()
    if device is not None:
        _cuda.set_device(device)


current_device_idx = current_device_index  # PyTorch's older names
set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(device, /):
    """Make ``device`` (an index; None: no change) current inside the block."""
    if device is None:
        yield
        return
    before = current_device_index()
    set_device_index(device)
    try:
        yield
    finally:
        set_device_index(before)


def synchronize(device=None, /) -> None:
    _need()
    _cuda.synchronize(device)


def empty_cache() -> None:
    _need()
    _cuda.empty_cache()


def get_device_capability(device=None, /) -> tuple:
    _need()
    return _cuda.get_device_capability(device)


def _memory(fn):
    def call(device_index=None, /):
        _need()
        return fn(device_index)
    call.__name__, call.__doc__ = fn.__name__, fn.__doc__
    return call


memory_allocated = _memory(_cuda.memory_allocated)
memory_reserved = _memory(_cuda.memory_reserved)
max_memory_allocated = _memory(_cuda.max_memory_allocated)
max_memory_reserved = _memory(_cuda.max_memory_reserved)
memory_stats = _memory(_cuda.memory_stats)
reset_peak_memory_stats = _memory(_cuda.reset_peak_memory_stats)
