"""dynagrad.optim: optimizers whose updates run as fused generated kernels, and LR schedulers.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.optim as optim
    >>> w = dg.zeros(3, requires_grad=True)
    >>> opt = optim.Adam([w], lr=1e-2)
    >>> sched = optim.lr_scheduler.StepLR(opt, step_size=10)
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "Adafactor", "Muon",
           "lr_scheduler"]
