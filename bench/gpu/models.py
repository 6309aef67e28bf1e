"""The MLP and LeNet-5 of the training rows, at any size, for any ``nn`` namespace.

At their default sizes they are the CPU suite's models (``bench/workloads/models.py``); ``--smoke``
shrinks them so that a step runs on numba's CUDA simulator in a few seconds. Each is written once
against the ``nn`` namespace it is given (dynagrad's and PyTorch's match).

Example:
    >>> import dynagrad as dg
    >>> from bench.gpu.models import LeNetSize, lenet5, mlp
    >>> net = mlp(dg.nn, (16, 8, 10))
    >>> lenet5(dg.nn, LeNetSize(side=8, kernel=3, channels=(2, 2), hidden=(4, 4)))(
    ...     dg.zeros(1, 1, 8, 8)).shape
    dynagrad.Size([1, 10])
"""
from __future__ import annotations

from dataclasses import dataclass


def mlp(nn, sizes: tuple = (784, 256, 256, 10)):
    """Linear layers of ``sizes`` with ReLU between them."""
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        layers += [nn.Linear(n_in, n_out)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    return nn.Sequential(*layers)


@dataclass(frozen=True)
class LeNetSize:
    """LeNet-5's knobs: input side, square kernel, conv channels, hidden widths (10 classes)."""
    side: int = 28
    kernel: int = 5
    channels: tuple = (6, 16)
    hidden: tuple = (120, 84)

    def flat(self) -> int:
        """Features after the second pooling (the first conv keeps the side: padding k // 2)."""
        s = (self.side // 2 - self.kernel + 1) // 2
        if s < 1:
            raise ValueError(f"LeNetSize: a {self.side}x{self.side} input is too small for "
                             f"{self.kernel}x{self.kernel} kernels")
        return self.channels[1] * s * s

    def label(self) -> str:
        if self == LeNetSize():
            return "LeNet-5"
        c1, c2 = self.channels
        return (f"LeNet-5 ({self.side}x{self.side} input, {self.kernel}x{self.kernel} kernels, "
                f"{c1}/{c2} channels, {self.hidden[0]}/{self.hidden[1]} hidden)")


def lenet5(nn, size: LeNetSize = LeNetSize()):
    """LeNet-5 with ReLU and max-pooling, on 1-channel ``side x side`` inputs."""
    (c1, c2), (h1, h2), k = size.channels, size.hidden, size.kernel
    return nn.Sequential(nn.Conv2d(1, c1, k, padding=k // 2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c1, c2, k), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(size.flat(), h1), nn.ReLU(), nn.Linear(h1, h2), nn.ReLU(),
                         nn.Linear(h2, 10))
