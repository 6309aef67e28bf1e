"""``linear`` (a registered op, ``dynagrad.ops.nn.linear``, re-exported) and ``bilinear``, a
composition of ops: the affine maps behind ``nn.Linear`` and ``nn.Bilinear``.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.nn.functional.linear import bilinear
    >>> bilinear(dg.ones(1, 2), dg.ones(1, 3), dg.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
"""
from __future__ import annotations

from ...errors import describe
from ...ops.linalg import einsum
from ...ops.nn.linear import linear
from ...tensor import Tensor

__all__ = ["linear", "bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"bilinear(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if input1.ndim == 0 or input1.ndim != input2.ndim or \
            tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{describe(input1)} and {describe(input2)}")
    if weight.ndim != 3 or weight.shape[1] != input1.shape[-1] or \
            weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): expected weight of shape (out, {input1.shape[-1]}, "
                           f"{input2.shape[-1]}) for inputs {describe(input1)} and "
                           f"{describe(input2)}, got weight {describe(weight)}")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"bilinear(): expected bias of shape ({weight.shape[0]},), got "
                           f"{describe(bias)}")
    batch = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out = einsum("ni,oij,nj->no", x1, weight, x2)
    if bias is not None:
        out = out + bias
    return out.reshape(batch + (weight.shape[0],))
