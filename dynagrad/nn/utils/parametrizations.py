"""Ready-made parametrizations (PyTorch's ``torch.nn.utils.parametrizations``):
``weight_norm``, ``spectral_norm`` and ``orthogonal``, each registered through
``nn.utils.parametrize`` so the originals live in ``module.parametrizations.<name>``.

Example:
    >>> from dynagrad import nn
    >>> m = weight_norm(nn.Linear(3, 4))
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..functional import normalize
from ..module import Module
from . import parametrize
from .spectral_norm import default_dim, weight_to_matrix
from .weight_norm import norm_except_dim, weight_norm_value

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """``forward(g, v) = g * v / ||v||`` (norm over every dimension but ``dim``; ``None``
    or -1: the whole tensor); ``right_inverse(w) = (||w||, w)``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||``: ``original0`` is the magnitude
    ``g`` (the norm over every dimension but ``dim``), ``original1`` the direction ``v``.
    A state_dict saved with the older ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``)
    loads into the module too.

    Example:
        >>> from dynagrad import nn
        >>> m = weight_norm(nn.Linear(3, 4))
        >>> tuple(m.parametrizations.weight.original0.shape)
        (4, 1)
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    _accept_old_weight_norm_keys(module, name)
    return module


def _accept_old_weight_norm_keys(module: Module, name: str) -> None:
    """Let ``load_state_dict`` take the older ``<name>_g`` / ``<name>_v`` keys: they are
    renamed to ``parametrizations.<name>.original0/1`` before this module loads its entries.
    (The class is the module's own ``Parametrized*`` subclass, so this touches no other
    module.)"""
    cls = type(module)
    previous = cls._load_from_state_dict

    def load(self, state_dict, prefix, *args, **kwargs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
        previous(self, state_dict, prefix, *args, **kwargs)

    cls._load_from_state_dict = load


class _SpectralNorm(Module):
    """``forward(W) = W / sigma(W)`` with ``sigma`` estimated by power iteration on the
    buffers ``_u`` and ``_v`` (updated in training mode only); a 1-D weight is normalised."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = weight_to_matrix(weight, self.dim)
            h, w = weight_mat.shape
            with no_grad():
                u = normalize(weight_mat.new_empty(h).normal_(0, 1), dim=0, eps=eps)
                v = normalize(weight_mat.new_empty(w).normal_(0, 1), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)  # a good estimate from the start

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(weight_mat.mH.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = weight_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # constants of the graph, not the live buffers
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as itself divided by its spectral norm (largest
    singular value of the weight reshaped to ``(size(dim), -1)``), estimated by
    ``n_power_iterations`` power steps per forward in training mode. ``dim`` defaults to 1 for
    transposed convolutions, else 0.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> m = spectral_norm(nn.Linear(3, 4))
        >>> [k.rpartition(".")[2] for k in sorted(m.state_dict())]
        ['bias', '_u', '_v', 'original']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = default_dim(module) if dim is None else dim
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
