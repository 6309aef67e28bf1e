"""Train a two-layer MLP on a synthetic 3-class spiral with nothing but tensors and autograd.

Run:  python examples/autograd_mlp.py
The first run compiles the kernels it needs (a few seconds); later runs load them from the cache.
"""
import math
import time

import dynagrad as dg


def spiral(n_per_class: int = 200, classes: int = 3, seed: int = 0):
    """Points on interleaved spiral arms: a classic problem a linear model cannot solve."""
    g = dg.Generator().manual_seed(seed)
    xs, ys = [], []
    for c in range(classes):
        r = dg.linspace(0.05, 1.0, n_per_class)
        theta = dg.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + 0.2 * dg.randn(n_per_class,
                                                                                 generator=g)
        xs.append(dg.stack([r * theta.sin(), r * theta.cos()], dim=1))
        ys.append(dg.full((n_per_class,), c, dtype=dg.int64))
    return dg.cat(xs), dg.cat(ys)


def cross_entropy(logits: dg.Tensor, target: dg.Tensor) -> dg.Tensor:
    """Mean negative log-likelihood of the target classes."""
    picked = logits.gather(1, target.unsqueeze(1)).squeeze(1)
    return (logits.logsumexp(1) - picked).mean()


def main(epochs: int = 300, hidden: int = 64, lr: float = 0.5) -> float:
    dg.manual_seed(0)
    x, y = spiral()
    w1 = (dg.randn(2, hidden) * math.sqrt(2 / 2)).requires_grad_()
    b1 = dg.zeros(hidden, requires_grad=True)
    w2 = (dg.randn(hidden, 3) * math.sqrt(1 / hidden)).requires_grad_()
    b2 = dg.zeros(3, requires_grad=True)
    params = [w1, b1, w2, b2]
    start = time.perf_counter()
    for epoch in range(epochs + 1):
        logits = (x @ w1 + b1).relu() @ w2 + b2
        loss = cross_entropy(logits, y)
        for p in params:
            p.grad = None
        loss.backward()
        with dg.no_grad():
            for p in params:
                p -= lr * p.grad
        if epoch % 50 == 0:
            acc = (logits.argmax(1) == y).float().mean().item()
            print(f"epoch {epoch:4d}  loss {loss.item():.4f}  accuracy {acc:.3f}")
    print(f"trained in {time.perf_counter() - start:.1f}s; kernels: {dg.kernels.cache_stats()}")
    return acc


if __name__ == "__main__":
    final = main()
    assert final > 0.9, f"the MLP should separate the spirals (accuracy {final:.3f})"
