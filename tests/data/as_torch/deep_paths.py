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
# a real module outside PyTorch's re-exporting packages answers only its own names
assert not hasattr(F, "Linear")
# compatibility names scripts touch
import torch.backends.cudnn
from torch.serialization import safe_globals

torch.backends.cudnn.benchmark = True
assert torch.backends.cudnn is dynagrad.backends.cudnn
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
with safe_globals([dict]):
    assert isinstance(torch.FloatTensor([1, 2]).to(device), torch.Tensor)
print("deep paths ok")
