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
from ...ops.placement import like
from ...tensor import Tensor

__all__ = ["l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "huber_loss", "smooth_l1_loss", "kl_div",
           "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss", "pairwise_distance",
           "cosine_similarity", "one_hot", "normalize"]
__all__ += ["pdist"]


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
