"""Train an MLP on scikit-learn's bundled digits (flattened 8x8 images).

Run:  python examples/train_digits_mlp.py                 (add --device cuda for a GPU)
"""
import time

import dynagrad as dg
import dynagrad.nn as nn
from dynagrad.utils.data import DataLoader, TensorDataset

from _common import accuracy, device_from_command_line, digits, train_epoch


def main(epochs: int = 20, device: str = "cpu") -> float:
    dg.manual_seed(0)
    x_train, y_train, x_test, y_test = digits(images=False)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=dg.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                          nn.Linear(64, 10)).to(device)
    optimizer = dg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        train_epoch(model, loader, loss_fn, optimizer, f"epoch {epoch:2d}/{epochs}", device)
    acc = accuracy(model, x_test, y_test)
    print(f"final test accuracy {acc:.4f} after {time.perf_counter() - start:.1f}s")
    return acc


if __name__ == "__main__":
    final = main(device=device_from_command_line())
    assert final >= 0.95, f"expected >= 95% test accuracy, got {final:.4f}"
