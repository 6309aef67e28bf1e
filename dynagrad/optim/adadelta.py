"""Adadelta (Zeiler 2012).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Adadelta
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = Adadelta([w])
    >>> (w * w).sum().backward(); opt.step()
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_supported, launch, new_step, params_with_grad,
                        scalar, zeros_like)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Step ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``, scaled by ``lr``.

    State: ``step``, ``square_avg``, ``acc_delta``.
    """

    def __init__(self, params, lr=1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_supported("Adadelta", differentiable, capturable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adadelta update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            rho = group["rho"]
            sgn = -1.0 if group["maximize"] else 1.0
            scalars = (sgn, group["weight_decay"], rho, 1 - rho, group["eps"],
                       -scalar(group["lr"]))
            for p in params_with_grad(group, "Adadelta"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = new_step()
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                bump(state["step"])
                launch("adadelta", (), p, (state["square_avg"], state["acc_delta"]), *scalars)
        return loss
