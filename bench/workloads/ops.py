"""Single-op workloads: per-op overhead on (32,32), elementwise, reductions, softmax, cross-entropy.

Each builder returns ``{framework: zero-argument callable}``. dynagrad and PyTorch share one
definition (their APIs match); NumPy gets a hand-written twin where one makes sense.
"""
from __future__ import annotations

import numpy as np
from scipy.special import erf

from .common import as_tensors, namespaces, randn

# The same expression for dynagrad and PyTorch tensors, and its NumPy twin (None: no twin).
SMALL_OPS = {
    "a+b": (lambda a, b: a + b, lambda a, b: a + b),
    "relu": (lambda a, b: a.relu(), lambda a, b: np.maximum(a, 0)),
    "sum": (lambda a, b: a.sum(), lambda a, b: a.sum()),
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b),
}


def _np_gelu(a: np.ndarray) -> np.ndarray:
    return a * np.float32(0.5) * (np.float32(1) + erf(a * np.float32(0.5 ** 0.5)))


ELEMENTWISE = {
    "a+b": (lambda F, a, b, c: a + b, lambda a, b, c: a + b),
    "a*b+c": (lambda F, a, b, c: a * b + c, lambda a, b, c: a * b + c),
    "exp": (lambda F, a, b, c: a.exp(), lambda a, b, c: np.exp(a)),
    "tanh": (lambda F, a, b, c: a.tanh(), lambda a, b, c: np.tanh(a)),
    "gelu": (lambda F, a, b, c: F.gelu(a), lambda a, b, c: _np_gelu(a)),
}


# In-place ops, which user code reaches through ``x += y``, ``add_`` and ``relu(inplace=True)``.
INPLACE = {
    "a.add_(b)": (lambda a, b: a.add_(b), lambda a, b: np.add(a, b, out=a)),
    "a.relu_()": (lambda a, b: a.relu_(), lambda a, b: np.maximum(a, 0, out=a)),
}


def overhead(op: str, requires_grad: bool):
    """``op`` on two (32,32) float32 tensors: the cost of one dispatch, and of recording it."""
    expr, np_expr = SMALL_OPS[op]

    def build(cfg) -> dict:
        a, b = randn(32, 32, seed=0), randn(32, 32, seed=1)
        fns = {}
        for fw in namespaces():
            ta, tb = as_tensors(fw, a, b)
            ta.requires_grad_(requires_grad)
            tb.requires_grad_(requires_grad)
            fns[fw] = lambda ta=ta, tb=tb: expr(ta, tb)
        if not requires_grad:
            fns["numpy"] = lambda: np_expr(a, b)
        return fns
    return build


def round_trip(cfg) -> dict:
    """Forward and backward of ``(a*b).sum()`` on (32,32): the whole autograd round trip."""
    a, b = randn(32, 32, seed=0), randn(32, 32, seed=1)
    fns = {}
    for fw in namespaces():
        ta, tb = (t.requires_grad_() for t in as_tensors(fw, a, b))

        def step(ta=ta, tb=tb):
            ta.grad = tb.grad = None
            (ta * tb).sum().backward()
        fns[fw] = step
    return fns


def elementwise(op: str, n: int):
    """``op`` over ``n`` float32 elements into a fresh output, as user code writes it."""
    expr, np_expr = ELEMENTWISE[op]

    def build(cfg) -> dict:
        a, b, c = randn(n, seed=0), randn(n, seed=1), randn(n, seed=2)
        fns = {"numpy": lambda: np_expr(a, b, c)}
        for fw, (_, nn) in namespaces().items():
            ta, tb, tc = as_tensors(fw, a, b, c)
            fns[fw] = lambda F=nn.functional, ta=ta, tb=tb, tc=tc: expr(F, ta, tb, tc)
        return fns
    return build


def inplace(op: str, n: int):
    """``op`` over ``n`` float32 elements, writing into its first operand (each ``add_`` adds a
    standard normal: the suite's thousands of calls keep the values far from overflow)."""
    expr, np_expr = INPLACE[op]

    def build(cfg) -> dict:
        a, b = randn(n, seed=0), randn(n, seed=1)
        fns = {"numpy": lambda: np_expr(a, b)}
        for fw in namespaces():
            ta, tb = as_tensors(fw, a, b)
            fns[fw] = lambda ta=ta, tb=tb: expr(ta, tb)
        return fns
    return build


def sum_all(n: int):
    def build(cfg) -> dict:
        a = randn(n)
        fns = {"numpy": lambda: a.sum()}
        for fw in namespaces():
            ta, = as_tensors(fw, a)
            fns[fw] = lambda ta=ta: ta.sum()
        return fns
    return build


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    e /= e.sum(axis=1, keepdims=True)
    return e


def softmax(rows: int, cols: int):
    """Softmax over the last dimension."""
    def build(cfg) -> dict:
        x = randn(rows, cols)
        fns = {"numpy": lambda: _np_softmax(x)}
        for fw, (_, nn) in namespaces().items():
            tx, = as_tensors(fw, x)
            fns[fw] = lambda F=nn.functional, tx=tx: F.softmax(tx, dim=-1)
        return fns
    return build


def _np_cross_entropy_fwd_bwd(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mean cross-entropy and its gradient with respect to the logits."""
    n = x.shape[0]
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    loss = (np.log(s[:, 0]) - shifted[np.arange(n), t]).mean()
    grad = e / s
    grad[np.arange(n), t] -= 1
    grad /= n
    return loss, grad


def _loss_steps(loss: str, x: np.ndarray, t: np.ndarray, numpy_twin) -> dict:
    """``{framework: step}``: ``F.<loss>(x, t).backward()`` with ``x`` requiring grad, and the
    hand-written NumPy twin of the same forward and backward."""
    fns = {"numpy": lambda: numpy_twin(x, t)}
    for fw, (_, nn) in namespaces().items():
        tx, tt = as_tensors(fw, x, t)
        tx.requires_grad_()

        def step(fn=getattr(nn.functional, loss), tx=tx, tt=tt):
            tx.grad = None
            fn(tx, tt).backward()
        fns[fw] = step
    return fns


def cross_entropy(rows: int, classes: int):
    """Mean cross-entropy over logits (rows, classes) and int64 targets, forward and backward."""
    def build(cfg) -> dict:
        x, t = randn(rows, classes), np.random.default_rng(1).integers(0, classes, rows)
        return _loss_steps("cross_entropy", x, t, _np_cross_entropy_fwd_bwd)
    return build


def _np_mse_fwd_bwd(x: np.ndarray, t: np.ndarray) -> tuple:
    d = x - t
    return np.mean(d * d), d * np.float32(2 / d.size)


def mse_loss(rows: int, cols: int):
    """Mean squared error of (rows, cols) predictions against targets, forward and backward."""
    def build(cfg) -> dict:
        return _loss_steps("mse_loss", randn(rows, cols, seed=0), randn(rows, cols, seed=1),
                           _np_mse_fwd_bwd)
    return build
