import torch

x = torch.ones(2)
x.no_such_method()
