"""RMSprop (optionally centered, with momentum).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import RMSprop
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=0.01, centered=True, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch,
                        params_with_grad, scalar)

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
        check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                           alpha=alpha)
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
            names = (("square_avg",) + (("momentum_buffer",) if has_momentum else ())
                     + (("grad_avg",) if centered else ()))
            for p in params_with_grad(group, "RMSprop"):
                state = self._param_state(p, *names)
                bump(state["step"])
                buffers = (state["square_avg"],)
                if centered:
                    buffers += (state["grad_avg"],)
                if has_momentum:
                    buffers += (state["momentum_buffer"],)
                launch("rmsprop", (centered, has_momentum), p, buffers, *scalars)
        return loss
