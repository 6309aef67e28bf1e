"""Adadelta (Zeiler 2012).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Adadelta
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = Adadelta([w])
    >>> (w * w).sum().backward(); opt.step()
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch,
                        params_with_grad, scalar)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Step ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``, scaled by ``lr``.

    State: ``step``, ``square_avg``, ``acc_delta``.
    """

    def __init__(self, params, lr=1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_non_negative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative(eps=eps, weight_decay=weight_decay)
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
                state = self._param_state(p, "square_avg", "acc_delta")
                bump(state["step"])
                launch("adadelta", (), p, (state["square_avg"], state["acc_delta"]), *scalars)
        return loss
