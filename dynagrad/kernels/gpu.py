"""cpu.py's buffer-level API for CUDA buffers: the same functions, taking and returning
``DeviceArray`` s, so an op picks its backend with ``backend(arr)`` and calls one name.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels import cpu, gpu
    >>> gpu.backend(np.zeros(2)) is cpu
    True
"""
from __future__ import annotations

import sys

import numpy as np

from ..determinism import are_deterministic_algorithms_enabled
from . import cpu, cuda
from .cuda_array import DeviceArray

# kernels that need scratch memory (two-pass reductions, staging) take it from the caching allocator
cuda.set_scratch_allocator(lambda shape, dtype: DeviceArray.empty(shape, dtype).kernel_view())


def backend(arr):
    """``cpu`` for a NumPy buffer, this module for a CUDA one."""
    return _THIS if type(arr) is DeviceArray else cpu


def _empty_like(arr: DeviceArray, shape: tuple, dtype) -> DeviceArray:
    return DeviceArray.empty(shape, dtype, arr.device_index)


def elementwise(expr: str, kinds: tuple, types: tuple, out_type: str, operands: tuple,
                out: DeviceArray, params: tuple = ()) -> None:
    """``out[...] = expr(*operands)`` with broadcasting (as ``cpu.elementwise``)."""
    if not params and out.flags.c_contiguous and cuda.elementwise_flat(expr, kinds, types,
                                                                        out_type, operands, out):
        return
    cuda.elementwise(expr, kinds, types, out_type,
                     tuple(o.kernel_view() if k == "a" else o for o, k in zip(operands, kinds)),
                     out.kernel_view(), params)


def reduce_axis(x: DeviceArray, dim: int, kind: tuple, out_dtype) -> DeviceArray:
    """Reduce ``x`` over ``dim`` (deterministic: a fixed-order tree per output element)."""
    out = _empty_like(x, x.shape[:dim] + x.shape[dim + 1:], out_dtype)
    if out.size:
        cuda.reduce_axis(x.kernel_view(), dim, kind, out.kernel_view())
    return out


def arg_reduce_axis(x: DeviceArray, dim: int, better: str) -> DeviceArray:
    out = _empty_like(x, x.shape[:dim] + x.shape[dim + 1:], np.int64)
    if out.size:
        cuda.arg_reduce_axis(x.kernel_view(), dim, better, out.kernel_view())
    return out


def scan_axis(x: DeviceArray, dim: int, combine: str) -> DeviceArray:
    out = _empty_like(x, x.shape, x.dtype)
    if out.size:
        cuda.scan_axis(x.kernel_view(), dim, combine, out.kernel_view())
    return out


def gather3(x3: DeviceArray, index3: DeviceArray) -> DeviceArray:
    out = _empty_like(x3, index3.shape, x3.dtype)
    if out.size:
        cuda.gather3(x3.kernel_view(), index3.kernel_view(), out.kernel_view())
    return out


def scatter3(out3: DeviceArray, index3: DeviceArray, src3: DeviceArray, accumulate: bool) -> None:
    if index3.size:
        cuda.scatter3(out3.kernel_view(), index3.kernel_view(), src3.kernel_view(), accumulate,
                      are_deterministic_algorithms_enabled())


def index_select3(x3: DeviceArray, index: DeviceArray) -> DeviceArray:
    out = _empty_like(x3, (x3.shape[0], index.shape[0], x3.shape[2]), x3.dtype)
    if out.size:
        cuda.index_select3(x3.kernel_view(), index.kernel_view(), out.kernel_view())
    return out


def index_add3(out3: DeviceArray, index: DeviceArray, src3: DeviceArray) -> None:
    if src3.size:
        cuda.index_add3(out3.kernel_view(), index.kernel_view(), src3.kernel_view(),
                        are_deterministic_algorithms_enabled())


def argsort_axis(x: DeviceArray, dim: int, descending: bool, k: int | None = None) -> DeviceArray:
    """The stable sort permutation (int64) of ``x`` (at least 1-D) along ``dim``, or its first
    ``k`` entries (topk). NaN sorts as the largest value; equal values keep their original
    order, also when ``descending`` (as the CPU path). O(R^2) work per line of length R (see
    ``cuda.sort_axis``).
    """
    dim %= x.ndim
    n = x.shape[dim]
    out = _empty_like(x, x.shape[:dim] + (n if k is None else k,) + x.shape[dim + 1:], np.int64)
    if out.size:  # bools compare as their bytes
        cuda.sort_axis((x.view(np.uint8) if x.dtype == np.bool_ else x).kernel_view(), dim,
                       descending, out.kernel_view())
    return out


def matmul(a: DeviceArray, b: DeviceArray) -> DeviceArray:
    """``a @ b`` for 2-D or equally batched 3-D operands of one float dtype."""
    shape = a.shape[:-1] + b.shape[-1:]
    out = _empty_like(a, shape, a.dtype)
    if not out.size:
        return out
    if a.shape[-1] == 0:
        out[...] = 0
        return out
    cuda.matmul(_dense(a).kernel_view(), _dense(b).kernel_view(), out.kernel_view())
    return out


def _dense(x: DeviceArray) -> DeviceArray:
    return x if x.flags.c_contiguous else x.copy()


_THIS = sys.modules[__name__]


_ROUND_KEYS: dict = {}  # (device, key) -> the Philox round keys on that device


def philox_uniform(state: dict, shape: tuple, dtype, device_index: int) -> DeviceArray:
    """Uniform [0, 1) floats on a GPU continuing the NumPy Philox stream in ``state`` (the
    caller advances the stream by the draws made: ``cuda_random.advance_state``)."""
    from . import cuda_random
    out = DeviceArray.empty(shape, dtype, device_index)
    key = tuple(int(k) for k in state["state"]["key"])
    keys = _ROUND_KEYS.get((device_index, key))
    if keys is None:
        keys = _ROUND_KEYS[(device_index, key)] = DeviceArray.from_host(
            cuda_random.round_keys(key), device_index)
    name = np.dtype(dtype).name
    cuda.launch_flat(("philox_uniform", name), lambda: cuda_random.uniform_kernel(name),
                     out.size, out.reshape(-1).kernel_view(), keys.kernel_view(),
                     *cuda_random.kernel_state(state))
    return out
