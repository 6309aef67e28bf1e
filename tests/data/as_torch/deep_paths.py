"""Imports through PyTorch's module paths; each must give dynagrad's own object."""
import torch
import torch.distributions
import torch.linalg
import torch.nn.functional as F
import torch.nn.modules.linear
import torch.utils.data.dataloader
from torch.nn.modules.activation import MultiheadAttention
from torch.nn.modules.sparse import Embedding
from torch.optim.adamw import AdamW
from torch.utils.data.dataloader import DataLoader

import dynagrad

assert torch is dynagrad
assert torch.nn.modules.linear.Linear is torch.nn.Linear
assert torch.nn.modules.linear is dynagrad.nn.modules.linear
assert MultiheadAttention is torch.nn.MultiheadAttention
assert Embedding is torch.nn.Embedding
assert AdamW is torch.optim.AdamW
assert DataLoader is torch.utils.data.DataLoader
assert F is dynagrad.nn.functional
assert torch.linalg is dynagrad.linalg
assert torch.distributions is dynagrad.distributions
print("deep paths ok")
