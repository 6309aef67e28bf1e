"""Adam and AdamW (with optional AMSGrad), one fused kernel per parameter.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Adam
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch,
                        params_with_grad, scalar)

__all__ = ["Adam", "AdamW"]


def check_betas(lr, eps, betas, weight_decay) -> None:
    """PyTorch's validation of the Adam-family hyper-parameters."""
    check_non_negative(lr=lr, eps=eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    check_non_negative(weight_decay=weight_decay)


def weight_decay_terms(lr, weight_decay: float, decoupled: bool) -> tuple:
    """``(decay, wd_grad)``: the factor on ``p`` (AdamW's ``1 - lr*wd``) and the ``wd`` added to
    the gradient (classic L2), exactly one of them active."""
    return (1 - lr * weight_decay, 0.0) if decoupled else (1.0, weight_decay)


class Adam(Optimizer):
    """Adam (Kingma & Ba). ``decoupled_weight_decay=True`` gives AdamW's decay ``p *= 1 - lr*wd``.

    State per parameter: ``step`` (0-d), ``exp_avg``, ``exp_avg_sq`` and, with ``amsgrad``,
    ``max_exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False) -> None:
        check_betas(lr, eps, betas, weight_decay)
        check_supported(type(self).__name__, differentiable, capturable)
        betas = (scalar(betas[0], "betas[0]"), scalar(betas[1], "betas[1]"))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adam update of every parameter that has a gradient; returns the closure's loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            amsgrad = bool(group["amsgrad"])
            beta1, beta2 = group["betas"]
            lr, wd, eps = scalar(group["lr"]), group["weight_decay"], group["eps"]
            sgn = -1.0 if group["maximize"] else 1.0
            decay, wd_grad = weight_decay_terms(lr, wd, group["decoupled_weight_decay"])
            w1 = 1 - beta1
            names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
            for p in params_with_grad(group, type(self).__name__):
                state = self._param_state(p, *names)
                step = bump(state["step"])
                bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
                buffers = (state["exp_avg"], state["exp_avg_sq"])
                if amsgrad:
                    buffers += (state["max_exp_avg_sq"],)
                launch("adam", (amsgrad,), p, buffers, sgn, wd_grad, decay, w1, 1 - w1, beta2,
                       1 - beta2, bc2 ** 0.5, eps, -(lr / bc1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter); ``weight_decay`` defaults to 0.01."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
