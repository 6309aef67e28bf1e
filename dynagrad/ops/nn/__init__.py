"""The nn ops: the layers, activations and losses that own generated kernels and graph nodes
(registered with family ``nn``; ``dynagrad.nn.functional`` re-exports them). Importing this
package registers them all.

Example:
    >>> from dynagrad.ops.registry import REGISTRY
    >>> REGISTRY["conv2d"].family, REGISTRY["softmax"].method
    ('nn', 'softmax')
"""
from . import activation, conv, linear, loss, misc, norm, pooling, rnn, softmax  # noqa: F401
