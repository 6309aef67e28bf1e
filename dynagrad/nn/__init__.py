"""dynagrad.nn: layers, losses and containers with PyTorch's names and semantics.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn as nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> model(dg.randn(3, 4)).shape
    dynagrad.Size([3, 2])
"""
from . import functional, init, utils  # noqa: F401
from .module import *  # noqa: F401,F403
from .modules.activation import *  # noqa: F401,F403
from .modules.adaptive import *  # noqa: F401,F403
from .modules.attention import *  # noqa: F401,F403
from .modules.container import *  # noqa: F401,F403
from .modules.conv import *  # noqa: F401,F403
from .modules.dropout import *  # noqa: F401,F403
from .modules.embedding import *  # noqa: F401,F403
from .modules.fold import *  # noqa: F401,F403
from .modules.lazy import *  # noqa: F401,F403
from .modules.linear import *  # noqa: F401,F403
from .modules.loss import *  # noqa: F401,F403
from .modules.norm import *  # noqa: F401,F403
from .modules.padding import *  # noqa: F401,F403
from .modules.pooling import *  # noqa: F401,F403
from .modules.rnn import *  # noqa: F401,F403
from .modules.transformer import *  # noqa: F401,F403
from .modules.upsample import *  # noqa: F401,F403
from .parameter import *  # noqa: F401,F403
