"""L-BFGS with an optional strong-Wolfe line search (PyTorch's algorithm and defaults).

L-BFGS works on the concatenation of all parameters as one flat vector: its inner loops are dot
products and axpys over that vector. For CPU parameters the vector is a NumPy array (BLAS rather
than per-tensor kernels); for CUDA parameters it is a dynagrad tensor on their device, so the
vectors and the history never leave the GPU: only the scalars the algorithm branches on (the loss,
curvature and descent tests, the line search's values and slopes) are read back, one scalar
transfer each.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import LBFGS
    >>> w = dg.tensor([3.0, -2.0], requires_grad=True)
    >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in w.tolist()]
    [1.0, 1.0]
"""
from __future__ import annotations

import numpy as np

from ..autograd import enable_grad, no_grad
from ..ops.movement import cat
from ..device import CPU
from ..tensor import Tensor, _wrap
from .optimizer import Optimizer, check_non_negative, scalar

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds``."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Find a step ``t`` along ``d`` satisfying the strong Wolfe conditions.

    ``evaluate(t)`` returns (loss, flat gradient) at ``x + t*d``. Returns (f, g, t, evaluations).
    """
    d_norm = _abs_max(d)
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    # bracketing phase: grow t until the interval [t_prev, t] holds a Wolfe point
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
    if it == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]
    # zoom phase: shrink the bracket by cubic interpolation
    insufficient = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and it < max_ls:
        ts = (bracket[0][0], bracket[1][0])
        if abs(ts[1] - ts[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket[0][0], bracket[0][1], bracket[0][3],
                       bracket[1][0], bracket[1][1], bracket[1][3])
        top, bottom = max(ts), min(ts)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            # too close to an end: move away from it unless the last try already made progress
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new, gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = list(bracket[low])
            bracket[low] = [t, f_new, g_new, gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """Limited-memory BFGS. ``step(closure)`` runs up to ``max_iter`` iterations, calling
    ``closure`` (which must zero the gradients, compute the loss, call ``backward`` and return
    the loss) as needed. One parameter group only.
    """

    def __init__(self, params, lr=1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        check_non_negative(lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _on_host(self) -> bool:
        return self._params[0].device is CPU

    def _flat_grad(self):
        """All gradients as one new flat vector (zeros for a parameter without one): a NumPy
        array for CPU parameters, a tensor on their device for CUDA ones."""
        if self._on_host():
            return np.concatenate([np.zeros(p.numel(), p._data.dtype) if p._grad is None
                                   else p._grad._data.reshape(-1) for p in self._params])
        with no_grad():
            return cat([p.new_zeros(p.numel()) if p._grad is None else p._grad.reshape(-1)
                        for p in self._params])

    def _add(self, t, d) -> None:
        """``params += t * d`` in place, ``d`` flat (NumPy or a device tensor)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            if isinstance(d, Tensor):
                with no_grad():  # a kernel on the device: p <- p + t * d[slice]
                    _wrap(p._data, p.dtype).add_(d[offset:offset + n].reshape(p.shape), alpha=t)
            else:
                p._data[...] += (t * d[offset:offset + n]).reshape(p._data.shape)
            p._vc[0] += 1
            offset += n

    def _set(self, values: list) -> None:
        for p, v in zip(self._params, values):
            p._data[...] = v
            p._vc[0] += 1

    def step(self, closure=None):
        """Run the L-BFGS iterations; returns the loss of the first closure call."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that re-evaluates the model and "
                               "returns the loss")
        group = self.param_groups[0]
        lr = scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        if line_search is not None and line_search != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")

        def evaluate():
            with enable_grad():
                out = closure()
            return out, float(out)

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss, loss = evaluate()
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if _abs_max(flat_grad) <= tol_grad:
            return orig_loss

        on_host = self._on_host()
        d, t = _vector(state.get("d")), state.get("t")
        old_dirs = [_vector(v) for v in state.get("old_dirs", [])]
        old_stps = [_vector(v) for v in state.get("old_stps", [])]
        ro = [_scalar(v, on_host) for v in state.get("ro", [])]
        h_diag = _scalar(state.get("H_diag"), on_host)
        prev_flat_grad, prev_loss = _vector(state.get("prev_flat_grad")), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys_vec = y.dot(s)
                ys = _value(ys_vec)
                if ys > 1e-10:  # curvature condition holds: remember this pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys_vec / y.dot(y)  # stays on the device: nothing branches on it
                d = self._two_loop(-flat_grad, old_dirs, old_stps, ro, h_diag)
            # flat_grad is always a fresh vector that is rebound, never written: no copy needed
            prev_flat_grad = flat_grad
            prev_loss = loss
            t = min(1.0, 1.0 / _abs_sum(flat_grad)) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)
            if gtd > -tol_change:  # not a descent direction
                break
            ls_evals = 0
            if line_search is not None:
                x0 = [p._data.copy() for p in self._params]

                def directional(step, x0=x0, d=d):
                    self._add(step, d)
                    f_new = evaluate()[1]
                    g_new = self._flat_grad()
                    self._set(x0)
                    return f_new, g_new

                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    directional, t, d, loss, flat_grad, gtd, max_ls=max_eval - evals)
                self._add(t, d)
                opt_cond = _abs_max(flat_grad) <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = evaluate()[1]
                    flat_grad = self._flat_grad()
                    opt_cond = _abs_max(flat_grad) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or evals >= max_eval or opt_cond
                    or _abs_max(d * t) <= tol_change or abs(loss - prev_loss) < tol_change):
                break

        dt = self._params[0].dtype
        state.update(d=_tensor(d, dt), t=_py(t), old_dirs=[_tensor(v, dt) for v in old_dirs],
                     old_stps=[_tensor(v, dt) for v in old_stps], ro=[_py(v) for v in ro],
                     H_diag=_py(h_diag), prev_flat_grad=_tensor(prev_flat_grad, dt),
                     prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _two_loop(q, old_dirs, old_stps, ro, h_diag):
        """The L-BFGS two-loop recursion: approximate inverse Hessian times ``q``. For device
        tensors the coefficients stay 0-d tensors on the device (no reads back)."""
        al = [None] * len(old_dirs)
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q = q - al[i] * old_dirs[i]
        r = q * h_diag
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r = r + (al[i] - be_i) * old_stps[i]
        return r


def _value(r):
    """A 0-d result the algorithm branches on, as a NumPy scalar of its dtype: a device tensor
    is read back once, and float32 stays float32 so both devices do the same arithmetic."""
    return r.cpu().numpy()[()] if isinstance(r, Tensor) else r


def _dot(a, b):
    return _value(a.dot(b))


def _abs_max(v):
    return _value(abs(v).max())


def _abs_sum(v):
    return _value(abs(v).sum())


def _vector(v):
    """A state vector as the step works on it: NumPy for a CPU tensor, the tensor on CUDA."""
    if isinstance(v, Tensor) and v.device is CPU:
        return v._data
    return v


def _scalar(v, on_host: bool):
    """``H_diag`` or ``ro`` from the state: a device tensor stays one on CUDA; a float on the
    CPU (where a tensor came from a state saved with CUDA parameters)."""
    if isinstance(v, Tensor) and on_host:
        return v.item()
    return v


def _tensor(v, dt):
    if v is None or isinstance(v, Tensor):
        return v
    return _wrap(np.asarray(v), dt)


def _py(v):
    return float(v) if isinstance(v, (np.floating, float)) else v
