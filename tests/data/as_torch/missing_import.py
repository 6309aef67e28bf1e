import torch
import torch.no_such_module  # noqa: F401
