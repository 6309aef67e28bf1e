"""Rprop: resilient backpropagation (sign-based steps with per-element adaptive sizes).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Rprop
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
"""
from __future__ import annotations

from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch, new_step,
                        params_with_grad, scalar, zeros_like)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Each element's step grows by ``etas[1]`` while its gradient keeps its sign, shrinks by
    ``etas[0]`` (and skips the update) when it flips, clamped to ``step_sizes``.

    State: ``step``, ``prev`` (the previous gradient), ``step_size``.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_supported("Rprop", differentiable, capturable)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Rprop update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            sgn = -1.0 if group["maximize"] else 1.0
            for p in params_with_grad(group, "Rprop"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = new_step()
                    state["prev"] = zeros_like(p)
                    state["step_size"] = zeros_like(p, scalar(group["lr"]))
                bump(state["step"])
                launch("rprop", (), p, (state["prev"], state["step_size"]), sgn, etaplus,
                       etaminus, smin, smax)
        return loss
