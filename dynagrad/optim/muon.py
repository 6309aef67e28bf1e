"""Muon: momentum, then the update orthogonalised by a Newton-Schulz iteration (2-D parameters).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Muon
    >>> w = dg.ones(3, 2, requires_grad=True)
    >>> opt = Muon([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> w.shape
    dynagrad.Size([3, 2])

PyTorch runs the Newton-Schulz iteration in bfloat16; here it runs in the parameter's dtype
(float32 or float64), so an update agrees with PyTorch's to bfloat16 rounding (about 1e-2
relative) and is closer to the exact iteration.
"""
from __future__ import annotations

import math

from ..autograd import no_grad
from ..ops.linalg import addmm
from ..tensor import Tensor
from .optimizer import Optimizer, params_with_grad, scalar, zeros_like

__all__ = ["Muon"]

# PyTorch's defaults: a quintic iteration with coefficients chosen for a steep slope at zero
_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _orthogonalize(update: Tensor, coefficients, steps: int, eps: float) -> Tensor:
    """About ``U V^T`` of ``update = U S V^T``: ``steps`` iterations of
    ``X <- a X + (b G + c G G) X`` with ``G = X X^T``, started from ``update / ||update||``, on the
    wide orientation (fewer rows than columns) so ``G`` is the smaller Gram matrix."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.T if tall else update
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = addmm(x, addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    """``lr`` scaled so the orthogonal update's RMS does not depend on the matrix's aspect:
    ``sqrt(max(1, rows/cols))`` ("original", the default) or ``0.2 sqrt(max(rows, cols))``
    ("match_rms_adamw", an AdamW-like RMS)."""
    rows, cols = shape[:2]
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr * math.sqrt(max(1, rows / cols))


class Muon(Optimizer):
    """``B = momentum*B + (1-momentum)*g`` (as ``lerp``); the update is ``lerp(g, B, momentum)``
    with ``nesterov`` (else ``B``), orthogonalised; ``p *= 1 - lr*weight_decay``;
    ``p -= adjusted_lr * update``. Only 2-D parameters (hidden-layer weights).

    State: ``momentum_buffer``.
    """

    def __init__(self, params, lr=1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients=_NS_COEFFICIENTS, eps: float = 1e-7,
                 ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @no_grad()
    def step(self, closure=None):
        """One Muon update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = float(scalar(group["lr"]))
            momentum = group["momentum"]
            for p in params_with_grad(group, "Muon"):
                grad = p.grad
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(p)
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"],
                                        group["eps"])
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
