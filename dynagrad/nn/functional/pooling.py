"""Max, average (1-D to 3-D) and adaptive pooling: the registered ops of
``dynagrad.ops.nn.pooling`` re-exported (torch.nn.functional's names and signatures).
"""
from ...ops.nn.pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
                               adaptive_max_pool2d, avg_pool1d, avg_pool2d, avg_pool3d,
                               max_pool1d, max_pool2d, max_pool3d)  # noqa: F401

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d"]
