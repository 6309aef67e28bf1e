"""Hook-based weight normalisation (PyTorch's deprecated ``torch.nn.utils.weight_norm``):
``weight = g * v / ||v||`` with the parameters ``weight_g`` and ``weight_v``, recomputed by a
forward pre-hook. ``nn.utils.parametrizations.weight_norm`` is the newer form.

The norm is taken over every dimension but ``dim``; ``dim=None`` (or -1, as in PyTorch) takes
it over the whole tensor.

Example:
    >>> from dynagrad import nn
    >>> m = weight_norm(nn.Linear(3, 4))
    >>> sorted(m.state_dict()), tuple(m.weight_g.shape)
    (['bias', 'weight_g', 'weight_v'], (4, 1))
"""
from __future__ import annotations

import warnings

from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, keeping ``v``'s rank (``dim``
    = -1: the norm of the whole tensor, a 0-d tensor), as ``torch.norm_except_dim``."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.ndim
    others = tuple(d for d in range(v.ndim) if d != dim)
    # a 1-D tensor kept along its only dimension: each entry is its own group
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs()


def weight_norm_value(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))`` (``torch._weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: sets ``module.<name>`` from ``<name>_g`` and
    ``<name>_v`` before every forward."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return weight_norm_value(getattr(module, self.name + "_v"),
                                 getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> "WeightNorm":
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace parameter ``name`` by ``name_g`` (magnitude) and ``name_v`` (direction),
    ``name = name_g * name_v / ||name_v||`` recomputed before every forward. Deprecated in
    PyTorch (a ``FutureWarning``) for ``nn.utils.parametrizations.weight_norm``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``name`` becomes one parameter again holding its current value.

    Example:
        >>> from dynagrad import nn
        >>> sorted(remove_weight_norm(weight_norm(nn.Linear(2, 2))).state_dict())
        ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
