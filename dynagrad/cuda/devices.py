"""Which CUDA devices there are, which one is current, and waiting for them (PyTorch's names).

Example:
    >>> import dynagrad as dg
    >>> if dg.cuda.is_available():
    ...     with dg.cuda.device(0):
    ...         assert dg.cuda.current_device() == 0
"""
from __future__ import annotations

from ..kernels.cuda import runtime as _runtime

__all__ = ["is_available", "device_count", "current_device", "set_device", "device", "synchronize",
           "get_device_name", "get_device_capability"]


def is_available() -> bool:
    """True when CUDA tensors can be used: an NVIDIA GPU with numba-cuda, or numba's simulator
    (``NUMBA_ENABLE_CUDASIM=1``). Never raises.

    Example: ``dev = "cuda" if dg.cuda.is_available() else "cpu"``.
    """
    return _runtime.is_available()


def device_count() -> int:
    """The number of CUDA devices (0 without CUDA). Example: ``dg.cuda.device_count() >= 1``."""
    return _runtime.device_count()


def current_device() -> int:
    """The index of this thread's current CUDA device. Example: ``dg.cuda.current_device()``."""
    return _runtime.current_index("dg.cuda.current_device")


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a ``dg.device``) current for this thread.

    Example: ``dg.cuda.set_device(1)``; later ``dg.zeros(3, device="cuda")`` lives on cuda:1.
    """
    _runtime.set_current(_runtime.resolve(device, "dg.cuda.set_device"))


class device:
    """Context manager that makes a device current inside a ``with`` block, then restores the
    previous one. ``None`` or a negative index does nothing (as ``torch.cuda.device``).

    Example:
        >>> import dynagrad as dg
        >>> if dg.cuda.is_available():
        ...     with dg.cuda.device("cuda:0"):
        ...         x = dg.zeros(3, device="cuda")
    """

    def __init__(self, device):
        noop = device is None or (isinstance(device, int) and device < 0)
        self.idx = -1 if noop else _runtime.resolve(device, "dg.cuda.device")
        self.prev_idx = -1

    def __enter__(self) -> "device":
        if self.idx >= 0:
            self.prev_idx = _runtime.current_index("dg.cuda.device")
            _runtime.set_current(self.idx)
        return self

    def __exit__(self, *exc) -> None:
        if self.idx >= 0:
            _runtime.set_current(self.prev_idx)


def synchronize(device=None) -> None:
    """Wait until every kernel and copy queued on ``device`` (default: the current one) is done.

    Example: ``y = x * 2; dg.cuda.synchronize()`` before reading a wall-clock timer.
    """
    idx = _runtime.resolve(device, "dg.cuda.synchronize")
    cuda = _runtime.require("dg.cuda.synchronize")
    if idx == _runtime.current_index("dg.cuda.synchronize"):
        cuda.synchronize()
    else:
        with cuda.gpus[idx]:  # synchronize waits on the current context's device only
            cuda.synchronize()


def get_device_name(device=None) -> str:
    """The device's marketing name, e.g. ``'NVIDIA H100 80GB HBM3'`` (simulator: a fixed name)."""
    idx = _runtime.resolve(device, "dg.cuda.get_device_name")
    if _runtime.is_simulator():
        return "numba CUDA simulator"
    name = _runtime.require("dg.cuda.get_device_name").gpus[idx].name
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple:
    """The device's compute capability ``(major, minor)``, e.g. ``(9, 0)`` on an H100."""
    idx = _runtime.resolve(device, "dg.cuda.get_device_capability")
    major, minor = _runtime.require("dg.cuda.get_device_capability").gpus[idx].compute_capability
    return int(major), int(minor)
