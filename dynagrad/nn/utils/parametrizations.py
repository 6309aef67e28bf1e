"""Ready-made parametrizations (PyTorch's ``torch.nn.utils.parametrizations``):
``weight_norm``, ``spectral_norm`` and ``orthogonal``, each registered through
``nn.utils.parametrize`` so the originals live in ``module.parametrizations.<name>``.

``orthogonal``'s maps are ``linalg.matrix_exp``, the Cayley transform (``linalg.solve``) and
``linalg.householder_product``; with ``use_trivialization=False`` its ``right_inverse`` runs
LAPACK's geqrf through SciPy on the host (a host round trip on CUDA).

Example:
    >>> from dynagrad import nn
    >>> m = weight_norm(nn.Linear(3, 4))
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from __future__ import annotations

from enum import Enum, auto

import numpy as np

from ...autograd.grad_mode import no_grad
from ...creation import eye
from ...ops.decompositions import householder_product, matrix_exp, qr, solve
from ...ops.movement import cat
from ...ops.placement import host_array, like
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


# --- orthogonal ---------------------------------------------------------------------------------
def _eye_like(x: Tensor, n: int) -> Tensor:
    return eye(n, dtype=x.dtype, device=x.device)


def _is_orthogonal(q: Tensor) -> bool:
    """``q^H q == I`` up to ``10 n eps`` (``allclose``'s tolerances, as PyTorch's check)."""
    n, k = q.shape[-2], q.shape[-1]
    ident = _eye_like(q, k)
    atol = 10.0 * n * np.finfo(q.real.dtype.np if q.is_complex() else q.dtype.np).eps
    return bool(((q.mH @ q - ident).abs() <= atol + 1e-5 * ident.abs()).all())


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a = QR`` with ``R``'s diagonal made real positive (unique for full rank)."""
    q, r = qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _geqrf_signs(a: Tensor) -> Tensor:
    """LAPACK geqrf's Householder reflectors of ``a`` (below the diagonal), the diagonal
    replaced by the signs that make ``householder_product`` rebuild ``a``'s Q with them
    (host SciPy, real matrices)."""
    arr = host_array(a.detach()).astype(np.float64)
    flat = arr.reshape((-1,) + arr.shape[-2:])
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        import scipy.linalg  # on first use: see ops/decompositions._scipy_linalg
        (raw, tau), _ = scipy.linalg.qr(m, mode="raw")
        signs = np.sign(np.diagonal(raw)).copy()
        signs[tau == 0.0] *= -1
        out[i] = raw
        np.fill_diagonal(out[i], signs)
    return like(out.reshape(arr.shape).astype(a.dtype.np), a, a.dtype)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps an unconstrained matrix to an orthogonal one (or one with orthonormal columns /
    rows when not square). With ``use_trivialization`` the map is composed with a fixed
    orthogonal ``base`` (a buffer) that assignment resets, so training starts near it."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], -1)
            A = X - X.mH  # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:  # the Cayley transform (I - A/2)^-1 (I + A/2)
                ident = _eye_like(A, n)
                Q = solve(ident - 0.5 * A, ident + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau)
            # the sign of each column comes from X's diagonal (-1, 0 or 1 after truncation)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().to(Q.dtype).unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            a = _geqrf_signs(Q)
            return a.mT if transpose else a
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete the columns with random ones, then orthonormalise
            Q = _make_orthogonal(cat([Q, Q.new_empty(*Q.shape[:-2], n, n - k).normal_()], -1))
        self.base = Q
        neg_id = q_init.new_zeros(q_init.shape)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (or to
    have orthonormal columns / rows when not square).

    ``orthogonal_map``: ``"matrix_exp"`` (default for square matrices), ``"cayley"`` or
    ``"householder"`` (default otherwise). With ``use_trivialization`` (the default) the map
    is applied to a stored orthogonal ``base``, which assigning ``module.<name> = Q`` resets
    to ``Q``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> m = orthogonal(nn.Linear(3, 3))
        >>> bool(((m.weight @ m.weight.T - dg.eye(3)).abs() < 1e-5).all())
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
