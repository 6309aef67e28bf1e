"""Train a small CNN on scikit-learn's bundled digits (8x8 images, no download).

Run:  python examples/train_digits_cnn.py                 (add --device cuda for a GPU)
Reaches >= 97% test accuracy in well under a minute on a 2-core CPU (kernels compile on the first
run only; later runs load them from the disk cache).
"""
import os
import tempfile
import time

import dynagrad as dg
import dynagrad.nn as nn
from dynagrad.utils.data import DataLoader, TensorDataset

from _common import accuracy, device_from_command_line, digits, train_epoch


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, kernel_size=3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 4 x 4
        nn.Conv2d(32, 64, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 64 x 2 x 2
        nn.Flatten(), nn.Linear(64 * 2 * 2, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 10))


def main(epochs: int = 20, device: str = "cpu") -> float:
    dg.manual_seed(0)
    x_train, y_train, x_test, y_test = digits()
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=dg.Generator().manual_seed(0))
    model = build_model().to(device)
    print(model)
    optimizer = dg.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = dg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        train_epoch(model, loader, loss_fn, optimizer, f"epoch {epoch:2d}/{epochs}", device)
        scheduler.step()
        print(f"  test accuracy {accuracy(model, x_test, y_test):.4f}")
    acc = accuracy(model, x_test, y_test)
    print(f"final test accuracy {acc:.4f} after {time.perf_counter() - start:.1f}s "
          f"(kernels compiled {dg.kernels.cache_stats()['compiles']}, "
          f"loaded from disk {dg.kernels.cache_stats()['disk_loads']})")
    path = os.path.join(tempfile.gettempdir(), "digits_cnn.dg")
    dg.save(model.state_dict(), path)
    restored = build_model().to(device)
    restored.load_state_dict(dg.load(path))
    print(f"saved the weights to {path}; reloaded model accuracy "
          f"{accuracy(restored, x_test, y_test):.4f}")
    return acc


if __name__ == "__main__":
    final = main(device=device_from_command_line())
    assert final >= 0.97, f"expected >= 97% test accuracy, got {final:.4f}"
