"""Loss functions and distances (torch.nn.functional names, signatures and reductions).

``cross_entropy`` with class-index targets is one fused row kernel forward (log-sum-exp and the
loss, never materialising log-probabilities) and one fused kernel backward (softmax minus the
smoothed one-hot, scaled per row); its double backward composes ops. The other losses compose
dynagrad ops (whose fused pieces, such as ``logsigmoid`` and ``log_softmax``, are kernels).

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.cross_entropy(dg.zeros(2, 4), dg.tensor([1, 3]))
    tensor(1.3863)
    >>> F.mse_loss(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 4.0]), reduction="sum")
    tensor(4.)
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import dtypes
from ...autograd import grad_mode
from ...autograd.function import Function, Node, record
from ...errors import describe
from ...kernels.cpu import memory
from .._util import as_tensor_arg
from ...shapes import broadcast_shapes, wrap_dim
from ..elementwise import where
from ..indexing import _gather, trust_range
from ..movement import cat
from ...tensor import Tensor, _wrap
from ..registry import register
from ._placement import composed
from ._difference_loss import HUBER, SMOOTH_L1, SQUARED_ERROR
from ..placement import host_array, like
from .activation import logsigmoid
from .softmax import _kernel, from_rows, log_softmax, softmax, to_rows

__all__ = ["l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "huber_loss", "smooth_l1_loss", "kl_div",
           "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss", "pairwise_distance",
           "cosine_similarity", "one_hot", "normalize"]

_GRAD = grad_mode.GRAD_ENABLED


# --- reductions and argument checks -------------------------------------------------------------

def _legacy_reduction(size_average, reduce, reduction: str, stacklevel: int = 3) -> str:
    """Map the deprecated ``size_average``/``reduce`` flags onto ``reduction`` (as PyTorch);
    ``stacklevel`` points the deprecation warning at the loss's caller."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{'none' if not reduce else ('mean' if size_average else 'sum')}' "
                  "instead.", stacklevel=stacklevel)
    return "none" if not reduce else ("mean" if size_average else "sum")


def _check_reduction(name: str, reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{name}: {reduction!r} is not a valid value for reduction "
                         "(expected 'none', 'mean' or 'sum')")


def _checked_reduction(name: str, size_average, reduce, reduction: str) -> str:
    """``reduction`` after the legacy flags, validated (for losses called as ``name``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=4)
    _check_reduction(name, reduction)
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _tensor(x, name: str, arg: str) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor_arg(x, name, arg)


def _pointwise_pair(name: str, input, target, reduction: str) -> tuple:
    """Input and target of an elementwise loss; differing shapes broadcast with a warning."""
    _check_reduction(name, reduction)
    x, t = _tensor(input, name, "input"), _tensor(target, name, "target")
    if tuple(x.shape) != tuple(t.shape):
        broadcast_shapes(name, tuple(x.shape), tuple(t.shape))  # raises when incompatible
        warnings.warn(f"{name}: Using a target size ({tuple(t.shape)}) that is different to the "
                      f"input size ({tuple(x.shape)}). This will likely lead to incorrect results "
                      "due to broadcasting. Please ensure they have the same size.", stacklevel=3)
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name}: expected a floating point input, got {describe(x)}")
    return x, t


def _same_size(name: str, x: Tensor, t: Tensor) -> None:
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(f"{name}: Using a target size ({tuple(t.shape)}) that is different to "
                         f"the input size ({tuple(x.shape)}) is not supported. Please ensure "
                         "they have the same size.")


# --- simple elementwise losses ------------------------------------------------------------------

def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Mean (or sum) absolute error."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _pointwise_pair("l1_loss", input, target, reduction)
    return _reduce((x - t).abs(), reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Mean (or sum) squared error."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _pointwise_pair("mse_loss", input, target, reduction)
    return _reduce(SQUARED_ERROR(x, t), reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, ``delta (|d| - delta/2)`` elsewhere."""
    x, t = _pointwise_pair("huber_loss", input, target, reduction)
    if delta <= 0:
        raise RuntimeError(f"huber_loss: delta must be positive, got {delta}")
    return _reduce(HUBER(x, t, delta=float(delta)), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - beta/2`` elsewhere (L1 when beta = 0)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _pointwise_pair("smooth_l1_loss", input, target, reduction)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    if beta == 0:
        return _reduce((x - t).abs(), reduction)
    return _reduce(SMOOTH_L1(x, t, beta=float(beta)), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _pointwise_pair("soft_margin_loss", input, target, reduction)
    return _reduce(-logsigmoid(x * t), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """``target * (log(target) - input)`` (``input`` holds log-probabilities); ``reduction`` also
    takes ``'batchmean'`` (sum divided by the batch size, the mathematically correct KL)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"kl_div: {reduction!r} is not a valid value for reduction "
                         "(expected 'none', 'batchmean', 'mean' or 'sum')")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    x, t = _pointwise_pair("kl_div", input, target, "none")
    if log_target:
        loss = t.exp() * (t - x)
    else:  # xlogy(t, t) - t * x, with 0 * log 0 = 0 and finite gradients at t = 0; a negative
        # target is no probability: its log is NaN, and so is the loss (as in PyTorch)
        safe = where(t == 0, 1.0, t)
        loss = t * safe.log() - t * x
    if reduction == "batchmean":
        return loss.sum() / (x.shape[0] if x.ndim else 1)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target ~ Poisson(exp(input))`` (or ``Poisson(input)``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _pointwise_pair("poisson_nll_loss", input, target, reduction)
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:  # Stirling's approximation of log(t!), for t > 1
        safe = where(t > 1, t, 1.0)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + where(t > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """``0.5 (log(var) + (input - target)^2 / var)`` (+ ``0.5 log(2 pi)`` when ``full``)."""
    _check_reduction("gaussian_nll_loss", reduction)
    x, t = _tensor(input, "gaussian_nll_loss", "input"), _tensor(target, "gaussian_nll_loss",
                                                                 "target")
    if not isinstance(var, Tensor):
        var = x.new_ones(tuple(x.shape)) * float(var)
    xs, vs = tuple(x.shape), tuple(var.shape)
    if vs != xs:
        if xs[:-1] == vs:  # homoscedastic over the last dim
            var = var.unsqueeze(-1)
        elif not (xs[:-1] == vs[:-1] and vs[-1:] == (1,)):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size: expected {xs}, "
                             f"{xs[:-1]} or {xs[:-1] + (1,)} (got input {describe(x)}, "
                             f"var {describe(var)})")
    negative = (var < 0).any() if composed(var) else (var._data < 0).any()
    if bool(negative):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    # clamp for stability without changing the gradient (as PyTorch: clamped under no_grad)
    var = var + (var.clamp(min=eps) - var).detach()
    d = x - t
    loss = (var.log() + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --- binary cross-entropy -----------------------------------------------------------------------

class _BCE(Function):
    """Binary cross-entropy on probabilities; logs clamped at -100 as PyTorch, and the gradient
    ``(x - t) / max(x (1 - x), 1e-12)`` stays finite at 0 and 1."""

    @staticmethod
    def forward(ctx, x, t, w):
        ctx.save_for_backward(x, t, w)
        return -(t * x.log().clamp(min=-100.0) + (1.0 - t) * (1.0 - x).log().clamp(min=-100.0)) * w

    @staticmethod
    def backward(ctx, g):
        x, t, w = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = g * w * (x - t) / (x * (1.0 - x)).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:
            gt = -g * w * (x.log().clamp(min=-100.0) - (1.0 - x).log().clamp(min=-100.0))
        return gx, gt, None


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log(x) + (1 - t) log(1 - x))`` for probabilities ``x`` in [0, 1]."""
    reduction = _checked_reduction("binary_cross_entropy", size_average, reduce, reduction)
    x = _tensor(input, "binary_cross_entropy", "input")
    t = _tensor(target, "binary_cross_entropy", "target")
    _same_size("binary_cross_entropy", x, t)
    xd = x._data
    if composed(x):
        out_of_range = bool(((x < 0) | (x > 1)).any())
    else:
        out_of_range = xd.size and bool(((xd < 0) | (xd > 1)).any())
    if out_of_range:
        raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 and 1")
    w = x.new_ones(()) if weight is None else weight.detach()
    return _reduce(_BCE.apply(x, t, w), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """``binary_cross_entropy(sigmoid(x), t)`` computed stably from logits; ``pos_weight``
    weights the positive term per class (broadcast over the last dim)."""
    reduction = _checked_reduction("binary_cross_entropy_with_logits", size_average, reduce,
                                   reduction)
    x = _tensor(input, "binary_cross_entropy_with_logits", "input")
    t = _tensor(target, "binary_cross_entropy_with_logits", "target")
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(f"binary_cross_entropy_with_logits: Target size ({tuple(t.shape)}) must "
                         f"be the same as input size ({tuple(x.shape)})")
    if pos_weight is None:
        loss = (1.0 - t) * x - logsigmoid(x)
    else:
        loss = (1.0 - t) * x - (1.0 + (pos_weight - 1.0) * t) * logsigmoid(x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# --- class-index losses -------------------------------------------------------------------------

def _class_target(name: str, x: Tensor, target: Tensor) -> int:
    """Check shapes and dtype of a class-index target; returns the class dim of ``x``."""
    if x.ndim == 0:
        raise ValueError(f"{name}: input must have at least 1 dimension (got {describe(x)})")
    if target.dtype.is_floating_point or target.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}: expected target of class indices with dtype int64 (got "
                           f"{describe(target)}); probabilities need a target shaped like input")
    if x.ndim == 1:
        if target.ndim != 0:
            raise ValueError(f"{name}: for an input of shape (C,) the target must be 0-dim "
                             f"(got input {describe(x)}, target {describe(target)})")
        return 0
    if target.ndim == 0 or target.shape[0] != x.shape[0]:
        raise ValueError(f"{name}: Expected input batch_size ({x.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 'scalar'}) (got "
                         f"input {describe(x)}, target {describe(target)})")
    if tuple(target.shape) != tuple(x.shape[:1]) + tuple(x.shape[2:]):
        raise RuntimeError(f"{name}: size mismatch: target must have shape (N, d1, ...) = "
                           f"{tuple(x.shape[:1]) + tuple(x.shape[2:])} for input {describe(x)} "
                           f"(got target {describe(target)})")
    return 1


def _checked_targets(name: str, target: Tensor, classes: int, ignore_index: int) -> np.ndarray:
    """Targets as a flat int64 array; IndexError naming the first bad one (before any kernel)."""
    t = np.ascontiguousarray(host_array(target).reshape(-1), dtype=np.int64)
    bad = ((t < 0) | (t >= classes)) & (t != ignore_index)
    if bad.any():
        raise IndexError(f"{name}: Target {int(t[np.argmax(bad)])} is out of bounds (expected "
                         f"class indices in [0, {classes - 1}] or ignore_index={ignore_index})")
    return t


def _class_weight(name: str, weight, classes: int, dtype) -> np.ndarray:
    if weight is None:
        return np.ones(classes, dtype.np)
    _class_weight_shape(name, weight, classes)
    return np.ascontiguousarray(host_array(weight), dtype=dtype.np)


def _class_weight_shape(name: str, weight: Tensor, classes: int) -> None:
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"{name}: weight tensor should be defined either for all {classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:
    """``-w[t] * input[t]`` per sample (``input`` holds log-probabilities); ``'mean'`` divides by
    the total weight of the targets that are not ``ignore_index``."""
    reduction = _checked_reduction("nll_loss", size_average, reduce, reduction)
    x, target = _tensor(input, "nll_loss", "input"), _tensor(target, "nll_loss", "target")
    cdim = _class_target("nll_loss", x, target)
    loss, wt, _, _ = _target_terms("nll_loss", x, cdim, target, weight, ignore_index)
    if reduction == "mean":
        return loss.sum() / wt.sum()
    return _reduce(loss, reduction)


def _target_terms(name: str, logp: Tensor, cdim: int, target: Tensor, weight,
                  ignore_index: int) -> tuple:
    """``(-w[t] * logp[t], w[t], valid, w)`` per sample on ``logp``'s device, 0 where the target
    is ``ignore_index`` (``w`` is None without class weights). The targets stay where they are:
    only their smallest and largest value are read back, to check them before any kernel runs."""
    classes = logp.shape[cdim]
    target = target.to(logp.device)
    valid = target != ignore_index
    safe = where(valid, target, 0)
    lo = hi = 0
    if safe.numel():
        lo, hi = int(safe.amin().item()), int(safe.amax().item())
        if lo < 0 or hi >= classes:  # name the first bad target
            _checked_targets(name, target, classes, ignore_index)
    if weight is not None:
        _class_weight_shape(name, weight, classes)
        w = weight.to(logp.device, logp.dtype)
        rows = w.index_select(0, trust_range(safe.reshape(-1), lo, hi))
        wt = where(valid, rows.reshape(tuple(safe.shape)), 0.0)
    else:
        w, wt = None, valid.to(logp.dtype)
    # checked once above: neither the gather nor its backward reads the targets back again
    picked = _gather(logp, cdim, trust_range(safe.unsqueeze(cdim), lo, hi)).squeeze(cdim)
    return -picked * wt, wt, valid, w


class CrossEntropyBackward0(Node):
    """Backward of the fused cross-entropy (class indices): one kernel per call."""

    def backward(self, g):
        x, = self.saved_tensors
        R = self.lse.shape[0]
        if _GRAD[0]:
            return self._composed(x, g), None
        if self.reduction == "none":
            coef = np.ascontiguousarray(g._data.reshape(-1), dtype=self.lse.dtype)
        else:
            scale = float(g._data) / (self.denom if self.reduction == "mean" else 1.0)
            coef = np.full(R, scale, self.lse.dtype)
        rows = to_rows(x._data, self.cdim)
        out = memory.empty(rows.shape, rows.dtype)  # pooled: a fresh large one page-faults
        if out.size:
            _kernel("cross_entropy_backward", x.dtype.name, rows=rows)(
                rows, self.target, self.weight, self.lse, coef, self.ignore_index,
                self.eps, out)
        return _wrap(from_rows(out, tuple(x.shape), self.cdim), x.dtype), None

    def _composed(self, x: Tensor, g: Tensor) -> Tensor:
        """The same gradient built from ops, so that it is differentiable again."""
        cdim, classes, eps = self.cdim, x.shape[self.cdim], self.eps
        shape = list(x.shape)
        shape[cdim] = 1
        valid = self.target != self.ignore_index
        safe = np.where(valid, self.target, 0)
        if cdim == 1:
            safe = safe.reshape((x.shape[0],) + tuple(x.shape[2:]))
        else:
            safe = safe.reshape(())
        onehot = one_hot(_wrap(safe, dtypes.int64), classes).to(x.dtype)
        if cdim == 1 and x.ndim > 2:
            onehot = onehot.movedim(-1, 1)
        wt = np.where(valid, self.weight[safe.reshape(-1)], 0).astype(x.dtype.np)
        wt = _wrap(wt.reshape(shape), x.dtype)
        wb = _wrap(self.weight.reshape([classes if i == cdim else 1 for i in range(x.ndim)]),
                   x.dtype)
        mask = _wrap(valid.reshape(shape).astype(x.dtype.np), x.dtype)
        if self.reduction == "none":
            coef = g.unsqueeze(cdim) if cdim == 1 else g
        else:
            coef = g / self.denom if self.reduction == "mean" else g
        p = softmax(x, cdim)
        grad = wt * (p - onehot) * (1.0 - eps)
        if eps:
            grad = grad + (p * float(self.weight.sum()) - wb) * mask * (eps / classes)
        return grad * coef


def _ce_indices(x: Tensor, target: Tensor, weight, ignore_index: int, reduction: str,
                eps: float) -> Tensor:
    cdim = _class_target("cross_entropy", x, target)
    classes = x.shape[cdim]
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"cross_entropy: expected a float32 or float64 input, got {describe(x)}")
    if composed(x):
        return _ce_indices_device(x, cdim, target, weight, ignore_index, reduction, eps)
    t = _checked_targets("cross_entropy", target, classes, ignore_index)
    w = _class_weight("cross_entropy", weight, classes, x.dtype)
    rows = to_rows(x._data, cdim)
    loss = np.empty(rows.shape[0], rows.dtype)
    lse = np.empty(rows.shape[0], rows.dtype)
    if rows.size:
        _kernel("cross_entropy_forward", x.dtype.name, rows=rows)(
            rows, t, w, int(ignore_index), float(eps), loss, lse)
    else:
        loss[:] = 0
    denom = 1.0
    if reduction == "none":
        res = loss.reshape(target.shape)
    elif reduction == "sum":
        res = np.asarray(loss.sum(dtype=np.float64), x.dtype.np)
    else:
        valid = t != ignore_index
        denom = float(w[t[valid]].sum(dtype=np.float64)) if weight is not None else \
            float(valid.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            res = np.asarray(loss.sum(dtype=np.float64) / denom, x.dtype.np)
    out = _wrap(res, x.dtype)
    if _GRAD[0] and x._requires_grad:
        node = CrossEntropyBackward0()
        node.cdim, node.target, node.weight, node.lse = cdim, t, w, lse
        node.ignore_index, node.eps, node.reduction, node.denom = (
            int(ignore_index), float(eps), reduction, denom)
        node.save(x)
        record(node, (x, None), (out,))
    return out


def _ce_indices_device(x: Tensor, cdim: int, target: Tensor, weight, ignore_index: int,
                       reduction: str, eps: float) -> Tensor:
    """Cross-entropy with class-index targets from ``log_softmax`` and ``gather`` on the inputs'
    device (autograd gives the gradient): per sample ``(1-eps) w[t] (-logp[t]) + eps/C sum_c w[c]
    (-logp[c])``, 0 where the target is ``ignore_index`` (see ``_target_terms``)."""
    logp = log_softmax(x, cdim)
    loss, wt, valid, w = _target_terms("cross_entropy", logp, cdim, target, weight, ignore_index)
    if eps:
        classes = x.shape[cdim]
        summed = (logp * w.reshape([classes if i == cdim else 1 for i in range(x.ndim)])
                  ).sum(cdim) if w is not None else logp.sum(cdim)
        loss = loss * (1.0 - eps) + summed * valid.to(x.dtype) * (-eps / classes)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()  # the total weight of the counted targets, on the device


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits ``input`` (class dim 1, or 0 for a 1-D input) and ``target``:
    class indices (with ``weight``, ``ignore_index``) or class probabilities shaped like input.

    Example:
        >>> import dynagrad as dg
        >>> logits = dg.tensor([[2.0, 0.0], [0.0, 2.0]], requires_grad=True)
        >>> loss = cross_entropy(logits, dg.tensor([0, 1]), label_smoothing=0.1)
        >>> loss.backward(); round(loss.item(), 4)
        0.2269
    """
    reduction = _checked_reduction("cross_entropy", size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got "
                         f"{label_smoothing}")
    x = _tensor(input, "cross_entropy", "input")
    target = _tensor(target, "cross_entropy", "target")
    if not x.dtype.is_floating_point:
        raise TypeError(f"cross_entropy: expected a floating point input, got {describe(x)}")
    if target.dtype.is_floating_point:
        return _ce_probabilities(x, target, weight, reduction, label_smoothing)
    return _ce_indices(x, target, weight, ignore_index, reduction, label_smoothing)


def _ce_probabilities(x: Tensor, target: Tensor, weight, reduction: str, eps: float) -> Tensor:
    if tuple(target.shape) != tuple(x.shape):
        raise RuntimeError(f"cross_entropy: a target of class probabilities must have the input's "
                           f"shape (got input {describe(x)}, target {describe(target)})")
    cdim = 1 if x.ndim >= 2 else 0
    classes = x.shape[cdim]
    if eps:
        target = target * (1.0 - eps) + eps / classes
    prod = log_softmax(x, cdim) * target
    if weight is not None:
        _class_weight("cross_entropy", weight, classes, x.dtype)
        prod = prod * weight.reshape([classes if i == cdim else 1 for i in range(x.ndim)])
    loss = -prod.sum(cdim)
    if reduction == "mean":
        return loss.sum() / (x.numel() // classes if classes else 1)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C`` per sample."""
    reduction = _checked_reduction("multi_margin_loss", size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 supported, got {p}")
    x = _tensor(input, "multi_margin_loss", "input")
    target = _tensor(target, "multi_margin_loss", "target")
    if x.ndim > 2:
        raise RuntimeError(f"multi_margin_loss: expected a 1-D or 2-D input (got {describe(x)})")
    cdim = _class_target("multi_margin_loss", x, target)
    classes = x.shape[cdim]
    t = _checked_targets("multi_margin_loss", target, classes, -(1 << 62))
    x2 = x.reshape(1, classes) if cdim == 0 else x
    idx = like(t.reshape(-1, 1), x, dtypes.int64)
    z = (x2 - x2.gather(1, idx) + margin).relu()
    if p == 2:
        z = z * z
    if weight is not None:
        w = _class_weight("multi_margin_loss", weight, classes, x.dtype)
        z = z * like(w[t].reshape(-1, 1), x, x.dtype)
    others = np.ones((t.shape[0], classes), x.dtype.np)
    others[np.arange(t.shape[0]), t] = 0
    loss = (z * like(others, x, x.dtype)).sum(1) / classes
    if cdim == 0:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over classes: one value per sample."""
    reduction = _checked_reduction("multilabel_soft_margin_loss", size_average, reduce, reduction)
    x = _tensor(input, "multilabel_soft_margin_loss", "input")
    t = _tensor(target, "multilabel_soft_margin_loss", "target")
    _same_size("multilabel_soft_margin_loss", x, t)
    loss = -(t * logsigmoid(x) + (1.0 - t) * logsigmoid(-x))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / x.shape[-1]
    return _reduce(loss, reduction)


# --- margin and embedding losses ----------------------------------------------------------------

def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``."""
    reduction = _checked_reduction("margin_ranking_loss", size_average, reduce, reduction)
    x1 = _tensor(input1, "margin_ranking_loss", "input1")
    x2 = _tensor(input2, "margin_ranking_loss", "input2")
    y = _tensor(target, "margin_ranking_loss", "target")
    if not (x1.ndim == x2.ndim == y.ndim):
        raise RuntimeError(f"margin_ranking_loss: All input tensors should have same dimension but "
                           f"got sizes: input1: {tuple(x1.shape)}, input2: {tuple(x2.shape)}, "
                           f"target: {tuple(y.shape)}")
    return _reduce((-y * (x1 - x2) + margin).relu(), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""
    reduction = _checked_reduction("hinge_embedding_loss", size_average, reduce, reduction)
    x = _tensor(input, "hinge_embedding_loss", "input")
    y = _tensor(target, "hinge_embedding_loss", "target")
    loss = where(y != 1, (margin - x).relu(), 0.0) + where(y != -1, x, 0.0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y == 1``, ``max(0, cos(x1, x2) - margin)`` where ``y == -1``."""
    reduction = _checked_reduction("cosine_embedding_loss", size_average, reduce, reduction)
    x1 = _tensor(input1, "cosine_embedding_loss", "input1")
    x2 = _tensor(input2, "cosine_embedding_loss", "input2")
    y = _tensor(target, "cosine_embedding_loss", "target")
    if tuple(x1.shape) != tuple(x2.shape) or x1.ndim not in (1, 2):
        raise RuntimeError(f"cosine_embedding_loss: expected input1 and input2 of the same 1-D or "
                           f"2-D shape (got input1 {describe(x1)}, input2 {describe(x2)})")
    d = x1.ndim - 1
    if tuple(y.shape) != tuple(x1.shape[:d]):
        raise RuntimeError(f"cosine_embedding_loss: expected target of shape {tuple(x1.shape[:d])}"
                           f" (got {describe(y)})")
    eps = 1e-12  # as PyTorch: added to each squared norm
    cos = (x1 * x2).sum(d) / (((x1 * x1).sum(d) + eps) * ((x2 * x2).sum(d) + eps)).sqrt()
    loss = where(y == 1, 1.0 - cos, 0.0) + where(y == -1, (cos - margin).relu(), 0.0)
    return _reduce(loss, reduction)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim."""
    x1 = _tensor(x1, "pairwise_distance", "x1")
    x2 = _tensor(x2, "pairwise_distance", "x2")
    d = x1 - x2 + eps
    if d.ndim == 0:
        return d.abs() if p != 0 else (d != 0).to(d.dtype)
    return d.norm(p, dim=-1, keepdim=keepdim)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the pairwise p-distance."""
    reduction = _checked_reduction("triplet_margin_loss", size_average, reduce, reduction)
    a, pos, neg = (_tensor(v, "triplet_margin_loss", n) for v, n in
                   ((anchor, "anchor"), (positive, "positive"), (negative, "negative")))
    if not (a.ndim == pos.ndim == neg.ndim):
        raise RuntimeError(f"triplet_margin_loss: The anchor, positive, and negative tensors are "
                           f"expected to have the same number of dimensions, but got: anchor "
                           f"{a.ndim}D, positive {pos.ndim}D, and negative {neg.ndim}D inputs")
    d_ap = pairwise_distance(a, pos, p, eps)
    d_an = pairwise_distance(a, neg, p, eps)
    if swap:
        from ...ops.elementwise import minimum
        d_an = minimum(d_an, pairwise_distance(pos, neg, p, eps))
    return _reduce((d_ap - d_an + margin).relu(), reduction)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / (max(||x1||, eps) max(||x2||, eps))`` along ``dim`` (inputs broadcast)."""
    x1 = _tensor(x1, "cosine_similarity", "x1")
    x2 = _tensor(x2, "cosine_similarity", "x2")
    shape = broadcast_shapes("cosine_similarity", tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    d = wrap_dim(dim, len(shape), "cosine_similarity")

    def unit(v):
        n = v.norm(2, dim=d, keepdim=True)
        return v / (n + (n.clamp(min=eps) - n).detach())  # clamp value, keep the norm's gradient
    return (unit(x1) * unit(x2)).sum(d)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    x = _tensor(input, "normalize", "input")
    res = x / x.norm(p, dim=dim, keepdim=True).clamp(min=eps)
    if out is not None:
        out.copy_(res)
        return out
    return res


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor with a trailing dim of size ``num_classes`` holding a 1 at each index."""
    t = _tensor(tensor, "one_hot", "tensor")
    if t.dtype is not dtypes.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor "
                           f"(got {describe(t)})")
    a = host_array(t)
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("one_hot: Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size and int(a.min()) < 0:
        raise RuntimeError("one_hot: Class values must be non-negative.")
    if a.size and int(a.max()) >= num_classes:
        raise RuntimeError(f"one_hot: Class values must be smaller than num_classes "
                           f"({num_classes}), got {int(a.max())}.")
    out = np.zeros(a.shape + (num_classes,), np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return like(out, t, dtypes.int64)


# --- CTC ----------------------------------------------------------------------------------------

class _CTC(Function):
    """Connectionist temporal classification loss per batch element (forward-backward in log space,
    vectorised over the batch and the extended label sequence)."""

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank):
        lp = host_array(log_probs).astype(np.float64)
        labels = _extended_labels(targets, target_lengths, blank)
        nll, grad = _ctc_numpy(lp, labels, input_lengths, target_lengths)
        ctx.grad = grad
        return like(nll, log_probs, log_probs.dtype)

    @staticmethod
    def backward(ctx, g):
        grad = ctx.grad * host_array(g).astype(np.float64)[None, :, None]
        return like(grad, g, g.dtype), None, None, None, None


def _extended_labels(targets: np.ndarray, target_lengths: np.ndarray, blank: int) -> np.ndarray:
    """``(N, 2 S + 1)`` label sequences with blanks interleaved (padding holds blank)."""
    n = target_lengths.shape[0]
    s = int(target_lengths.max()) if n else 0
    labels = np.full((n, 2 * s + 1), blank, np.int64)
    if targets.ndim == 2:
        for b in range(n):
            labels[b, 1:2 * target_lengths[b]:2] = targets[b, :target_lengths[b]]
    else:  # concatenated 1-D targets
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
        for b in range(n):
            labels[b, 1:2 * target_lengths[b]:2] = targets[starts[b]:starts[b] + target_lengths[b]]
    return labels


def _logadd(a, b):
    m = np.maximum(a, b)
    with np.errstate(invalid="ignore"):
        out = m + np.log(np.exp(a - m) + np.exp(b - m))
    return np.where(np.isneginf(m), -np.inf, out)


def _ctc_numpy(lp: np.ndarray, labels: np.ndarray, in_len: np.ndarray, tg_len: np.ndarray):
    """Negative log-likelihoods ``(N,)`` and their gradient with respect to ``lp`` (T, N, C), as
    PyTorch defines it: ``exp(lp) - exp(log(alpha beta summed per class) + nll - lp)``."""
    T, N, C = lp.shape
    L = labels.shape[1]
    b_idx = np.arange(N)[:, None]
    emit = lp[:, b_idx, labels]  # (T, N, L)
    valid = np.arange(L)[None, :] < (2 * tg_len[:, None] + 1)
    # a label may skip the blank before it when it differs from the label two back
    skip = np.zeros((N, L), bool)
    skip[:, 2:] = (labels[:, 2:] != labels[:, :-2]) & (np.arange(2, L) % 2 == 1)
    ninf = -np.inf
    alpha = np.full((T, N, L), ninf)
    alpha[0, :, 0] = emit[0, :, 0]
    if L > 1:
        alpha[0, :, 1] = np.where(tg_len > 0, emit[0, :, 1], ninf)
    for t in range(1, T):
        prev = alpha[t - 1]
        a = prev.copy()
        a[:, 1:] = _logadd(a[:, 1:], prev[:, :-1])
        a[:, 2:] = np.where(skip[:, 2:], _logadd(a[:, 2:], prev[:, :-2]), a[:, 2:])
        alpha[t] = np.where(valid, a + emit[t], ninf)
        alpha[t] = np.where((t < in_len)[:, None], alpha[t], prev)  # finished sequences hold
    beta = np.full((T, N, L), ninf)
    last = in_len - 1
    end1 = 2 * tg_len
    beta[last, np.arange(N), end1] = emit[last, np.arange(N), end1]
    has = tg_len > 0
    beta[last[has], np.arange(N)[has], end1[has] - 1] = emit[last[has], np.arange(N)[has],
                                                             end1[has] - 1]
    for t in range(T - 2, -1, -1):
        nxt = beta[t + 1]
        bt = nxt.copy()
        bt[:, :-1] = _logadd(bt[:, :-1], nxt[:, 1:])
        skip_next = np.zeros((N, L), bool)
        skip_next[:, :-2] = skip[:, 2:]
        shifted = np.full((N, L), ninf)
        shifted[:, :-2] = nxt[:, 2:]
        bt = np.where(skip_next, _logadd(bt, shifted), bt)
        bt = np.where(valid, bt + emit[t], ninf)
        active = (t < last)[:, None]
        beta[t] = np.where(active, bt, beta[t])
    idx = np.arange(N)
    ll = _logadd(alpha[last, idx, end1], np.where(has, alpha[last, idx, np.maximum(end1 - 1, 0)],
                                                  ninf))
    nll = -ll
    ab = alpha + beta  # (T, N, L)
    lcab = np.full((T, N, C), ninf)
    for s in range(L):
        lcab[:, idx, labels[:, s]] = _logadd(lcab[:, idx, labels[:, s]], ab[:, :, s])
    with np.errstate(over="ignore", invalid="ignore"):
        grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    grad[np.arange(T)[:, None] >= in_len[None, :]] = 0.0
    grad[:, ~np.isfinite(nll)] = 0.0  # impossible alignments: zero_infinity needs a clean zero
    return nll, grad


def _ctc_composite(lp: Tensor, labels: np.ndarray, in_len: np.ndarray,
                   tg_len: np.ndarray) -> Tensor:
    """Negative log-likelihoods ``(N,)`` on ``lp``'s device, written with dynagrad ops so that
    autograd gives the gradient (the CUDA path; ``_ctc_numpy`` is the CPU's).

    The alpha recursion in log space: one step per time of a log-sum-exp over the three allowed
    transitions (stay, advance one, skip a blank), impossible ones masked with -inf. Its
    gradient with respect to ``lp`` is ``-exp(lcab + nll - lp)``; PyTorch's (and the CPU path's)
    adds ``exp(lp)`` for ``t < input_length`` on finite losses - which cancels under the usual
    ``log_softmax`` - so a zero-valued term ``exp(lp) - exp(lp).detach()`` adds it here too.
    Every step's slice of the emissions is a view whose backward fills a (T, N, L) buffer, so
    the backward pass moves O(T^2 N L) memory: fine for the sequence lengths CTC sees at this
    stage, a fused kernel later if it shows.
    """
    T, N, C = lp.shape
    L = labels.shape[1]
    ninf = -math.inf
    # emissions: emit[t, n, s] = lp[t, n, labels[n, s]], one index_select over (n, class)
    flat = (np.arange(N)[:, None] * C + labels).reshape(-1)
    emit = lp.reshape(T, N * C).index_select(1, like(flat, lp, dtypes.int64)).reshape(T, N, L)
    s_idx = np.arange(L)[None, :]
    valid = like(s_idx < (2 * tg_len[:, None] + 1), lp)
    skip = np.zeros((N, L), bool)  # a label may skip the blank before it unless it repeats
    skip[:, 2:] = (labels[:, 2:] != labels[:, :-2]) & (np.arange(2, L) % 2 == 1)
    skip = like(skip, lp)
    start = like((s_idx == 0) | ((s_idx == 1) & (tg_len[:, None] > 0)), lp)
    none = like(np.full((N, L), ninf), lp, lp.dtype)
    # running[t, n]: frame t belongs to sequence n (finished sequences hold their last alpha)
    running = like((np.arange(T)[:, None] < in_len[None, :]).reshape(T, N, 1), lp)
    alpha = where(start, emit[0], ninf)
    for t in range(1, T):
        one = cat([none[:, :1], alpha[:, :L - 1]], 1) if L > 1 else none
        two = where(skip, cat([none[:, :2], alpha[:, :L - 2]], 1), ninf) if L > 2 else none
        step = where(valid, _log_add_exp(alpha, one, two) + emit[t], ninf)
        alpha = where(running[t], step, alpha)
    end = 2 * tg_len[:, None]
    last = like((s_idx == end) | ((s_idx == end - 1) & (tg_len[:, None] > 0)), lp)
    nll = -_log_sum_exp(where(last, alpha, ninf), 1)
    # PyTorch's gradient convention (see above): exp(lp) on the frames each sequence uses
    used = running & nll.isfinite().reshape(1, N, 1)
    e = lp.exp()
    return nll + where(used, e - e.detach(), 0.0).sum((0, 2))


def _log_add_exp(*terms: Tensor) -> Tensor:
    """``log(sum(exp(term)))`` elementwise over ``terms``, with ``_safe_log``'s guarantees."""
    with grad_mode.no_grad():
        m = terms[0]
        for x in terms[1:]:
            m = m.maximum(x)
        m = where(m == -math.inf, 0.0, m)
    total = (terms[0] - m).exp()
    for x in terms[1:]:
        total = total + (x - m).exp()
    return _safe_log(total, m)


def _log_sum_exp(x: Tensor, dim: int) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, with ``_safe_log``'s guarantees."""
    with grad_mode.no_grad():
        m = x.amax(dim, keepdim=True)
        m = where(m == -math.inf, 0.0, m)
    return _safe_log((x - m).exp().sum(dim), m.squeeze(dim))


def _safe_log(total: Tensor, shift: Tensor) -> Tensor:
    """``log(total) + shift``, -inf where ``total`` is 0 (every term -inf), with a gradient that
    stays 0 there instead of 0 * inf = NaN: the log only ever sees a positive sum."""
    some = total > 0
    return where(some, where(some, total, 1.0).log() + shift, -math.inf)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss of ``log_probs`` (T, N, C) against ``targets``
    ((N, S) padded or 1-D concatenated); ``'mean'`` divides each loss by its target length."""
    _check_reduction("ctc_loss", reduction)
    lp = _tensor(log_probs, "ctc_loss", "log_probs")
    unbatched = lp.ndim == 2
    if unbatched:
        lp = lp.unsqueeze(1)
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C) (got {describe(lp)})")
    T, N, C = lp.shape
    tg = np.asarray(host_array(targets) if isinstance(targets, Tensor) else targets, np.int64)
    il = np.asarray(host_array(input_lengths) if isinstance(input_lengths, Tensor)
                    else input_lengths, np.int64).reshape(-1)
    tl = np.asarray(host_array(target_lengths) if isinstance(target_lengths, Tensor)
                    else target_lengths, np.int64).reshape(-1)
    if unbatched and tg.ndim == 1 and tl.shape[0] == 1 and tg.shape[0] != tl[0]:
        tg = tg[None]
    if unbatched and tg.ndim == 1:
        tg = tg[None]
    if il.shape[0] != N or tl.shape[0] != N:
        raise RuntimeError(f"ctc_loss: input_lengths and target_lengths must have one entry per "
                           f"batch element ({N}); got {il.shape[0]} and {tl.shape[0]}")
    if (il > T).any() or (il < 1).any():
        raise RuntimeError(f"ctc_loss: input_lengths must be in [1, {T}] (got {il.tolist()})")
    if tg.ndim == 2 and (tl > tg.shape[1]).any():
        raise RuntimeError(f"ctc_loss: target_lengths must be at most the padded target length "
                           f"{tg.shape[1]} (got {tl.tolist()})")
    if tg.ndim == 1 and tl.sum() != tg.shape[0]:
        raise RuntimeError(f"ctc_loss: concatenated targets hold {tg.shape[0]} labels but "
                           f"target_lengths sum to {int(tl.sum())}")
    if tg.size and ((tg < 0) | (tg >= C)).any():
        raise IndexError(f"ctc_loss: target labels must be in [0, {C - 1}]")
    if not 0 <= blank < C:
        raise IndexError(f"ctc_loss: blank must be in [0, {C - 1}], got {blank}")
    if composed(lp):
        loss = _ctc_composite(lp, _extended_labels(tg, tl, blank), il, tl)
    else:
        loss = _CTC.apply(lp, tg, il, tl, blank)
    if zero_infinity:
        loss = where(loss == math.inf, 0.0, loss)
    if unbatched:
        loss = loss.reshape(())
    if reduction == "mean":
        lengths = like(np.maximum(tl, 1).reshape(loss.shape), lp, lp.dtype)
        return (loss / lengths).mean()
    return _reduce(loss, reduction)


# no dg.<name>: torch.binary_cross_entropy_with_logits and torch.ctc_loss exist but take
# ``reduction`` as an enum int, not the functional's string
register("cross_entropy", cross_entropy, "nn", method=False, functional=False)
register("nll_loss", nll_loss, "nn", method=False, functional=False)
register("binary_cross_entropy", binary_cross_entropy, "nn", method=False, functional=False)
register("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits, "nn", method=False,
         functional=False)
register("mse_loss", mse_loss, "nn", method=False, functional=False)
register("huber_loss", huber_loss, "nn", method=False, functional=False)
register("smooth_l1_loss", smooth_l1_loss, "nn", method=False, functional=False)
register("ctc_loss", ctc_loss, "nn", method=False, functional=False)
