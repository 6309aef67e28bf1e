"""Convolutions, transposed convolutions and unfold / fold: the registered ops of
``dynagrad.ops.nn.conv`` re-exported (torch.nn.functional's names and signatures).
"""
from ...ops.nn.conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
                            conv_transpose3d, fold, unfold)  # noqa: F401

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "unfold", "fold"]
