"""The nn ops: the layers, activations and losses that own generated kernels and graph nodes
(registered with family ``nn``; ``dynagrad.nn.functional`` re-exports them). Importing this
package registers them all. CUDA tensors take each op's composed path (ops instead of its fused
CPU kernels); ``composed_on_cpu()`` runs those paths on CPU tensors too, to check them.

Example:
    >>> from dynagrad.ops.registry import REGISTRY
    >>> REGISTRY["conv2d"].family, REGISTRY["softmax"].method
    ('nn', 'softmax')
"""
from . import activation, conv, linear, loss, misc, norm, pooling, rnn, softmax  # noqa: F401
from ._placement import composed_on_cpu  # noqa: F401
