"""dynagrad: a PyTorch-style deep-learning framework whose kernels are generated Python, compiled
by Numba on first use and cached on disk.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""
from ._cpu_target import prefer_wide_vectors as _prefer_wide_vectors
from ._malloc import tune_malloc as _tune_malloc
from ._threads import choose_threading_layer as _choose_threading_layer

# both before Numba is imported: it reads its CPU target and starts its thread pool once
_prefer_wide_vectors()
_choose_threading_layer()
_tune_malloc()  # freed buffers stay for reuse: no page faults per training step

from . import autograd, dtypes, kernels, testing  # noqa: E402
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled  # noqa: E402
from .creation import *  # noqa: E402,F401,F403
from .determinism import (are_deterministic_algorithms_enabled,  # noqa: E402
                          is_deterministic_algorithms_warn_only_enabled,
                          use_deterministic_algorithms)
from .device import device  # noqa: E402
from .dtypes import (bool_ as bool, double, float, float16, float32, float64, get_default_dtype,  # noqa: E402,E501
                     half, int8, int16, int32, int64, long, promote_types, result_type,
                     set_default_dtype, short, uint8)
from .dtypes import dtype  # noqa: E402
from .dtypes import int as int  # noqa: E402
from .ops import FUNCTIONS as _FUNCTIONS  # noqa: E402
from .ops.tensor_methods import pow  # noqa: E402
from .random import *  # noqa: E402,F401,F403
from .tensor import Size, Tensor  # noqa: E402

globals().update({k: v for k, v in _FUNCTIONS.items() if k not in ("pow",)})

from . import nn, optim, serialization, utils  # noqa: E402
from . import cuda  # noqa: E402
from .nn.functional import log_softmax, softmax  # noqa: E402  (also Tensor methods, as PyTorch)
from .serialization import load, save  # noqa: E402
from .interop import from_dlpack  # noqa: E402  (also gives Tensor its interop protocols)

Tensor.softmax = softmax
Tensor.log_softmax = log_softmax

__version__ = "0.1.0"
