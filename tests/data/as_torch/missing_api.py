"""Reaches an API dynagrad does not have: the run must stop with one line naming it."""
import torch

x = torch.ones(2)
y = torch.no_such_function(x)
