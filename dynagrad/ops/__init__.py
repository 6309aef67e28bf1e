"""The op registry and the op families. Importing this package attaches every Tensor method."""
from . import elementwise, indexing, linalg, movement, reduce, special, tensor_methods  # noqa: F401
from . import rearrange, scatter_gather, structure  # noqa: F401  (compositions of the families above)
from . import complex, fft  # noqa: F401
from . import sets, statistics  # noqa: F401  (after reduce and indexing, which they compose)
from . import decompositions  # noqa: F401  (after linalg, whose products it composes)
from . import nn  # noqa: F401  (after the families it composes)
from .registry import FUNCTIONS, REGISTRY  # noqa: F401
