"""Train an LSTM to predict the next value of a sine wave from the previous 20.

Run:  python examples/train_lstm_sine.py
"""
import math
import time

import dynagrad as dg
import dynagrad.nn as nn

from _common import Progress


class SineLSTM(nn.Module):
    def __init__(self, hidden: int = 32):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: dg.Tensor) -> dg.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def windows(n: int = 512, length: int = 20, seed: int = 0):
    g = dg.Generator().manual_seed(seed)
    phase = dg.rand(n, 1, generator=g) * 2 * math.pi
    t = dg.arange(length + 1).float().unsqueeze(0) * 0.3 + phase
    wave = t.sin()
    return wave[:, :length].unsqueeze(-1), wave[:, length:]


def main(epochs: int = 60) -> float:
    dg.manual_seed(0)
    x, y = windows()
    x_val, y_val = windows(128, seed=1)
    model = SineLSTM()
    optimizer = dg.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.MSELoss()
    start = time.perf_counter()
    bar = Progress(range(epochs), "training")
    for _ in bar:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bar.postfix = f"mse {loss.item():.5f}"
    with dg.no_grad():
        val = loss_fn(model(x_val), y_val).item()
    print(f"validation mse {val:.5f} after {time.perf_counter() - start:.1f}s")
    return val


if __name__ == "__main__":
    final = main()
    assert final < 0.01, f"the LSTM should fit the sine wave (validation mse {final:.4f})"
