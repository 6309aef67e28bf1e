"""L-BFGS with an optional strong-Wolfe line search (PyTorch's algorithm and defaults).

L-BFGS works on the concatenation of all parameters as one flat vector: its inner loops are dot
products and axpys over that vector, done with NumPy (BLAS) rather than per-tensor kernels. For
parameters on a CUDA device that vector lives on the host too: each evaluation copies the
gradients over and each step writes the new values back.

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

from ..autograd import enable_grad
from ..ops.placement import host
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
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d)
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
        gtd_new = g_new.dot(d)
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
        gtd_new = g_new.dot(d)
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

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p.numel(), p._data.dtype) if p._grad is None
                               else host(p._grad._data).reshape(-1) for p in self._params])

    def _add(self, t, d: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            step = (t * d[offset:offset + n]).reshape(p._data.shape)
            if p.is_cuda:  # the same sum as the in-place one below, computed on the host
                p._data[...] = (host(p._data) + step).astype(p._data.dtype)
            else:
                p._data[...] += step
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
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        d, t = _array(state.get("d")), state.get("t")
        old_dirs = [_array(v) for v in state.get("old_dirs", [])]
        old_stps = [_array(v) for v in state.get("old_stps", [])]
        ro = list(state.get("ro", []))
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = _array(state.get("prev_flat_grad")), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # curvature condition holds: remember this pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                d = self._two_loop(-flat_grad, old_dirs, old_stps, ro, h_diag)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
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
                opt_cond = np.abs(flat_grad).max() <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = evaluate()[1]
                    flat_grad = self._flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or evals >= max_eval or opt_cond
                    or np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change):
                break

        dt = self._params[0].dtype
        state.update(d=_tensor(d, dt), t=_py(t), old_dirs=[_tensor(v, dt) for v in old_dirs],
                     old_stps=[_tensor(v, dt) for v in old_stps], ro=[_py(v) for v in ro],
                     H_diag=_py(h_diag), prev_flat_grad=_tensor(prev_flat_grad, dt),
                     prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _two_loop(q, old_dirs, old_stps, ro, h_diag):
        """The L-BFGS two-loop recursion: approximate inverse Hessian times ``q``."""
        al = [None] * len(old_dirs)
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q = q - al[i] * old_dirs[i]
        r = q * h_diag
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r = r + (al[i] - be_i) * old_stps[i]
        return r


def _array(v):
    return v._data if isinstance(v, Tensor) else v


def _tensor(v, dt):
    return None if v is None else _wrap(np.asarray(v), dt)


def _py(v):
    return float(v) if isinstance(v, (np.floating, float)) else v
