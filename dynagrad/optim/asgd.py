"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import ASGD
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .optimizer import (Optimizer, bump, check_non_negative, check_supported, launch,
                        params_with_grad, scalar)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """SGD with a decaying step ``eta`` and a running average ``ax`` of the iterates.

    State: ``step``, ``eta``, ``mu`` (0-d, in the scalar dtype as PyTorch keeps them) and ``ax``.
    """

    def __init__(self, params, lr=1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach=None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_non_negative(lr=lr, weight_decay=weight_decay)
        check_supported("ASGD", differentiable, capturable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One ASGD update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lambd = scalar(group["lr"]), group["lambd"]
            alpha, t0 = group["alpha"], group["t0"]
            sgn = -1.0 if group["maximize"] else 1.0
            default = dtypes.get_default_dtype().np
            for p in params_with_grad(group, "ASGD"):
                state = self._param_state(p, "ax", eta=lr, mu=1.0)
                step = bump(state["step"])
                eta, mu = state["eta"], state["mu"]
                eta_value, mu_value = float(eta._data), float(mu._data)
                launch("asgd", (), p, (state["ax"],), sgn, group["weight_decay"],
                       1 - lambd * eta_value, -eta_value, mu_value, mu_value == 1)
                # PyTorch makes the new values default-dtype tensors, then copies them in
                eta._data[...] = np.asarray(lr / ((1 + lambd * lr * step) ** alpha), default)
                mu._data[...] = np.asarray(1 / max(1, step - t0), default)
                eta._vc[0] += 1
                mu._vc[0] += 1
        return loss
