"""RAdam: Adam with a rectified adaptive learning rate.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import RAdam
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 4)  # early steps are plain momentum SGD: 1 - 0.1 * 2
    0.8
"""
from __future__ import annotations

from .adam import check_betas, weight_decay_terms
from .optimizer import Optimizer, bump, check_supported, launch, params_with_grad, scalar

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Rectified Adam (Liu et al. 2019): plain momentum SGD until the variance estimate is
    tractable (``rho_t > 5``), then Adam scaled by the rectification term.

    State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_betas(lr, eps, betas, weight_decay)
        check_supported("RAdam", differentiable, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RAdam update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd = scalar(group["lr"]), group["weight_decay"]
            sgn = -1.0 if group["maximize"] else 1.0
            decay, wd_grad = weight_decay_terms(lr, wd, group["decoupled_weight_decay"])
            w1 = 1 - beta1
            rho_inf = 2 / (1 - beta2) - 1
            for p in params_with_grad(group, "RAdam"):
                state = self._param_state(p, "exp_avg", "exp_avg_sq")
                step = bump(state["step"])
                bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
                rectify = rho_t > 5.0
                rect = (((rho_t - 4) * (rho_t - 2) * rho_inf)
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rectify else 0.0
                launch("radam", (), p, (state["exp_avg"], state["exp_avg_sq"]), sgn, wd_grad,
                       decay, w1, 1 - w1, beta2, 1 - beta2, bc1, lr, bc2 ** 0.5, group["eps"],
                       rect, rectify)
        return loss
