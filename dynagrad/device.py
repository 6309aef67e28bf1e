"""Devices. This build computes on the CPU; ``"cuda"`` is recognised and refused with a clear error
until the CUDA backend lands.

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


def as_device(spec) -> device:
    """Resolve a device argument; only the CPU can hold tensors in this build."""
    if spec is None or spec is CPU:
        return CPU
    d = spec if isinstance(spec, device) else device(spec)
    if d.type != "cpu":
        raise RuntimeError(f"device {d}: dynagrad was not built with CUDA support in this version "
                           "(dg.cuda.is_available() is False); use device='cpu'")
    return CPU
