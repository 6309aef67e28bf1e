"""Transformer blocks as PyTorch's: ``Transformer`` (encoder-decoder), ``TransformerEncoderLayer``,
``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder`` (same submodule names,
so state_dicts match).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> layer = nn.TransformerEncoderLayer(16, nhead=4, dim_feedforward=32, batch_first=True)
    >>> enc = nn.TransformerEncoder(layer, num_layers=2)
    >>> tuple(enc(dg.randn(2, 5, 16)).shape)
    (2, 5, 16)
"""
from __future__ import annotations

import copy
from typing import Callable

from ... import creation
from ...tensor import Tensor
from .. import init
from ..functional.activation import gelu, relu
from ..module import Module
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .norm import LayerNorm

__all__ = ["Transformer", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "generate_square_subsequent_mask"]


def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """A float ``(sz, sz)`` causal mask: 0 on and below the diagonal, -inf above (as
    ``torch.nn.Transformer.generate_square_subsequent_mask``)."""
    return creation.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _activation(activation) -> Callable:
    if isinstance(activation, str):
        if activation == "relu":
            return relu
        if activation == "gelu":
            return gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class _LayerMixin:
    """What encoder and decoder layers share: the feed-forward block, the per-block LayerNorms
    and dropouts, and the self-attention block."""

    def _init_blocks(self, d_model: int, dim_feedforward: int, dropout: float, activation,
                     layer_norm_eps: float, norm_first: bool, bias: bool, n_blocks: int,
                     kw: dict) -> None:
        """Register ``linear1 dropout linear2``, then ``norm1..n`` and ``dropout1..n`` for
        ``n_blocks`` residual blocks, in PyTorch's order (so state_dicts and reprs match)."""
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, n_blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, n_blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor, out_dropout: Dropout) -> Tensor:
        return out_dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_LayerMixin, Module):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm
    (after the residual, or before each block with ``norm_first=True``).

    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self._init_blocks(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                          norm_first, bias, 2, kw)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x), self.dropout2)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x, self.dropout2))
        return x


class TransformerDecoderLayer(_LayerMixin, Module):
    """Self-attention, attention over ``memory``, then feed-forward; residual + LayerNorm each.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)
        self._init_blocks(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                          norm_first, bias, 3, kw)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(x)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            x = x + self._ff_block(self.norm3(x), self.dropout3)
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x, self.dropout3))
        return x


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` (``layers.0``, ``layers.1``, ...), then the
    optional ``norm``. ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)``."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer``, then the optional ``norm``."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need": ``encoder`` (a
    ``TransformerEncoder`` of ``num_encoder_layers`` layers and a final ``LayerNorm``) reads
    ``src``; ``decoder`` (``num_decoder_layers`` layers and a final ``LayerNorm``) reads ``tgt``
    and the encoder's output. ``custom_encoder`` / ``custom_decoder`` replace either. Every
    parameter with more than one dim starts Xavier-uniform, as in PyTorch; the parameter names
    are PyTorch's, so a torch state_dict loads.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)``; shapes ``(S, N, E)`` and
    ``(T, N, E)`` (``(N, S, E)`` with ``batch_first``) or unbatched ``(S, E)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1,
        ...                        num_decoder_layers=1, dim_feedforward=32, batch_first=True)
        >>> tgt = dg.randn(2, 5, 16)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(5)
        >>> model(dg.randn(2, 7, 16), tgt, tgt_mask=mask).shape
        dynagrad.Size([2, 5, 16])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation=relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_kw = {"dim_feedforward": dim_feedforward, "dropout": dropout,
                    "activation": activation, "layer_norm_eps": layer_norm_eps,
                    "batch_first": batch_first, "norm_first": norm_first, "bias": bias, **kw}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer_kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer_kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float ``(sz, sz)`` causal mask: 0 on and below the diagonal, -inf above.

        Example:
            >>> Transformer.generate_square_subsequent_mask(2).tolist()
            [[0.0, -inf], [0.0, 0.0]]
        """
        return generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
