"""dynagrad.nn.functional: the functional form of every layer, activation and loss.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.relu(dg.tensor([-1.0, 2.0]))
    tensor([0., 2.])
"""
from ...ops.movement import pad  # noqa: F401  (torch.nn.functional.pad)
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .embedding import *
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .misc import *  # noqa: F401,F403
from .norm import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .vision import *
