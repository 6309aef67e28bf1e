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
    from .creation import range_ as range  # (a module-level "range" would shadow the builtin)
    from .creation import asarray, empty_strided, frombuffer
    from .device import get_default_device, set_default_device
    from .dtypes import can_cast
    from .determinism import (are_deterministic_algorithms_enabled,
                              is_deterministic_algorithms_warn_only_enabled,
                              use_deterministic_algorithms)
    from .device import device
    from .dtypes import (bool_ as bool, cdouble, cfloat, complex64, complex128, double, float,
                         float16, float32, float64, get_default_dtype, half, int8, int16, int32,
                         int64, long, promote_types, result_type, set_default_dtype,
                         set_default_tensor_type, short, uint8)
    from .dtypes import dtype
    from .dtypes import int as int
    from .ops import FUNCTIONS as _FUNCTIONS
    from .ops.tensor_methods import (detach, fill, is_floating_point, is_nonzero, is_same_size,
                                     is_signed, pow)
    from .random import *  # noqa: F401,F403
    from .tensor import Size, Tensor
    from .tensor_str import set_printoptions
    from .settings import (get_float32_matmul_precision, get_num_interop_threads, get_num_threads,
                           set_float32_matmul_precision, set_flush_denormal,
                           set_num_interop_threads, set_num_threads)

    globals().update({k: v for k, v in _FUNCTIONS.items() if k not in ("pow",)})

    from . import nn, optim, serialization, special, utils
    from .nn.aten import *  # torch's top-level nn functions (torch.batch_norm ...)
    from . import distributions, fft, linalg
    from .ops.fft import (bartlett_window, blackman_window, hamming_window, hann_window,
                          kaiser_window)
    from . import accelerator, backends, cuda, func
    from .tensor_types import *  # noqa: F401,F403  (FloatTensor, LongTensor ...)
    from .control_flow import cond, while_loop
    from .func import vmap
    from .serialization import load, save
    from ._warmup import warmup
    from .compiler import compile
    from .interop import from_dlpack, to_dlpack  # (also gives Tensor its interop protocols)


__version__ = "0.1.0"
