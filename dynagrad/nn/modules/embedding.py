"""``Embedding``: a lookup table of learnable vectors indexed by integers.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> emb = nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(dg.tensor([[0, 4], [9, 0]])).shape
    dynagrad.Size([2, 2, 3])
    >>> emb.weight[0].tolist()
    [0.0, 0.0, 0.0]
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import empty
from ...errors import describe
from ...tensor import Tensor
from .. import init
from ..functional import misc as F
from ..functional.embedding import MODES, embedding_bag
from ..module import Module
from ..parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """``num_embeddings`` vectors of size ``embedding_dim``, initialised from N(0, 1); the
    ``padding_idx`` row starts at zero and never receives gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: Padding_idx must be within num_embeddings (got "
                                 f"padding_idx={padding_idx}, num_embeddings={num_embeddings})")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype,
                                          device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: shape of weight {describe(_weight)} does not match "
                                 f"num_embeddings and embedding_dim "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """N(0, 1) entries, with the padding row zeroed."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose table is ``embeddings`` (2-D; shared, not copied), frozen by default.

        Example:
            >>> import dynagrad as dg
            >>> from dynagrad import nn
            >>> emb = nn.Embedding.from_pretrained(dg.tensor([[1.0, 2.0], [3.0, 4.0]]))
            >>> emb(dg.tensor([1])), emb.weight.requires_grad
            (tensor([[3., 4.]]), False)
        """
        if embeddings.ndim != 2:
            raise ValueError(f"Embeddings parameter is expected to be 2-dimensional, got "
                             f"{describe(embeddings)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                   sparse=sparse)


class EmbeddingBag(Module):
    """A table of ``num_embeddings`` vectors whose forward returns the ``sum``, ``mean`` or
    ``max`` of the rows of each bag of indices (``F.embedding_bag``), without materialising the
    per-index rows' output; initialised from N(0, 1), the ``padding_idx`` row at zero.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(dg.tensor([1, 2, 4, 5, 4]), dg.tensor([0, 2])).shape
        dynagrad.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None, device=None,
                 dtype=None) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError("mode has to be one of sum, mean or max")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError(f"padding_idx must be within num_embeddings (got "
                                     f"padding_idx={padding_idx}, num_embeddings="
                                     f"{num_embeddings})")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype,
                                          device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(f"Shape of weight does not match num_embeddings and "
                                     f"embedding_dim (got {describe(_weight)}, expected "
                                     f"({num_embeddings}, {embedding_dim}))")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        """N(0, 1) entries, with the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                             self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings`` (2-D; shared), frozen by default."""
        if embeddings.ndim != 2:
            raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional, got "
                                 f"{describe(embeddings)}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
