"""Batch, layer, group, instance and RMS normalisation: the registered ops of
``dynagrad.ops.nn.norm`` re-exported (torch.nn.functional's names and signatures).
"""
from ...ops.nn.norm import (batch_norm, group_norm, instance_norm, layer_norm,
                            rms_norm)  # noqa: F401

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm"]
