"""dynagrad: a PyTorch-style deep-learning framework whose kernels are generated Python, compiled
by Numba on first use and cached on disk.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""
from ._runtime import configure as _configure
from ._runtime.gc import collection_paused as _collection_paused

# the import's objects mostly live on: collecting while they appear only slows it (see _runtime.gc)
with _collection_paused():
    _configure()  # first, before Numba starts: CPU target, thread layer, malloc (see _runtime)
    from . import autograd, dtypes, kernels, testing
    from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
    from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,
                                        set_anomaly_enabled)
    from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
    from .creation import *  # noqa: F401,F403
    from .determinism import (are_deterministic_algorithms_enabled,
                              is_deterministic_algorithms_warn_only_enabled,
                              use_deterministic_algorithms)
    from .device import device
    from .dtypes import (bool_ as bool, double, float, float16, float32, float64, get_default_dtype,
                         half, int8, int16, int32, int64, long, promote_types, result_type,
                         set_default_dtype, short, uint8)
    from .dtypes import dtype
    from .dtypes import int as int
    from .ops import FUNCTIONS as _FUNCTIONS
    from .ops.tensor_methods import pow
    from .random import *  # noqa: F401,F403
    from .tensor import Size, Tensor
    from .tensor_str import set_printoptions

    globals().update({k: v for k, v in _FUNCTIONS.items() if k not in ("pow",)})

    from . import nn, optim, serialization, utils
    from . import cuda
    from .serialization import load, save
    from ._warmup import warmup
    from .interop import from_dlpack  # (also gives Tensor its interop protocols)


__version__ = "0.1.0"
