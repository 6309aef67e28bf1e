"""Loss functions and the distances and encodings they use: the registered ops of
``dynagrad.ops.nn.loss`` re-exported with the compositions of ops written beside them
(torch.nn.functional's names and signatures).
"""
from ...ops.nn.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                            cosine_embedding_loss, cosine_similarity, cross_entropy, ctc_loss,
                            gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
                            margin_ranking_loss, mse_loss, multi_margin_loss,
                            multilabel_soft_margin_loss, nll_loss, normalize, one_hot,
                            pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
                            triplet_margin_loss)  # noqa: F401

__all__ = ["l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "huber_loss", "smooth_l1_loss", "kl_div",
           "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss", "pairwise_distance",
           "cosine_similarity", "one_hot", "normalize"]
