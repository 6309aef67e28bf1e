"""Pointwise losses of the difference ``d = input - target`` as one kernel each way.

``mse_loss``, ``huber_loss`` and ``smooth_l1_loss`` computed per element ``f(d)`` in one kernel
and its gradient ``g * f'(d)`` in another, where composing ops took three kernels forward and up
to five backward, each a pass over memory, and trailed PyTorch. The target's gradient is the
negated input gradient, the second derivative ``f''(d)`` serves double backward.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.ops.nn._difference_loss import SQUARED_ERROR
    >>> SQUARED_ERROR(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 4.0]))
    tensor([0., 4.])
"""
from __future__ import annotations

from ...kernels import cache as kernel_cache
from ..elementwise import Elementwise, compute, where
from ...tensor import Tensor


class DifferenceLoss:
    """``f(d)`` per element (``forward``, an expression of ``x - y``), its gradient
    ``g * f'(d)`` (``gradient``, of ``x``, ``y`` and ``g`` written ``z``) and
    ``second(d, **params)``, ``f''(d)`` as a tensor or a number (ops, for double backward)."""

    def __init__(self, name: str, forward: str, gradient: str, second, params: tuple = ()):
        camel = "".join(p.capitalize() for p in name.split("_"))
        self.second = second
        self.bwd = Elementwise(name + "_backward", {"f": gradient}, "promote",
                               (self._grad_of_grad_x, self._grad_of_grad_y,
                                self._grad_of_grad_g), {0, 1, 2},
                               f"{camel}BackwardBackward0", params)
        self.fwd = Elementwise(name, {"f": forward}, "promote", (self._grad_x, self._grad_y),
                               {0, 1}, f"{camel}Backward0", params)

    def __call__(self, x: Tensor, t: Tensor, **params) -> Tensor:
        """Each element's loss, broadcast over ``x`` and ``t``."""
        if not params:
            return self.fwd.binary(x, t)  # the elementwise hot path
        return compute(self.fwd, (x, t), params)

    def _grad_x(self, g, x, t, out, **p):
        return compute(self.bwd, (x, t, g), p or None)

    def _grad_y(self, g, x, t, out, **p):
        return -self._grad_x(g, x, t, out, **p)

    def _grad_of_grad_x(self, gg, x, t, g, out, **p):
        return gg * g * self.second(x - t, **p)

    def _grad_of_grad_y(self, gg, x, t, g, out, **p):
        return -self._grad_of_grad_x(gg, x, t, g, out, **p)

    def _grad_of_grad_g(self, gg, x, t, g, out, **p):
        return compute(self.bwd, (x, t, gg), p or None)


# PyTorch's forms, comparisons included (a NaN difference gives a NaN loss and gradient)
SQUARED_ERROR = DifferenceLoss("mse_loss", "(x - y) * (x - y)", "2.0 * (x - y) * z",
                               lambda d: 2.0)
HUBER = DifferenceLoss(
    "huber_loss",
    "0.5 * (x - y) * (x - y) if abs(x - y) < delta else delta * (abs(x - y) - 0.5 * delta)",
    "-z * delta if x - y < -delta else (z * delta if x - y > delta else z * (x - y))",
    lambda d, delta: where(d.abs() < delta, 1.0, 0.0), ("delta",))
SMOOTH_L1 = DifferenceLoss(
    "smooth_l1_loss",
    "0.5 * (x - y) * (x - y) / beta if abs(x - y) < beta else abs(x - y) - 0.5 * beta",
    "-z if x - y < -beta else (z if x - y > beta else z * (x - y) / beta)",
    lambda d, beta: where(d.abs() < beta, 1.0 / beta, 0.0), ("beta",))

# the hot path keeps compiled entry points per op: forget them with the kernel cache
kernel_cache._clear_hooks.append(
    lambda: [(f.fwd.fast.clear(), f.bwd.fast.clear()) for f in (SQUARED_ERROR, HUBER, SMOOTH_L1)])
