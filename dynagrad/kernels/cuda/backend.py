"""The CUDA target of ``kernels.backend``'s contract: the families over ``DeviceArray`` s, each
launching the kernels of ``runner`` on the buffers' kernel views.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.backend import backend
    >>> from dynagrad.kernels.cuda import backend as cuda
    >>> backend(np.zeros(2)) is cuda
    False
"""
from __future__ import annotations

import numpy as np

from ...determinism import are_deterministic_algorithms_enabled
from .. import buffers
from . import runner
from .device_array import DeviceArray, copy_into

# kernels that need scratch memory (two-pass reductions, staging) take it from the caching allocator
runner.set_scratch_allocator(lambda shape, dtype: DeviceArray.empty(shape, dtype).kernel_view())


def empty(shape: tuple, dtype, like: DeviceArray) -> DeviceArray:
    """An uninitialised buffer on ``like``'s device."""
    return DeviceArray.empty(shape, dtype, like.device_index)


def _empty_like(arr: DeviceArray, shape: tuple, dtype) -> DeviceArray:
    return DeviceArray.empty(shape, dtype, arr.device_index)


def elementwise(expr: str, kinds: tuple, types: tuple, out_type: str, operands: tuple,
                out: DeviceArray, params: tuple = ()) -> None:
    """``out[...] = expr(*operands)`` with broadcasting (as ``cpu.elementwise``)."""
    if not params and out.flags.c_contiguous and runner.elementwise_flat(
            expr, kinds, types, out_type, operands, out):
        return
    runner.elementwise(expr, kinds, types, out_type,
                       tuple(o.kernel_view() if k == "a" else o for o, k in zip(operands, kinds)),
                       out.kernel_view(), params)


def reduce_axis(x: DeviceArray, dim: int, kind: tuple, out_dtype) -> DeviceArray:
    """Reduce ``x`` over ``dim`` (deterministic: a fixed-order tree per output element)."""
    out = _empty_like(x, x.shape[:dim] + x.shape[dim + 1:], out_dtype)
    if out.size:
        runner.reduce_axis(x.kernel_view(), dim, kind, out.kernel_view())
    return out


def arg_reduce_axis(x: DeviceArray, dim: int, better: str) -> DeviceArray:
    out = _empty_like(x, x.shape[:dim] + x.shape[dim + 1:], np.int64)
    if out.size:
        runner.arg_reduce_axis(x.kernel_view(), dim, better, out.kernel_view())
    return out


def scan_axis(x: DeviceArray, dim: int, combine: str) -> DeviceArray:
    out = _empty_like(x, x.shape, x.dtype)
    if out.size:
        runner.scan_axis(x.kernel_view(), dim, combine, out.kernel_view())
    return out


def gather3(x3: DeviceArray, index3: DeviceArray) -> DeviceArray:
    out = _empty_like(x3, index3.shape, x3.dtype)
    if out.size:
        runner.gather3(x3.kernel_view(), index3.kernel_view(), out.kernel_view())
    return out


def scatter3(out3: DeviceArray, index3: DeviceArray, src3: DeviceArray, accumulate: bool) -> None:
    if index3.size:
        runner.scatter3(out3.kernel_view(), index3.kernel_view(), src3.kernel_view(), accumulate,
                      are_deterministic_algorithms_enabled())


def index_select3(x3: DeviceArray, index: DeviceArray) -> DeviceArray:
    out = _empty_like(x3, (x3.shape[0], index.shape[0], x3.shape[2]), x3.dtype)
    if out.size:
        runner.index_select3(x3.kernel_view(), index.kernel_view(), out.kernel_view())
    return out


def index_add3(out3: DeviceArray, index: DeviceArray, src3: DeviceArray) -> None:
    if src3.size:
        runner.index_add3(out3.kernel_view(), index.kernel_view(), src3.kernel_view(),
                        are_deterministic_algorithms_enabled())


def argsort_axis(x: DeviceArray, dim: int, descending: bool, k: int | None = None) -> DeviceArray:
    """The stable sort permutation (int64) of ``x`` (at least 1-D) along ``dim``, or its first
    ``k`` entries (topk). NaN sorts as the largest value; equal values keep their original
    order, also when ``descending`` (as the CPU path). O(R^2) work per line of length R (see
    ``runner.sort_axis``).
    """
    dim %= x.ndim
    n = x.shape[dim]
    out = _empty_like(x, x.shape[:dim] + (n if k is None else k,) + x.shape[dim + 1:], np.int64)
    if out.size:  # bools compare as their bytes
        runner.sort_axis((x.view(np.uint8) if x.dtype == np.bool_ else x).kernel_view(), dim,
                       descending, out.kernel_view())
    return out


def matmul(a: DeviceArray, b: DeviceArray) -> DeviceArray:
    """``a @ b`` with NumPy's rules: vectors become matrices for the product, batch dims
    broadcast and fold into one, and the batched kernel does the rest."""
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    if batch:
        a3 = np.broadcast_to(a2, batch + (m, k)).reshape(-1, m, k)
        b3 = np.broadcast_to(b2, batch + (k, n)).reshape(-1, k, n)
        res = _matmul_3d(a3, b3).reshape(batch + (m, n))
    else:
        res = _matmul_3d(a2, b2)
    shape = res.shape
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return res.reshape(shape)


def _matmul_3d(a: DeviceArray, b: DeviceArray) -> DeviceArray:
    """``a @ b`` for 2-D or equally batched 3-D operands of one float dtype."""
    shape = a.shape[:-1] + b.shape[-1:]
    out = _empty_like(a, shape, a.dtype)
    if not out.size:
        return out
    if a.shape[-1] == 0:
        out[...] = 0
        return out
    runner.matmul(_dense(a).kernel_view(), _dense(b).kernel_view(), out.kernel_view())
    return out


def copy(src, dst: DeviceArray) -> None:
    """``dst[...] = src`` (broadcasting ``src``, a buffer on any device)."""
    copy_into(buffers.move_array(src, dst.device_index), dst)


def _dense(x: DeviceArray) -> DeviceArray:
    return x if x.flags.c_contiguous else x.copy()


_ROUND_KEYS: dict = {}  # (device, key) -> the Philox round keys on that device


def philox_uniform(state: dict, shape: tuple, dtype, device_index: int) -> DeviceArray:
    """Uniform [0, 1) floats on a GPU continuing the NumPy Philox stream in ``state`` (the
    caller advances the stream by the draws made: ``kernels.philox.advance_state``)."""
    from .. import philox
    from .philox import uniform_kernel
    out = DeviceArray.empty(shape, dtype, device_index)
    key = tuple(int(k) for k in state["state"]["key"])
    keys = _ROUND_KEYS.get((device_index, key))
    if keys is None:
        keys = _ROUND_KEYS[(device_index, key)] = DeviceArray.from_host(
            philox.round_keys(key), device_index)
    name = np.dtype(dtype).name
    runner.launch_flat(("philox_uniform", name), lambda: uniform_kernel(name),
                     out.size, out.reshape(-1).kernel_view(), keys.kernel_view(),
                     *philox.kernel_state(state))
    return out
