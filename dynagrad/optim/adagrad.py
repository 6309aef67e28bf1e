"""Adagrad: per-element learning rates from the running sum of squared gradients.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Adagrad
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch, new_step,
                        params_with_grad, scalar, zeros_like)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """``sum += g^2``; ``p -= lr / (1 + (step-1)*lr_decay) * g / (sqrt(sum) + eps)``.

    As in PyTorch, the state (``step``, ``sum``) is created at construction.
    """

    def __init__(self, params, lr=1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        check_supported("Adagrad", differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["sum"] = zeros_like(p, self.defaults["initial_accumulator_value"])
        return state

    def step(self, closure=None):
        """One Adagrad update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay = scalar(group["lr"]), group["lr_decay"]
            sgn = -1.0 if group["maximize"] else 1.0
            for p in params_with_grad(group, "Adagrad"):
                state = self._init_state(p)
                step = bump(state["step"])
                clr = lr / (1 + (step - 1) * lr_decay)
                launch("adagrad", (), p, (state["sum"],), sgn, group["weight_decay"],
                       group["eps"], -clr)
        return loss
