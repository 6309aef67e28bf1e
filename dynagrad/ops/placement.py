"""Tensors and devices: the device an op's tensors share, and moving a tensor between devices
(the buffer-level helpers are ``kernels.buffers``).

Example:
    >>> import dynagrad as dg
    >>> x = dg.ones(2, requires_grad=True)
    >>> x.to("cpu") is x
    True
"""
from __future__ import annotations

from ..device import CPU, as_device
from ..errors import describe
from ..kernels.buffers import device_index, move_array
from ..tensor import Tensor, _wrap


def common_device(op: str, tensors) -> int | None:
    """``None`` when every tensor is on the CPU, the CUDA device index when all are on one GPU;
    a RuntimeError naming both devices when they are mixed."""
    index = first = None
    for t in tensors:
        here = device_index(t._data)
        if first is None:
            first, index = t, here
        elif here != index:
            raise RuntimeError(
                f"{op}: expected all tensors to be on the same device, but found at least two "
                f"devices, {first.device} and {t.device} (got {describe(first)} and "
                f"{describe(t)})")
    return index


def to_device(t: Tensor, device, copy: bool = False) -> Tensor:
    """``t`` on ``device`` (differentiable: the gradient goes back to ``t``'s device)."""
    dev = as_device(device)
    index = None if dev is CPU else dev.index
    src = t._data
    if device_index(src) == index:
        return t.clone() if copy else t
    out = _wrap(move_array(src, index), t.dtype)
    from ..autograd import grad_mode
    if t._requires_grad and grad_mode.GRAD_ENABLED[0]:
        from .movement import _attach, _to_back
        _attach("ToCopyBackward0", t, out, _to_back, src_dtype=t.dtype, src_device=t.device)
    return out
