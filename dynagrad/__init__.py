"""dynagrad: a PyTorch-style deep-learning framework whose kernels are generated Python, compiled
by Numba on first use and cached on disk.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""
from ._gc import collection_paused as _collection_paused

# the import's objects mostly live on: collecting while they appear cost ~7% of it (see _gc)
with _collection_paused():
    from ._cpu_target import prefer_wide_vectors as _prefer_wide_vectors
    from ._malloc import tune_malloc as _tune_malloc
    from ._threads import choose_threading_layer as _choose_threading_layer

    # both before Numba is imported: it reads its CPU target and starts its thread pool once
    _prefer_wide_vectors()
    _choose_threading_layer()
    _tune_malloc()  # freed buffers stay for reuse: no page faults per training step

    from . import autograd, dtypes, kernels, testing
    from ._blas_probe import defer_blas_probe as _defer_blas_probe
    _defer_blas_probe()  # Numba is imported now; its CPU target starts with the first kernel

    from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
    from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
    from .creation import *  # noqa: F401,F403
    from .determinism import (are_deterministic_algorithms_enabled,
                              is_deterministic_algorithms_warn_only_enabled,
                              use_deterministic_algorithms)
    from .device import device
    from .dtypes import (bool_ as bool, double, float, float16, float32, float64,
                         get_default_dtype, half, int8, int16, int32, int64, long,
                         promote_types, result_type, set_default_dtype, short, uint8)
    from .dtypes import dtype
    from .dtypes import int as int
    from .ops import FUNCTIONS as _FUNCTIONS
    from .ops.tensor_methods import pow
    from .random import *  # noqa: F401,F403
    from .tensor import Size, Tensor

    globals().update({k: v for k, v in _FUNCTIONS.items() if k not in ("pow",)})

    from . import nn, optim, serialization, utils
    from . import cuda
    from .nn.functional import log_softmax, softmax  # (also Tensor methods, as PyTorch)
    from .serialization import load, save
    from .interop import from_dlpack  # (also gives Tensor its interop protocols)

    Tensor.softmax = softmax
    Tensor.log_softmax = log_softmax

__version__ = "0.1.0"
