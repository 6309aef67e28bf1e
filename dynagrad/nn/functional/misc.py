"""Dropout, embedding, pixel (un)shuffle and interpolation: the registered ops of
``dynagrad.ops.nn.misc`` re-exported with the compositions of ops written beside them
(torch.nn.functional's names and signatures).
"""
from ...ops.nn.misc import (dropout, dropout1d, dropout2d, dropout3d, embedding, interpolate,
                            pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear,
                            upsample_nearest)  # noqa: F401

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "embedding", "pixel_shuffle",
           "pixel_unshuffle", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]
