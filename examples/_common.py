"""Helpers shared by the examples: a tiny progress bar, the bundled digits data set, a training
epoch and the ``--device`` command-line option."""
from __future__ import annotations

import sys
import time

import numpy as np

import dynagrad as dg


class Progress:
    """A one-line progress bar: ``for batch in Progress(loader, "epoch 1"): ...``."""

    def __init__(self, iterable, label: str, width: int = 24):
        self.iterable, self.label, self.width = iterable, label, width
        self.total = len(iterable)
        self.postfix = ""

    def __iter__(self):
        start = shown = time.perf_counter()
        for i, item in enumerate(self.iterable, 1):
            yield item
            now = time.perf_counter()
            if now - shown < 0.1 and i < self.total:  # redraw at most ten times a second
                continue
            shown = now
            done = int(self.width * i / self.total)
            rate = i / max(now - start, 1e-9)
            sys.stdout.write(f"\r{self.label} [{'#' * done}{'.' * (self.width - done)}] "
                             f"{i}/{self.total} {rate:5.1f} it/s {self.postfix}")
            sys.stdout.flush()
        sys.stdout.write("\n")


def digits(test_fraction: float = 0.2, seed: int = 0, images: bool = True):
    """scikit-learn's bundled 8x8 digits (no download): train/test tensors scaled to [0, 1]."""
    from sklearn.datasets import load_digits
    data = load_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = int(len(x) * test_fraction)
    if images:
        x = x.reshape(-1, 1, 8, 8)
    return (dg.from_numpy(x[n_test:]), dg.from_numpy(y[n_test:]),
            dg.from_numpy(x[:n_test]), dg.from_numpy(y[:n_test]))


def train_epoch(model, loader, loss_fn, optimizer, label: str, device: str = "cpu") -> None:
    """One pass over ``loader``: each batch moved to ``device``, forward, backward, step."""
    bar = Progress(loader, label)
    for x, y in bar:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bar.postfix = f"loss {loss.item():.3f}"


def accuracy(model, x: dg.Tensor, y: dg.Tensor) -> float:
    model.eval()
    device = next(model.parameters()).device
    with dg.no_grad():
        pred = model(x.to(device)).argmax(1).cpu()
    model.train()
    return (pred == y).float().mean().item()


def device_from_command_line(default: str = "cpu") -> str:
    """``--device cuda`` (or ``cuda:1``, ``cpu``) from the command line: where to train."""
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=default,
                        help="cpu, cuda or cuda:N (the whole run moves there: model and batches)")
    return parser.parse_args().device
