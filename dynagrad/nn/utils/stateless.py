"""``functional_call`` under PyTorch's deprecated ``torch.nn.utils.stateless`` path: the same
function as ``dg.func.functional_call``, with PyTorch's deprecation warning.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> import warnings; warnings.simplefilter("ignore", FutureWarning)
    >>> m = nn.Linear(2, 1)
    >>> functional_call(m, {"weight": dg.ones(1, 2), "bias": dg.zeros(1)}, dg.tensor([[1.0, 2.0]]))
    tensor([[3.]])
"""
from __future__ import annotations

import warnings

from ... import func
from ..module import Module

__all__ = ["functional_call"]


def functional_call(module: Module, parameters_and_buffers: dict, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``dg.func.functional_call`` for one dict, warning as PyTorch does (a ``FutureWarning``)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return func.functional_call(module, parameters_and_buffers, args, kwargs,
                                tie_weights=tie_weights, strict=strict)
