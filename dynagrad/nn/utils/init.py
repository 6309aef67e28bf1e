"""``skip_init`` (PyTorch's ``torch.nn.utils.init``)."""
from __future__ import annotations

import inspect

from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs) -> Module:
    """Build ``module_cls(*args, **kwargs)`` whose parameters and buffers hold unspecified
    values (the caller initialises them). The class must take a ``device`` argument, as in
    PyTorch. dynagrad has no ``meta`` device to skip the work on: the module's own
    initialisation runs, and the values must still be treated as unspecified.

    Example:
        >>> from dynagrad import nn
        >>> tuple(skip_init(nn.Linear, 5, 1).weight.shape)
        (1, 5)
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    return module_cls(*args, **kwargs)
