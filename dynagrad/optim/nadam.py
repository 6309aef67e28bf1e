"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import NAdam
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
"""
from __future__ import annotations

from .adam import check_betas, weight_decay_terms
from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch,
                        params_with_grad, scalar)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Nesterov-accelerated Adam (Dozat 2016), PyTorch's formulation.

    State: ``step``, ``mu_product`` (0-d, the running product of momentum coefficients, kept in
    the scalar dtype as PyTorch does), ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_betas(lr, eps, betas, weight_decay)
        check_non_negative(momentum_decay=momentum_decay)
        check_supported("NAdam", differentiable, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One NAdam update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd = scalar(group["lr"]), group["weight_decay"]
            psi = group["momentum_decay"]
            sgn = -1.0 if group["maximize"] else 1.0
            decay, wd_grad = weight_decay_terms(lr, wd, group["decoupled_weight_decay"])
            w1 = 1 - beta1
            for p in params_with_grad(group, "NAdam"):
                state = self._param_state(p, "exp_avg", "exp_avg_sq", mu_product=1.0)
                step = bump(state["step"])
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
                prod = state["mu_product"]
                prod._data *= mu  # in the scalar dtype, as PyTorch's in-place tensor product
                prod._vc[0] += 1
                mu_product = float(prod._data)
                coef_g = -lr * (1.0 - mu) / (1.0 - mu_product)
                coef_m = (-lr * mu_next) / (1.0 - mu_product * mu_next)
                launch("nadam", (), p, (state["exp_avg"], state["exp_avg_sq"]), sgn, wd_grad,
                       decay, w1, 1 - w1, beta2, 1 - beta2, 1 - beta2 ** step, group["eps"],
                       coef_g, coef_m)
        return loss
