"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016), "Efficient softmax
approximation for GPUs", with PyTorch's parameters (``head``, ``tail.{i}.0``, ``tail.{i}.1``),
outputs and errors.

The classes are split at ``cutoffs`` into a frequent shortlist, scored by ``head`` together with
one logit per tail cluster, and the clusters, each scored by its own two-layer projection of
smaller width (``in_features // div_value ** (i + 1)``). The log-probability of a tail class is
its cluster's head log-probability plus its log-probability within the cluster.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 7])
    >>> out, loss = asm(dg.randn(5, 16), dg.tensor([0, 3, 5, 8, 9]))
    >>> tuple(out.shape), tuple(asm.log_prob(dg.randn(5, 16)).shape)
    ((5,), (5, 10))
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...creation import zeros
from ...dtypes import int64
from ...ops.movement import cat
from ...ops.placement import like
from ...tensor import Tensor
from ..functional.activation import log_softmax
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: ``forward(input, target)`` returns ``(output, loss)``, ``output`` the
    log-probability of each target and ``loss`` the mean negative log-likelihood; ``log_prob``
    gives every class's log-probability and ``predict`` the most likely class.

    Input ``(N, in_features)`` with target ``(N,)``, or ``(in_features,)`` with a 0-d target.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {list(input.shape)}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {list(input.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target.ndim > 0
        x = input if batched else input.unsqueeze(0)
        t = np.asarray(target.detach().cpu().numpy()).reshape(-1)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{t.min()}, {t.max()}] were found. ")
        # the head scores a shortlist target itself and a tail target through its cluster
        cluster = np.searchsorted(np.asarray(self.cutoffs), t, side="right")  # 0 = shortlist
        head_index = np.where(cluster == 0, t, self.shortlist_size + cluster - 1)
        head_logprob = log_softmax(self.head(x), 1)
        output = head_logprob.gather(1, like(head_index[:, None], x, int64)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.nonzero(cluster == i)[0]
            if rows.size == 0:
                continue
            rows_t = like(rows, x, int64)
            local = log_softmax(self.tail[i - 1](x.index_select(0, rows_t)), 1)
            relative = like((t[rows] - self.cutoffs[i - 1])[:, None], x, int64)
            within = local.gather(1, relative).squeeze(1)
            output = output + zeros(x.shape[0], dtype=x.dtype, device=x.device).scatter(
                0, rows_t, within)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, x: Tensor) -> Tensor:
        head_logprob = log_softmax(self.head(x), 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = log_softmax(self.tail[i](x), 1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probability of every class: ``(N, n_classes)`` (``(n_classes,)`` for an
        unbatched input)."""
        batched = input.ndim == 2
        out = self._full_log_prob(input if batched else input.unsqueeze(0))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the first on a tie): ``(N,)`` or 0-d."""
        return self.log_prob(input).argmax(-1)
