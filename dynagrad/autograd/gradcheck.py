"""Finite-difference checks of analytical gradients (``gradcheck``, ``gradgradcheck``).

Example:
    >>> import dynagrad as dg
    >>> x = dg.randn(3, dtype=dg.float64, requires_grad=True)
    >>> dg.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
    True
"""
from __future__ import annotations

import numpy as np

from . import grad_mode
from .engine import grad as autograd_grad


class GradcheckError(RuntimeError):
    pass


def _outputs(fn, inputs) -> tuple:
    out = fn(*inputs)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _real_outputs(func):
    """``func`` with each complex output as two real ones, its real and imaginary parts (the
    Jacobian of a complex output is that of the pair)."""
    def fn(*args):
        res = []
        for o in _outputs(func, args):
            res.extend((o.real, o.imag) if o.dtype.is_complex else (o,))
        return tuple(res)
    return fn


def _numerical_jacobian(fn, inputs, k, out_index, eps) -> np.ndarray:
    x = inputs[k]
    flat = x._data.reshape(-1)  # inputs are contiguous float64 leaves here
    with grad_mode.no_grad():
        n_out = _outputs(fn, inputs)[out_index].numel()
        jac = np.zeros((flat.size, n_out))
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + eps
            plus = _outputs(fn, inputs)[out_index]._data.astype(np.float64).reshape(-1).copy()
            flat[i] = orig - eps
            minus = _outputs(fn, inputs)[out_index]._data.astype(np.float64).reshape(-1).copy()
            flat[i] = orig
            jac[i] = (plus - minus) / (2 * eps)
    return jac


def _analytical_jacobian(fn, inputs, diff_idx, out_index) -> list:
    out = _outputs(fn, inputs)[out_index]
    jacs = [np.zeros((inputs[k].numel(), out.numel())) for k in diff_idx]
    from ..creation import zeros
    for j in range(out.numel()):
        g = zeros(tuple(out.shape), dtype=out.dtype, device=out.device)  # C order: a view below
        g._data.reshape(-1)[j] = 1.0
        grads = autograd_grad(out, [inputs[k] for k in diff_idx], g, retain_graph=True,
                              allow_unused=True)
        for col, gk in zip(jacs, grads):
            if gk is not None:
                col[:, j] = gk._data.astype(np.float64).reshape(-1)
    return jacs


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **_ignored) -> bool:
    """Compare backward's Jacobian with central differences for every float64 input that requires
    grad; raise (or return False) naming the input and output that disagree."""
    from ..tensor import Tensor
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_idx = [k for k, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    for k in diff_idx:
        if inputs[k].dtype.name != "float64":
            import warnings
            warnings.warn(f"gradcheck: input {k} is {inputs[k].dtype.name}, not float64; the "
                          "check may fail from rounding alone")
        if not inputs[k].is_contiguous():
            raise GradcheckError(f"gradcheck: input {k} must be contiguous")
    fn = _real_outputs(func)
    n_out = len(_outputs(fn, inputs))
    for oi in range(n_out):
        out = _outputs(fn, inputs)[oi]
        if not out.dtype.is_floating_point or not out.requires_grad:
            continue
        analytical = _analytical_jacobian(fn, inputs, diff_idx, oi)
        for k, a in zip(diff_idx, analytical):
            numerical = _numerical_jacobian(fn, inputs, k, oi, eps)
            if not np.allclose(a, numerical, atol=atol, rtol=rtol, equal_nan=True):
                if not raise_exception:
                    return False
                err = np.abs(a - numerical).max()
                raise GradcheckError(
                    f"Jacobian mismatch for output {oi} with respect to input {k} (max abs "
                    f"difference {err:.3g}),\nnumerical:\n{numerical}\nanalytical:\n{a}")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True, **_ignored) -> bool:
    """``gradcheck`` of the gradient itself (backward with ``create_graph=True``)."""
    from ..random import randn_like
    from ..tensor import Tensor
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o).requires_grad_() for o in outs
                             if o.requires_grad)

    def first_grads(*args):
        # the numerical Jacobian evaluates this under no_grad: the first derivative needs a graph
        with grad_mode.enable_grad():
            xs, gos = args[:len(inputs)], args[len(inputs):]
            outs = [o for o in _outputs(func, xs) if o.requires_grad]
            d = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
            gs = autograd_grad(outs, d, gos, create_graph=True, allow_unused=True)
            return tuple(g for g in gs if g is not None)
    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
