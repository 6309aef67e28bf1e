"""Loss functions and the distances and encodings they use: the registered ops of
``dynagrad.ops.nn.loss`` re-exported with the compositions of ops written beside them
(torch.nn.functional's names and signatures).
"""
from __future__ import annotations

import numpy as np

from ...dtypes import int64
from ...errors import describe
from ...ops.elementwise import where
from ...ops.nn.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                            cosine_embedding_loss, cosine_similarity, cross_entropy, ctc_loss,
                            gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
                            margin_ranking_loss, mse_loss, multi_margin_loss,
                            multilabel_soft_margin_loss, nll_loss, normalize, one_hot,
                            pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
                            triplet_margin_loss)  # noqa: F401
from ...ops.nn.loss import _checked_reduction, _reduce
from ...ops.placement import like
from ...tensor import Tensor

__all__ = ["l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "huber_loss", "smooth_l1_loss", "kl_div",
           "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss", "pairwise_distance",
           "cosine_similarity", "one_hot", "normalize"]
__all__ += ["pdist", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between the rows of an ``(N, M)`` input, for every pair
    ``i < j`` in row-major order: ``N * (N - 1) / 2`` values (the condensed form of
    ``scipy.spatial.distance.pdist``). A pair of equal rows gets a zero gradient, as in PyTorch.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.pdist(dg.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes (got {describe(input)})")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    first, second = np.triu_indices(input.shape[0], 1)
    diff = (input.index_select(0, like(first, input, int64))
            - input.index_select(0, like(second, input, int64)))
    # a zero difference has no p-norm gradient (|d|^(p-1) / 0): such rows take a stand-in of
    # ones through the norm and a zero distance (with zero gradient) out of it
    same = (diff == 0).all(1, keepdim=True)
    dist = where(same, 1.0, diff).norm(p, dim=1)
    return where(same.squeeze(1), 0.0, dist)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Multi-class multi-label hinge loss. ``target`` (int64, the shape of ``input``: ``(C,)`` or
    ``(N, C)``) lists each sample's target classes, ended by the first ``-1``; the loss of a
    sample is ``sum over targets j and non-targets i of max(0, 1 - (x[j] - x[i])) / C``.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.multilabel_margin_loss(dg.tensor([[0.1, 0.2, 0.4, 0.8]]), dg.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _checked_reduction("multilabel_margin_loss", size_average, reduce, reduction)
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError("multilabel_margin_loss(): input and target must be Tensors")
    if target.dtype != int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape) or (
            input.ndim == 0 and target.numel() != 1):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input.reshape(-1, input.shape[-1] if input.ndim else 1)
    c = x.shape[1]
    t = np.asarray(target.detach().cpu().numpy()).reshape(x.shape)
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    # the targets of a row are its entries before the first -1
    listed = np.cumprod(t != -1, axis=1).astype(bool)
    is_target = np.zeros(t.shape, dtype=bool)
    rows = np.nonzero(listed)[0]
    is_target[rows, t[listed]] = True
    xt = x.gather(1, like(np.where(listed, t, 0), x, int64))               # (N, C) target scores
    pair = like(listed[:, :, None] & ~is_target[:, None, :], x, x.dtype)  # (target j, other i)
    hinge = (1.0 - xt.unsqueeze(2) + x.unsqueeze(1)).relu() * pair
    loss = hinge.sum((1, 2)) / c
    return _reduce(loss.reshape(tuple(input.shape[:-1])) if input.ndim else loss.reshape(()),
                   reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (``pairwise_distance`` by
    default); ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> a, p, n = dg.zeros(1, 2), dg.tensor([[3.0, 4.0]]), dg.tensor([[0.0, 1.0]])
        >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y:
        ...     (x - y).abs().sum(-1))
        tensor(7.)
    """
    _checked_reduction("triplet_margin_with_distance_loss", None, None, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = [t.ndim for t in (anchor, positive, negative)]
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_swap = dist(positive, negative)
        d_neg = where(d_swap < d_neg, d_swap, d_neg)
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)
