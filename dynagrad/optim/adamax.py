"""Adamax: Adam with the infinity norm.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Adamax
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
"""
from __future__ import annotations

from .adam import check_betas
from .optimizer import Optimizer, bump, check_supported, launch, params_with_grad, scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """``u = max(beta2*u, |g| + eps)``; ``p -= lr / (1 - beta1^t) * m / u``.

    State: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_betas(lr, eps, betas, weight_decay)
        check_supported("Adamax", differentiable, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adamax update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = scalar(group["lr"])
            sgn = -1.0 if group["maximize"] else 1.0
            w1 = 1 - beta1
            for p in params_with_grad(group, "Adamax"):
                state = self._param_state(p, "exp_avg", "exp_inf")
                step = bump(state["step"])
                clr = lr / (1 - beta1 ** step)
                launch("adamax", (), p, (state["exp_avg"], state["exp_inf"]), sgn,
                       group["weight_decay"], w1, 1 - w1, beta2, group["eps"], -clr)
        return loss
