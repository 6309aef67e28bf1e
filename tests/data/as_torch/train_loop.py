"""A small PyTorch training loop, written against the torch API (run by tests/test_as_torch.py)."""
import sys

import helper_mod  # a module next to this script: its folder must come first on sys.path
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = 3 * x + 0.5
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
first = None
for epoch in range(int(sys.argv[1])):
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
with torch.no_grad():
    final = F.mse_loss(model(x), y).item()
assert final < first / 4, (first, final)
print(f"{__name__} {sys.argv[1:]} {helper_mod.NAME} {final < first}")
