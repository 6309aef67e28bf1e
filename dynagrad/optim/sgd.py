"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import SGD
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.5, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.], requires_grad=True)
"""
from __future__ import annotations

from .optimizer import Optimizer, check_supported, launch, params_with_grad, scalar, zeros_like

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * g`` where ``g`` is the (weight-decayed, momentum-averaged) gradient.

    The momentum buffer is created on the first step as a copy of the gradient (PyTorch's rule).
    """

    def __init__(self, params, lr=1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None) -> None:
        if scalar(lr) < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_supported("SGD", differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            momentum = group["momentum"]
            has_momentum = momentum != 0
            options = (has_momentum, bool(group["nesterov"]))
            sgn = -1.0 if group["maximize"] else 1.0
            lr, wd = scalar(group["lr"]), group["weight_decay"]
            omd = 1 - group["dampening"]
            for p in params_with_grad(group, "SGD"):
                if not has_momentum:
                    launch("sgd", options, p, (), sgn, wd, lr, momentum, omd)
                    continue
                state = self.state[p]
                buf = state.get("momentum_buffer")
                first = buf is None
                if first:
                    buf = state["momentum_buffer"] = zeros_like(p)
                launch("sgd", options, p, (buf,), sgn, wd, lr, momentum, omd, first)
        return loss
