"""The 784-256-256-10 MLP training step in plain NumPy, backward written by hand.

Imports NumPy only, so the peak-memory child process can use it without dynagrad or PyTorch.
"""
from __future__ import annotations

import numpy as np


class NumpyMLP:
    """Linear-ReLU-Linear-ReLU-Linear with mean cross-entropy and SGD with momentum (PyTorch's
    rule: ``buf = momentum * buf + grad; p -= lr * buf``). ``layers`` are ``(weight, bias)`` pairs
    with PyTorch's ``(out, in)`` weight layout.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> mlp = NumpyMLP([(rng.standard_normal((3, 4), dtype=np.float32),
        ...                  np.zeros(3, np.float32))], lr=0.1, momentum=0.9)
        >>> float(mlp.step(np.ones((2, 4), np.float32), np.array([0, 2]))) > 0
        True
    """

    def __init__(self, layers: list, lr: float, momentum: float):
        self.params = [p.copy() for layer in layers for p in layer]
        self.bufs = [None] * len(self.params)
        self.lr, self.momentum = np.float32(lr), np.float32(momentum)

    def step(self, x: np.ndarray, y: np.ndarray) -> np.float32:
        ws, bs = self.params[0::2], self.params[1::2]
        acts = [x]
        for w, b in zip(ws[:-1], bs[:-1]):
            acts.append(np.maximum(acts[-1] @ w.T + b, 0))
        logits = acts[-1] @ ws[-1].T + bs[-1]
        # mean cross-entropy and d(loss)/d(logits)
        n = x.shape[0]
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        loss = (np.log(s[:, 0]) - shifted[np.arange(n), y]).mean()
        g = e / s
        g[np.arange(n), y] -= 1
        g /= n
        grads = []
        for i in range(len(ws) - 1, -1, -1):
            grads += [g.sum(axis=0), g.T @ acts[i]]  # bias, weight (reversed below)
            if i:
                g = (g @ ws[i]) * (acts[i] > 0)
        grads.reverse()
        for k, (p, grad) in enumerate(zip(self.params, grads)):
            if self.bufs[k] is None:
                self.bufs[k] = grad.copy()
            else:
                self.bufs[k] *= self.momentum
                self.bufs[k] += grad
            p -= self.lr * self.bufs[k]
        return loss
