"""Devices: ``"cpu"`` and ``"cuda"`` / ``"cuda:N"`` (NVIDIA GPUs through numba-cuda).

A device object is cheap and never touches CUDA; ``as_device`` checks that a CUDA device exists
when a tensor is about to be placed there.

Example:
    >>> import dynagrad as dg
    >>> dg.device("cpu")
    device(type='cpu')
"""
from __future__ import annotations


class device:
    """Where a tensor's memory lives: ``device("cpu")``, ``device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec="cpu", index: int | None = None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        if not isinstance(spec, str):
            raise TypeError(f"device: expected a string like 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, num = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(f"device: unknown device type {kind!r} (expected 'cpu' or 'cuda')")
        if num:
            if not num.isdigit():
                raise RuntimeError(f"device: invalid device string {spec!r}")
            index = int(num)
        self.type = kind
        self.index = index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")
_CUDA_DEVICES: dict = {}


def cuda_device(index: int) -> device:
    """The (shared) ``device('cuda', index)`` object."""
    d = _CUDA_DEVICES.get(index)
    if d is None:
        d = _CUDA_DEVICES[index] = device("cuda", index)
    return d


def as_device(spec) -> device:
    """Resolve a device argument (``None`` means the CPU); a CUDA device gets an explicit index and
    must exist (a clear error otherwise)."""
    if spec is None or spec is CPU:
        return CPU
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec = device("cuda", spec)
    d = spec if isinstance(spec, device) else device(spec)
    if d.type == "cpu":
        return CPU
    from .kernels.cuda import runtime as _runtime
    return cuda_device(_runtime.resolve(d, f"device {d}"))


_DEFAULT_DEVICE: list = [None]  # set_default_device's device; None: the CPU


def factory_device(spec) -> device:
    """The device a factory function (``zeros``, ``arange``, ``rand``...) creates on: ``spec``,
    or the default device (``set_default_device``) when ``spec`` is None."""
    return as_device(_DEFAULT_DEVICE[0] if spec is None else spec)


def get_default_device() -> device:
    """The device factory functions use when given none (the CPU unless set).

    Example:
        >>> import dynagrad as dg
        >>> dg.get_default_device()
        device(type='cpu')
    """
    return as_device(_DEFAULT_DEVICE[0])


def set_default_device(device) -> None:
    """Make factory functions (``zeros``, ``ones``, ``full``, ``arange``, ``rand``...) create on
    ``device`` when they are given none; None restores the CPU. ``tensor`` follows it too, as in
    PyTorch; ``*_like`` functions keep their input's device and ``as_tensor`` / ``from_numpy``
    share the array they are given, on the CPU."""
    _DEFAULT_DEVICE[0] = None if device is None else as_device(device)
