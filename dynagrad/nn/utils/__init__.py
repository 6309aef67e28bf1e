"""PyTorch's ``nn.utils``: gradient clipping and flat-vector views of parameters (here), and
the submodules ``rnn`` (packed sequences), ``parametrize`` / ``parametrizations``, the older
hook-based ``weight_norm`` / ``spectral_norm``, ``fusion`` (``fuse_*_bn_*``), ``init``
(``skip_init``) and ``stateless`` (``functional_call``).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> w = nn.Parameter(dg.zeros(2))
    >>> w.grad = dg.tensor([3.0, 4.0])
    >>> nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
"""
from __future__ import annotations

import math
import warnings
from typing import Iterable

import numpy as np

from ...autograd.grad_mode import no_grad
from ...creation import tensor as make_tensor
from ...errors import describe
from ...ops.movement import cat
from ...ops.nn.grad_norm import tensor_norm, vector_norm
from ...ops.placement import host_array, like
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "get_total_norm", "parameters_to_vector", "parametrizations",
           "parametrize", "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init",
           "spectral_norm", "stateless", "vector_to_parameters", "weight_norm"]

_TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _TensorOrTensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors: _TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (as if all were one vector)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return make_tensor(0.0)
    norms = [tensor_norm(t, norm_type) for t in tensors]
    total = vector_norm(np.array(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    dt = tensors[0].dtype
    return like(np.asarray(total, dtype=dt.np), tensors[0], dt)


def clip_grads_with_norm_(parameters: _TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale every gradient by ``min(1, max_norm / (total_norm + 1e-6))`` in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    dt = total_norm.dtype.np
    # the coefficient is computed in the norm's dtype, as PyTorch does with its tensor arithmetic
    coef = dt.type(max_norm) / (host_array(total_norm).astype(dt) + dt.type(1e-6))
    coef = float(min(coef, dt.type(1.0)))
    with no_grad():
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Rescale the gradients of ``parameters`` so their joint ``norm_type``-norm is at most
    ``max_norm``; returns the norm before clipping. ``norm_type`` may be ``inf``."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_`` (a ``FutureWarning``, as in PyTorch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float, foreach=None) -> None:
    """Clamp every gradient into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    flats = []
    for p in parameters:
        if not isinstance(p, Tensor):
            raise TypeError(f"parameters_to_vector: expected Tensors, got {describe(p)}")
        flats.append(p.reshape(-1))
    return cat(flats)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the matching slice of ``vec`` (shares ``vec``'s memory)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected dynagrad.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    needed = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != needed:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {needed} elements "
                           f"(the parameters' total size), got {describe(vec)}")
    pointer = 0
    for p in params:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n

# PyTorch's nn.utils namespace: its submodules and their public functions (imported last: the
# submodules use nothing from this file)
from . import parametrizations, parametrize, rnn, stateless  # noqa: E402,F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,  # noqa: E402,F401
                     fuse_linear_bn_eval, fuse_linear_bn_weights)
from .init import skip_init  # noqa: E402,F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402,F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402,F401
