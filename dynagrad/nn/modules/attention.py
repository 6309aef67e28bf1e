"""``MultiheadAttention`` with PyTorch's parameters, initialisation and call signature.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> mha = nn.MultiheadAttention(16, 4, batch_first=True)
    >>> x = dg.randn(2, 5, 16)
    >>> out, w = mha(x, x, x)
    >>> tuple(out.shape), tuple(w.shape)
    ((2, 5, 16), (2, 5, 5))
"""
from __future__ import annotations

from ... import creation
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from .. import init
from ..functional.attention import multi_head_attention_forward
from ..module import Module
from ..parameter import Parameter
from .linear import Linear

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of ``MultiheadAttention`` (named as PyTorch's so reprs agree)."""


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of size ``embed_dim // num_heads``.

    Parameters as PyTorch: ``in_proj_weight (3E, E)`` (or ``q/k/v_proj_weight`` when ``kdim`` /
    ``vdim`` differ from ``embed_dim``), ``in_proj_bias (3E)``, ``out_proj``, and ``bias_k``,
    ``bias_v (1, 1, E)`` with ``add_bias_kv``. ``forward(query, key, value, key_padding_mask=None,
    need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(output, weights or None)``. Bool masks are True where attention is blocked.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def new(*shape):
            return Parameter(creation.empty(shape, dtype=dtype, device=device))
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = new(embed_dim, embed_dim)
            self.k_proj_weight = new(embed_dim, self.kdim)
            self.v_proj_weight = new(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = new(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = new(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k, self.bias_v = new(1, 1, embed_dim), new(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/bias_v (as PyTorch)."""
        with no_grad():
            if self._qkv_same_embed_dim:
                init.xavier_uniform_(self.in_proj_weight)
            else:
                init.xavier_uniform_(self.q_proj_weight)
                init.xavier_uniform_(self.k_proj_weight)
                init.xavier_uniform_(self.v_proj_weight)
            if self.in_proj_bias is not None:
                init.constant_(self.in_proj_bias, 0.0)
                init.constant_(self.out_proj.bias, 0.0)
            if self.bias_k is not None:
                init.xavier_normal_(self.bias_k)
            if self.bias_v is not None:
                init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple:
        batched = query.ndim == 3
        if self.batch_first and batched:
            if query is key and key is value:  # self-attention stays recognisable as such
                query = key = value = query.transpose(0, 1)
            else:
                query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights
