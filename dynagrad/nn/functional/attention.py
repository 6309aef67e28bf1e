"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward`` (PyTorch's).

Both are compositions of batched matmuls (BLAS) and the fused softmax kernel, so their gradients
(including second order) come from those pieces.

Mask conventions differ between the two, as in PyTorch: for ``scaled_dot_product_attention`` a bool
``attn_mask`` is True where attention is *allowed*; for ``multi_head_attention_forward`` a bool
``attn_mask`` / ``key_padding_mask`` is True where attention is *blocked*. Float masks are added to
the scores in both.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> q = dg.randn(2, 4, 5, 8)           # (batch, heads, L, E)
    >>> tuple(F.scaled_dot_product_attention(q, q, q, is_causal=True).shape)
    (2, 4, 5, 8)
"""
from __future__ import annotations

import math

from ... import creation
from ...errors import describe
from ...ops.movement import cat, pad
from ...tensor import Tensor
from .activation import softmax
from .linear import linear
from .misc import dropout

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _safe_softmax(scores: Tensor, masked: bool) -> Tensor:
    """Softmax over the last dim; with a mask, a row that is entirely -inf gives zeros (not NaN),
    with zero gradient, as PyTorch's scaled_dot_product_attention."""
    if not masked:
        return softmax(scores, -1)
    dead = scores.amax(-1, keepdim=True) == _NEG_INF
    # fill dead rows with 0 before the softmax so neither forward nor backward produces NaN
    return softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def _bias_from_mask(op: str, mask: Tensor, like: Tensor, allowed_when_true: bool) -> Tensor:
    """A float additive mask (0 / -inf) in ``like``'s dtype; float masks pass through."""
    if mask.dtype.name == "bool":
        blocked = mask.logical_not() if allowed_when_true else mask
        return creation.zeros(tuple(mask.shape), dtype=like.dtype,
                              device=like.device).masked_fill(blocked, _NEG_INF)
    if not mask.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected attn_mask dtype to be bool or float or to match "
                           f"query dtype (got {describe(mask)})")
    return mask


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims.

    query ``(..., L, E)``, key ``(..., S, E)``, value ``(..., S, Ev)``; ``scale`` defaults to
    ``1/sqrt(E)``. A bool ``attn_mask`` is True where attention is allowed; a float one is added.
    ``is_causal`` lets position ``i`` see only ``j <= i`` (then ``attn_mask`` must be None).
    A fully masked row gives zeros. ``dropout_p`` is applied to the weights (always: this
    functional form has no training flag). ``enable_gqa`` repeats key/value heads (dim -3) to
    match the query's.

    Example:
        >>> import dynagrad as dg
        >>> q, k, v = dg.randn(3, 4), dg.randn(6, 4), dg.randn(6, 2)
        >>> mask = dg.ones(3, 6, dtype=dg.bool)
        >>> tuple(scaled_dot_product_attention(q, k, v, attn_mask=mask).shape)
        (3, 2)
    """
    op = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise RuntimeError(f"{op}: {name} must have at least 2 dimensions (got {describe(t)})")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{op}: expected query (..., L, E), key (..., S, E) and value "
                           f"(..., S, Ev) (got query={describe(query)}, key={describe(key)}, "
                           f"value={describe(value)})")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if heads % kv_heads:
            raise RuntimeError(f"{op}: with enable_gqa the number of query heads ({heads}) must "
                               f"be a multiple of the key/value heads ({kv_heads})")
        key, value = _repeat_heads(key, heads // kv_heads), _repeat_heads(value, heads // kv_heads)
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{op}: Explicit attn_mask should not be set when is_causal=True "
                           f"(got attn_mask={describe(attn_mask)})")
    n_l, n_s = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query * scale) @ key.transpose(-2, -1)
    bias = None
    if attn_mask is not None:
        bias = _bias_from_mask(op, attn_mask, scores, allowed_when_true=True)
    elif is_causal:  # top-left aligned: row i sees columns 0..i
        blocked = creation.ones(n_l, n_s, dtype=query.dtype, device=query.device).tril()
        bias = creation.zeros(n_l, n_s, dtype=query.dtype,
                              device=query.device).masked_fill(blocked.logical_not(), _NEG_INF)
    if bias is not None:
        scores = scores + bias
    weights = _safe_softmax(scores, bias is not None)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """``t.repeat_interleave(times, dim=-3)`` as expand + reshape."""
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(shape[:-2] + (times,) + shape[-2:])
    return expanded.reshape(shape[:-3] + (shape[-3] * times,) + shape[-2:])


def _check_mha_inputs(op, query, key, value, embed_dim, num_heads, key_padding_mask, attn_mask):
    batched = query.ndim == 3
    if query.ndim not in (2, 3):
        raise AssertionError(f"{op}: query should be unbatched 2D or batched 3D tensor but "
                             f"received {query.ndim}-D query tensor ({describe(query)})")
    for name, t in (("key", key), ("value", value)):
        if t.ndim != query.ndim:
            raise AssertionError(f"{op}: For {'batched' if batched else 'unbatched'} "
                                 f"({query.ndim}-D) `query`, expected `{name}` to be "
                                 f"{query.ndim}-D but found {t.ndim}-D tensor ({describe(t)})")
    if query.shape[-1] != embed_dim:
        raise AssertionError(f"{op}: was expecting embedding dimension of {embed_dim}, but got "
                             f"{query.shape[-1]} ({describe(query)})")
    if key.shape[:-1] != value.shape[:-1]:
        raise AssertionError(f"{op}: key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")
    if batched and key.shape[1] != query.shape[1]:
        raise AssertionError(f"{op}: query batch size {query.shape[1]} does not match key batch "
                             f"size {key.shape[1]} (query={describe(query)}, key={describe(key)})")
    if embed_dim % num_heads:
        raise AssertionError(f"{op}: embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key_padding_mask is not None:
        want = (key.shape[1], key.shape[0]) if batched else (key.shape[0],)
        if tuple(key_padding_mask.shape) != want:
            raise AssertionError(f"{op}: expected key_padding_mask of shape {want} (batch, source "
                                 f"length) but got {describe(key_padding_mask)}")
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise RuntimeError(f"{op}: attn_mask's dimension {attn_mask.ndim} is not supported "
                           f"({describe(attn_mask)})")


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Tensor | None,
                                 in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                                 training: bool = True, key_padding_mask: Tensor | None = None,
                                 need_weights: bool = True, attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None,
                                 k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None,
                                 static_k: Tensor | None = None, static_v: Tensor | None = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple:
    """The computation of ``nn.MultiheadAttention`` on sequence-first inputs ``(L, N, E)`` (or
    unbatched ``(L, E)``). Returns ``(output, weights or None)``; weights are ``(N, L, S)``
    averaged over heads, or ``(N, num_heads, L, S)`` with ``average_attn_weights=False``.

    Bool masks are True where attention is blocked. ``is_causal`` is a hint only: ``attn_mask``
    must hold the causal mask, as in PyTorch.
    """
    op = "multi_head_attention_forward"
    if static_k is not None or static_v is not None:
        raise NotImplementedError(f"{op}: static_k / static_v are not supported")
    _check_mha_inputs(op, query, key, value, embed_dim_to_check, num_heads, key_padding_mask,
                      attn_mask)
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{op}: Need attn_mask if specifying the is_causal hint. You may use "
                           "the Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    n_l, n_b, n_e = query.shape
    head_dim = n_e // num_heads

    # input projections (q, k, v are the row blocks of in_proj_weight)
    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = in_proj_weight[:n_e], in_proj_weight[n_e:2 * n_e], in_proj_weight[2 * n_e:]
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias[:n_e], in_proj_bias[n_e:2 * n_e], in_proj_bias[2 * n_e:]
    if query is key and key is value:
        # self-attention on a strided view (the (N, L, E) input of a batch_first module seen as
        # (L, N, E)): one copy here instead of one per projection in forward and in backward
        query = key = value = query.contiguous()
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    if attn_mask is not None:
        attn_mask = _bias_from_mask(op, attn_mask, q, allowed_when_true=False)
        n_s = key.shape[0]
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (n_l, n_s):
                raise RuntimeError(f"{op}: The shape of the 2D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be {(n_l, n_s)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (n_b * num_heads, n_l, n_s):
            raise RuntimeError(f"{op}: The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                               f"but should be {(n_b * num_heads, n_l, n_s)}.")
    if key_padding_mask is not None:
        key_padding_mask = _bias_from_mask(op, key_padding_mask, q, allowed_when_true=False)

    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, n_b, n_e)])
        v = cat([v, bias_v.expand(1, n_b, n_e)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(n_l, n_b * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], n_b * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], n_b * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = creation.zeros(n_b * num_heads, 1, head_dim, dtype=q.dtype, device=q.device)
        k, v = cat([k, zeros], 1), cat([v, zeros], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    n_s = k.shape[1]
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(n_b, 1, 1, n_s).expand(n_b, num_heads, 1, n_s)
        kpm = kpm.reshape(n_b * num_heads, 1, n_s)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * (1.0 / math.sqrt(head_dim))) @ k.transpose(1, 2)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)  # a fully blocked row is NaN here, as in PyTorch
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p, True)
        out = (weights @ v).reshape(n_b, num_heads, n_l, head_dim)
        weights = weights.reshape(n_b, num_heads, n_l, n_s)
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        weights = None
        if attn_mask is not None:
            attn_mask = attn_mask.reshape(-1, 1 if attn_mask.shape[0] == 1 else num_heads,
                                          n_l if attn_mask.shape[1] != 1 else 1, n_s)
        out = scaled_dot_product_attention(q.reshape(n_b, num_heads, n_l, head_dim),
                                           k.reshape(n_b, num_heads, n_s, head_dim),
                                           v.reshape(n_b, num_heads, n_s, head_dim),
                                           attn_mask, dropout_p)
    # (N, heads, L, head_dim) -> (N, L, E): the output projection runs batch-major and returns an
    # (L, N, E) view; a batch_first caller transposes it back, so its gradient arrives contiguous
    out = out.transpose(1, 2).reshape(n_b, n_l, n_e)
    out = linear(out, out_proj_weight, out_proj_bias).transpose(0, 1)
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights
