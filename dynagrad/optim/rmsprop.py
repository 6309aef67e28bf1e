"""RMSprop (optionally centered, with momentum).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import RMSprop
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=0.01, centered=True, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_supported, launch, new_step, params_with_grad,
                        scalar, zeros_like)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``sq = alpha*sq + (1-alpha)*g^2``; ``p -= lr * g / (sqrt(sq [- mean(g)^2]) + eps)``.

    State: ``step``, ``square_avg``, plus ``momentum_buffer`` (momentum > 0) and ``grad_avg``
    (centered).
    """

    def __init__(self, params, lr=1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_supported("RMSprop", differentiable, capturable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RMSprop update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            centered, momentum = bool(group["centered"]), group["momentum"]
            has_momentum = momentum > 0
            alpha = group["alpha"]
            sgn = -1.0 if group["maximize"] else 1.0
            scalars = (sgn, group["weight_decay"], alpha, 1 - alpha, 1 - (1 - alpha),
                       group["eps"], momentum, -scalar(group["lr"]))
            for p in params_with_grad(group, "RMSprop"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = new_step()
                    state["square_avg"] = zeros_like(p)
                    if has_momentum:
                        state["momentum_buffer"] = zeros_like(p)
                    if centered:
                        state["grad_avg"] = zeros_like(p)
                bump(state["step"])
                buffers = (state["square_avg"],)
                if centered:
                    buffers += (state["grad_avg"],)
                if has_momentum:
                    buffers += (state["momentum_buffer"],)
                launch("rmsprop", (centered, has_momentum), p, buffers, *scalars)
        return loss
