"""Batch, layer, group, instance and RMS normalisation: the registered ops of
``dynagrad.ops.nn.norm`` re-exported (torch.nn.functional's names and signatures).
"""
from ...ops.nn.norm import (batch_norm, group_norm, instance_norm, layer_norm,
                            rms_norm)  # noqa: F401

from ...creation import zeros
from ...ops.movement import cat
from ...tensor import Tensor

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "local_response_norm"]


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Local response normalisation over channels (dim 1 of an ``(N, C, ...)`` input):
    ``x / (k + alpha * mean of x**2 over the size neighbouring channels) ** beta``; the window
    of channel ``c`` is ``[c - size // 2, c + (size - 1) // 2]``, zero-padded at the ends.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> y = F.local_response_norm(dg.ones(1, 2, 1), 2, alpha=1.0, beta=1.0)
        >>> [round(v, 4) for v in y.flatten().tolist()]    # 1 / (1 + 1/2), 1 / (1 + 2/2)
        [0.6667, 0.5]
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         f"dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    shape = list(input.shape)
    before, after = size // 2, (size - 1) // 2
    parts = [sq]
    if before:
        parts.insert(0, zeros(*([shape[0], before] + shape[2:]), dtype=sq.dtype,
                              device=sq.device))
    if after:
        parts.append(zeros(*([shape[0], after] + shape[2:]), dtype=sq.dtype, device=sq.device))
    padded = cat(parts, 1)
    window = padded.narrow(1, 0, c)
    for j in range(1, size):
        window = window + padded.narrow(1, j, c)
    return input / (window * (alpha / size) + k).pow(beta)
