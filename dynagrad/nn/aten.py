"""PyTorch's top-level neural-network functions (``torch.batch_norm``, ``torch.embedding``,
``torch.kl_div`` ...), exported as ``dg.<name>``.

These are the ATen forms, whose signatures differ from ``torch.nn.functional``'s: arguments in the
operator's order and mostly positional (``torch.embedding(weight, indices)``,
``torch.batch_norm(input, weight, bias, running_mean, running_var, ...)``), a loss's
``reduction`` an int (0 none, 1 mean, 2 sum; any other value means none, as in PyTorch), no
deprecated ``size_average``/``reduce``. Each maps its arguments onto the ``nn.functional``
function that computes it, so the values, gradients and checks are those of the functional form.
The functions whose signature is the functional one (``cosine_similarity``, ``pixel_shuffle``,
``bilinear`` ...) are the same objects.

Example:
    >>> import dynagrad as dg
    >>> dg.kl_div(dg.tensor([-1.0, -2.0]), dg.tensor([0.5, 0.5]), 2).round(decimals=4)
    tensor(0.8069)
"""
from __future__ import annotations

from ..creation import tensor
from ..dtypes import float32, int64
from ..errors import describe
from ..ops.movement import pad as _pad
from ..ops.nn.rnn import check_dtypes
from ..tensor import Tensor
from . import functional as F
from .functional.activation import _rrelu
from .functional.embedding import MODES as BAG_MODES
from .functional.embedding import embedding_bag_parts
from .functional.misc import noise_dropout
from .functional.vision import grid_sampler
from .modules.rnn import stacked_recurrent

__all__ = ["alpha_dropout", "batch_norm", "bilinear", "binary_cross_entropy_with_logits",
           "channel_shuffle", "constant_pad_nd", "convolution", "cosine_embedding_loss",
           "cosine_similarity", "ctc_loss", "embedding", "embedding_bag", "feature_alpha_dropout",
           "feature_dropout", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "gru",
           "hinge_embedding_loss", "instance_norm", "kl_div", "lstm", "margin_ranking_loss",
           "max_pool1d_with_indices", "pairwise_distance", "pdist", "pixel_shuffle",
           "pixel_unshuffle", "poisson_nll_loss", "rnn_relu", "rnn_tanh", "rrelu", "rrelu_",
           "triplet_margin_loss"]

# the same signature as the functional form: the same function
bilinear = F.bilinear
channel_shuffle = F.channel_shuffle
cosine_similarity = F.cosine_similarity
pairwise_distance = F.pairwise_distance
pdist = F.pdist
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(op: str, reduction) -> str:
    """ATen's int ``reduction`` as the functional form's string (1 mean, 2 sum, else none)."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{op}(): argument 'reduction' must be int, not "
                        f"{type(reduction).__name__}")
    return _REDUCTIONS.get(reduction, "none")


# --- dropout --------------------------------------------------------------------------------------

def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout``: ``F.alpha_dropout(input, p, train)``."""
    return noise_dropout("alpha_dropout", input, p, train, False, True, False, RuntimeError)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout``: ``F.feature_alpha_dropout(input, p, train)``."""
    return noise_dropout("feature_alpha_dropout", input, p, train, False, True, True, RuntimeError)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout``: whole channels (dim 1) of an input of any rank >= 2 zeroed with
    probability ``p``, the rest scaled by ``1 / (1 - p)``.

    Example:
        >>> import dynagrad as dg
        >>> y = dg.feature_dropout(dg.ones(4, 8, 3), 0.5, True)
        >>> bool(((y.sum(2) == 0) | (y.sum(2) == 6)).all())
        True
    """
    return noise_dropout("feature_dropout", input, p, train, False, False, True, RuntimeError)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """``torch.rrelu``: ``F.rrelu`` with the slopes drawn from ``generator`` (default: dynagrad's
    default generator)."""
    return _rrelu("rrelu", input, lower, upper, training, False, generator)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    """``torch.rrelu_``: ``rrelu`` in place."""
    return _rrelu("rrelu_", input, lower, upper, training, True, generator)


# --- normalisation, embedding, padding ------------------------------------------------------------

def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm``: ``F.batch_norm`` with the affine parameters first
    (``cudnn_enabled`` has no effect here)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``torch.instance_norm``: ``F.instance_norm`` with the affine parameters first."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding``: the rows of ``weight`` at ``indices`` (note the order: the table
    first). A negative ``padding_idx`` means none, as in ATen.

    Example:
        >>> import dynagrad as dg
        >>> dg.embedding(dg.tensor([[0.0, 1.0], [2.0, 3.0]]), dg.tensor([1, 1, 0]))
        tensor([[2., 3.],
                [2., 3.],
                [0., 1.]])
    """
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None, None, 2.0,
                       scale_grad_by_freq, sparse)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None) -> tuple:
    """``torch.embedding_bag``: ``(output, offset2bag, bag_size, max_indices)`` for the 1-D
    ``indices`` split at ``offsets``; ``mode`` 0 sum, 1 mean, 2 max. ``output`` is
    ``F.embedding_bag``'s. The other three are PyTorch's bookkeeping, in its layout: the bag of
    each index (empty for a float32 sum without padding_idx), the entries per bag (zeros for
    sum) and, for max, the row each maximum came from (for mean, the entries per bag again;
    zeros for sum).
    """
    if mode not in (0, 1, 2):
        raise RuntimeError(f"embedding_bag: unknown mode {mode!r} (expected 0 sum, 1 mean or "
                           f"2 max)")
    out, bag_of, counts, arg_rows = embedding_bag_parts(
        indices, weight, offsets, None, 2.0, scale_grad_by_freq, BAG_MODES[mode], sparse,
        per_sample_weights, include_last_offset, padding_idx)

    def as_long(values) -> Tensor:
        return tensor(values, dtype=int64, device=weight.device)

    if mode == 0:
        zeros = [0] * counts.shape[0]
        # PyTorch's float32 sum path without padding_idx leaves offset2bag empty
        fast_path = padding_idx is None and weight.dtype is float32
        offset2bag = bag_of[:0] if fast_path else bag_of
        return out, as_long(offset2bag), as_long(zeros), as_long(zeros)
    return out, as_long(bag_of), as_long(counts), as_long(counts if mode == 1 else arg_rows)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """``torch.constant_pad_nd``: ``F.pad(input, pad, "constant", value)`` (a negative width
    crops).

    Example:
        >>> import dynagrad as dg
        >>> dg.constant_pad_nd(dg.ones(1, 2), [1, 0], 5.0)
        tensor([[5., 1., 1.]])
    """
    return _pad(input, pad, "constant", value)


# --- convolution and pooling ----------------------------------------------------------------------

def _per_dim(op: str, name: str, values, nsp: int) -> tuple:
    vals = (values,) if isinstance(values, int) else tuple(values)
    if len(vals) == 1:
        return vals * nsp
    if len(vals) != nsp:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nsp} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(vals)}")
    return vals


def convolution(input: Tensor, weight: Tensor, bias, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """``torch.convolution``: the 1-D, 2-D or 3-D convolution (``transposed``: its transpose)
    that ``weight``'s rank names, all arguments given.

    Example:
        >>> import dynagrad as dg
        >>> dg.convolution(dg.ones(1, 1, 4), dg.ones(1, 1, 2), None, [1], [0], [1], False, [0],
        ...                1).tolist()
        [[[2.0, 2.0, 2.0]]]
    """
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"convolution(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    nsp = weight.ndim - 2
    if nsp not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight (1 to 3 spatial "
                           f"dims), got {describe(weight)}")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.ndim}-"
                           f"dimensional input of size {list(input.shape)} instead")
    stride = _per_dim("convolution", "stride", stride, nsp)
    padding = _per_dim("convolution", "padding", padding, nsp)
    dilation = _per_dim("convolution", "dilation", dilation, nsp)
    if transposed:
        output_padding = _per_dim("convolution", "output_padding", output_padding, nsp)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nsp - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """``torch.max_pool1d_with_indices``: ``F.max_pool1d(..., return_indices=True)`` (an empty
    ``stride`` means ``kernel_size``)."""
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _grid_sampler_nd(ndim: int, input: Tensor, grid: Tensor, interpolation_mode: int,
                     padding_mode: int, align_corners: bool) -> Tensor:
    for t in (input, grid):
        if isinstance(t, Tensor) and t.ndim != ndim:
            raise RuntimeError(f"grid_sampler(): expected {ndim}D input and grid with same number "
                               f"of dimensions, but got input with sizes {list(input.shape)} and "
                               f"grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_2d``: ``grid_sampler`` on 4-D input and grid only."""
    return _grid_sampler_nd(4, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_3d``: ``grid_sampler`` on 5-D input and grid only."""
    return _grid_sampler_nd(5, input, grid, interpolation_mode, padding_mode, align_corners)


# --- recurrent networks --------------------------------------------------------------------------

def _recurrent(op: str, mode: str, input: Tensor, hx, cx, params, has_biases: bool,
               num_layers: int, dropout: float, train: bool, bidirectional: bool,
               batch_first: bool) -> tuple:
    """The whole-sequence network of ``nn.RNN``/``LSTM``/``GRU`` from a flat parameter list
    (``w_ih, w_hh[, b_ih, b_hh]`` per layer and direction, the modules' ``_flat_weights``)."""
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    params = list(params)
    if len(params) != per * num_layers * directions:
        raise RuntimeError(f"{op}: got an incorrect number of RNN parameters (expected "
                           f"{per * num_layers * directions} for num_layers={num_layers}, "
                           f"bidirectional={bidirectional}, has_biases={has_biases}; got "
                           f"{len(params)})")
    if not isinstance(input, Tensor) or input.ndim != 3:
        raise RuntimeError(f"{op}: expected a 3-D input (sequence, batch, features), or (batch, "
                           f"sequence, features) with batch_first (got "
                           f"{describe(input) if isinstance(input, Tensor) else input!r})")
    x = input.transpose(0, 1) if batch_first else input
    hidden = params[1].shape[1]
    expected = (num_layers * directions, x.shape[1], hidden)
    for name, h in (("hx", hx), ("cx", cx)):
        if h is not None and tuple(h.shape) != expected:
            raise RuntimeError(f"{op}: Expected hidden size {expected}, got {list(h.shape)} "
                               f"({name})")
    check_dtypes(op, {"input": x, "hx": hx, "cx": cx, "w_ih_l0": params[0]})
    weights = [tuple(params[i * per:(i + 1) * per]) + ((None, None) if not has_biases else ())
               for i in range(num_layers * directions)]
    out, h_n, c_n = stacked_recurrent(mode, x, hx, cx, weights, num_layers, directions,
                                      float(dropout), bool(train))
    return (out.transpose(0, 1) if batch_first else out), h_n, c_n


def lstm(input: Tensor, hx, params, has_biases: bool, num_layers: int, dropout: float,
         train: bool, bidirectional: bool, batch_first: bool) -> tuple:
    """``torch.lstm``: ``(output, h_n, c_n)`` of the LSTM with parameters ``params`` from the
    states ``hx = [h_0, c_0]``; ``nn.LSTM``'s computation.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> m = nn.LSTM(3, 4)
        >>> h0 = dg.zeros(1, 2, 4)
        >>> out, h, c = dg.lstm(dg.randn(5, 2, 3), [h0, h0], m._flat_weights, True, 1, 0.0,
        ...                     False, False, False)
        >>> tuple(out.shape), tuple(c.shape)
        ((5, 2, 4), (1, 2, 4))
    """
    if len(hx) != 2:
        raise RuntimeError(f"lstm: expects two hidden states [h_0, c_0], got {len(hx)}")
    return _recurrent("lstm", "lstm", input, hx[0], hx[1], params, has_biases, num_layers,
                      dropout, train, bidirectional, batch_first)


def gru(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int, dropout: float,
        train: bool, bidirectional: bool, batch_first: bool) -> tuple:
    """``torch.gru``: ``(output, h_n)`` of the GRU with parameters ``params``; ``nn.GRU``'s
    computation."""
    return _recurrent("gru", "gru", input, hx, None, params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)[:2]


def rnn_tanh(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple:
    """``torch.rnn_tanh``: ``(output, h_n)`` of ``nn.RNN(nonlinearity="tanh")``."""
    return _recurrent("rnn_tanh", "rnn_tanh", input, hx, None, params, has_biases, num_layers,
                      dropout, train, bidirectional, batch_first)[:2]


def rnn_relu(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple:
    """``torch.rnn_relu``: ``(output, h_n)`` of ``nn.RNN(nonlinearity="relu")``."""
    return _recurrent("rnn_relu", "rnn_relu", input, hx, None, params, has_biases, num_layers,
                      dropout, train, bidirectional, batch_first)[:2]


# --- losses ---------------------------------------------------------------------------------------

def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, pos_weight=None,
                                     reduction: int = 1) -> Tensor:
    """``torch.binary_cross_entropy_with_logits``: ``F.binary_cross_entropy_with_logits`` with
    ``pos_weight`` before an int reduction."""
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction),
        pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
    """``torch.cosine_embedding_loss``: ``F.cosine_embedding_loss`` with an int reduction."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def ctc_loss(log_probs: Tensor, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    """``torch.ctc_loss``: ``F.ctc_loss`` with an int reduction."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction), zero_infinity)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 1) -> Tensor:
    """``torch.hinge_embedding_loss``: ``F.hinge_embedding_loss`` with an int reduction."""
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *,
           log_target: bool = False) -> Tensor:
    """``torch.kl_div``: ``F.kl_div`` with an int reduction (1 is the plain mean over all
    elements; ATen has no ``batchmean``)."""
    reduction = _reduction("kl_div", reduction)
    if reduction == "mean":  # (the functional form warns that its "mean" is not batchmean)
        return F.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return F.kl_div(input, target, reduction=reduction, log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    """``torch.margin_ranking_loss``: ``F.margin_ranking_loss`` with an int reduction."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss``: ``F.poisson_nll_loss``, every argument given, an int
    reduction."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 1) -> Tensor:
    """``torch.triplet_margin_loss``: ``F.triplet_margin_loss`` with an int reduction."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))
