"""Adafactor: Adam-like steps whose second moment of a matrix is kept factored (row and column
means), with a relative step size.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import Adafactor
    >>> w = dg.ones(2, 3, requires_grad=True)
    >>> opt = Adafactor([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
"""
from __future__ import annotations

import numpy as np

from ..autograd import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer, bump, new_step, params_with_grad, scalar, zeros_like

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """At step ``t``: ``beta2_t = 1 - t**beta2_decay``; ``rho = min(lr, 1/sqrt(t))``;
    ``alpha = max(eps2, rms(p)) * rho``. A parameter with two or more dims keeps
    ``row_var`` (mean of ``g^2`` over the last dim) and ``col_var`` (over the second-to-last),
    each an EMA with weight ``1 - beta2_t``, and estimates ``v = row_var @ col_var /
    mean(row_var)``; a vector keeps the full ``variance``. ``u = g / sqrt(max(v, eps1^2))``,
    clipped so ``rms(u) <= d``; ``p *= 1 - lr*weight_decay``; ``p -= alpha * u``.
    ``eps1=None`` is the parameter dtype's machine epsilon.

    State: ``step``, and ``row_var`` + ``col_var`` (matrices) or ``variance`` (vectors).
    """

    def __init__(self, params, lr=1e-2, beta2_decay: float = -0.8, eps=(None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach=None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            if p.ndim > 1:
                state["row_var"] = zeros_like(p[..., :1])
                state["col_var"] = zeros_like(p[..., :1, :])
            else:
                state["variance"] = zeros_like(p)
        return state

    @no_grad()
    def step(self, closure=None):
        """One Adafactor update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = float(scalar(group["lr"]))
            eps1, eps2 = group["eps"]
            for p in params_with_grad(group, "Adafactor"):
                grad = -p.grad if group["maximize"] else p.grad
                state = self._init_state(p)
                if eps1 is None:  # as PyTorch: the first parameter's dtype sets it for the group
                    eps1 = float(np.finfo(p.dtype.np).eps)
                t = bump(state["step"])
                weight = t ** group["beta2_decay"]  # 1 - beta2_t
                rho = min(lr, 1 / t ** 0.5)
                alpha = max(eps2, p.norm().item() / p.numel() ** 0.5) * rho
                if group["weight_decay"] != 0:
                    p.mul_(1 - lr * group["weight_decay"])
                if p.ndim > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_var.lerp_(grad.norm(dim=-1, keepdim=True).square() / grad.shape[-1],
                                  weight)
                    col_var.lerp_(grad.norm(dim=-2, keepdim=True).square() / grad.shape[-2],
                                  weight)
                    var = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
                else:
                    variance = state["variance"]
                    variance.lerp_(grad * grad, weight)
                    var = variance
                update = var.clamp(min=eps1 * eps1).rsqrt() * grad
                denom = max(1.0, update.norm().item() / (update.numel() ** 0.5 * group["d"]))
                p.add_(update, alpha=-alpha / denom)
        return loss
