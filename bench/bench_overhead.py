"""Per-op overhead on small tensors: dynagrad vs NumPy vs PyTorch, interleaved in one run.

Run:  python bench/bench_overhead.py [--repeats 7] [--number 2000]
Prints a table of median times (us) with their range and the dynagrad/PyTorch ratio.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dynagrad as dg

try:
    import torch
    torch.set_num_threads(2)
except ImportError:  # the table still shows dynagrad and NumPy
    torch = None


def workloads():
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    a, b = dg.from_numpy(a_np.copy()), dg.from_numpy(b_np.copy())
    ag, bg = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    rows = {
        "a + b": (lambda: a + b, lambda: a_np + b_np),
        "a + b (requires_grad)": (lambda: ag + bg, None),
        "relu": (lambda: a.relu(), lambda: np.maximum(a_np, 0)),
        "relu (requires_grad)": (lambda: ag.relu(), None),
        "sum": (lambda: a.sum(), lambda: a_np.sum()),
        "sum (requires_grad)": (lambda: ag.sum(), None),
        "matmul": (lambda: a @ b, lambda: a_np @ b_np),
        "matmul (requires_grad)": (lambda: ag @ bg, None),
        "(a*b).sum() fwd+bwd": (lambda: (ag * bg).sum().backward(), None),
    }
    if torch is not None:
        ta, tb = torch.from_numpy(a_np.copy()), torch.from_numpy(b_np.copy())
        tag, tbg = ta.clone().requires_grad_(), tb.clone().requires_grad_()
        torch_fns = {
            "a + b": lambda: ta + tb, "a + b (requires_grad)": lambda: tag + tbg,
            "relu": lambda: ta.relu(), "relu (requires_grad)": lambda: tag.relu(),
            "sum": lambda: ta.sum(), "sum (requires_grad)": lambda: tag.sum(),
            "matmul": lambda: ta @ tb, "matmul (requires_grad)": lambda: tag @ tbg,
            "(a*b).sum() fwd+bwd": lambda: (tag * tbg).sum().backward(),
        }
    else:
        torch_fns = {}
    return [(name, dgf, npf, torch_fns.get(name)) for name, (dgf, npf) in rows.items()]


def per_call_us(fn, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number * 1e6


def main(argv=None) -> list:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--number", type=int, default=2000)
    args = p.parse_args(argv)
    rows = workloads()
    for _, *fns in rows:  # warm-up: compile / load kernels, fill allocator caches
        for f in fns:
            if f is not None:
                per_call_us(f, 50)
    samples = {(name, k): [] for name, *_ in rows for k in range(3)}
    for _ in range(args.repeats):  # interleave libraries so machine noise hits all alike
        for name, *fns in rows:
            for k, f in enumerate(fns):
                if f is not None:
                    samples[(name, k)].append(per_call_us(f, args.number))
    print(f"{'workload (32x32 float32)':28s} {'dynagrad us':>16s} {'numpy us':>16s} "
          f"{'torch us':>16s} {'dg/torch':>8s}")
    table = []
    for name, *_ in rows:
        cells, meds = [], []
        for k in range(3):
            s = samples[(name, k)]
            if s:
                m = statistics.median(s)
                meds.append(m)
                cells.append(f"{m:6.2f} [{min(s):.2f}-{max(s):.2f}]")
            else:
                meds.append(None)
                cells.append("-")
        ratio = f"{meds[0] / meds[2]:.2f}" if meds[2] else "-"
        print(f"{name:28s} {cells[0]:>16s} {cells[1]:>16s} {cells[2]:>16s} {ratio:>8s}")
        table.append((name, *meds))
    return table


if __name__ == "__main__":
    main()
