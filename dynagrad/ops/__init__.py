"""The op registry and the op families. Importing this package attaches every Tensor method."""
from . import elementwise, indexing, linalg, movement, reduce, tensor_methods  # noqa: F401
from . import decompositions  # noqa: F401  (after linalg, whose products it composes)
from . import nn  # noqa: F401  (after the families it composes)
from .registry import FUNCTIONS, REGISTRY  # noqa: F401
