"""OpenBLAS's worker threads as the thread pool of threaded flat kernels.

A threaded elementwise kernel is two compiled functions: a *slice kernel* that computes elements
``[start, stop)`` from the addresses and scalars in one row of int64 words, and a *driver* that
fills one such row per thread and hands the rows to OpenBLAS's ``gotoblas_pthread``, which runs
the first slice in the calling thread and the others on OpenBLAS's workers.

Why OpenBLAS's threads and not Numba's pool: after every multi-threaded GEMM those workers
busy-wait for about 0.1 s. A second pool then competes with them for the cores (a TBB ReLU over
2^18 float32 took 71 us right after a GEMM, 52 alone), while a spinning worker takes a new slice
in about a microsecond (28 us after a GEMM). Even alone, GELU and tanh over 1M float32 ran in 300
and 220 us instead of 450-580 and 410-450 with TBB on this 2-core machine.

Everything here is cache-safe: the driver reaches OpenBLAS through named symbols registered with
LLVM in every process before any kernel loads (addresses differ per process), and the slice
kernel's C entry is built inside the driver's own module.

Without NumPy's bundled OpenBLAS (``AVAILABLE`` false: NumPy on MKL or Accelerate) threaded flat
kernels use Numba's ``prange`` instead.

Example:
    >>> import numba, numpy as np
    >>> from dynagrad.kernels import worker_pool
    >>> worker_pool.AVAILABLE in (True, False)
    True
"""
from __future__ import annotations

import ctypes

from llvmlite import binding, ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._batch_parallel import _BLAS

AVAILABLE = _BLAS is not None
MAX_SLICES = 64  # rows of a driver's argument block: at most this many threads share one kernel

if AVAILABLE:
    # private names, so that no library's own symbol of the same name is ever picked instead:
    # gotoblas_pthread(slices, function, first argument, argument stride in bytes) calls
    # function(first + i * stride) for slice i and returns when every slice has ended; the
    # thread count is 1 while a ``run_split`` holds the workers, so slices never nest
    binding.add_symbol("dynagrad_blas_run", ctypes.cast(_BLAS[2], ctypes.c_void_p).value)
    binding.add_symbol("dynagrad_blas_threads", ctypes.cast(_BLAS[1], ctypes.c_void_p).value)

_BYTE_POINTER = ir.IntType(8).as_pointer()


@intrinsic
def pointer(typingctx, address):
    """The integer ``address`` as a ``void*`` (for ``numba.carray``)."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], _BYTE_POINTER)
    return types.voidptr(address), codegen


@intrinsic
def slice_count(typingctx):
    """How many slices a driver cuts its work into: OpenBLAS's thread count, at most
    ``MAX_SLICES``."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                            "dynagrad_blas_threads")
        threads = builder.sext(builder.call(fn, []), ir.IntType(64))
        cap = ir.IntType(64)(MAX_SLICES)
        return builder.select(builder.icmp_signed("<", threads, cap), threads, cap)
    return types.int64(), codegen


@intrinsic
def run_slices(typingctx, slice_kernel, block):
    """Run the njit function ``slice_kernel(void*)`` once per row of the 2-D C-ordered int64
    array ``block``, each given its row's address, on OpenBLAS's threads; returns when all ended."""
    if not (isinstance(slice_kernel, types.Dispatcher) and isinstance(block, types.Array)
            and block.dtype == types.int64 and block.ndim == 2 and block.layout == "C"):
        return None
    inner = types.void(types.voidptr)
    typingctx.resolve_function_type(slice_kernel, inner.args, {})  # compiles slice_kernel

    def codegen(context, builder, signature, args):
        entry = _c_entry(context, builder.module, slice_kernel.dispatcher, inner)
        array = context.make_array(block)(context, builder, value=args[1])
        rows, words = cgutils.unpack_tuple(builder, array.shape, 2)
        i32 = ir.IntType(32)
        stride = builder.mul(builder.trunc(words, i32), i32(8))
        run = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
            i32, [i32, _BYTE_POINTER, _BYTE_POINTER, i32]), "dynagrad_blas_run")
        builder.call(run, [builder.trunc(rows, i32), builder.bitcast(entry, _BYTE_POINTER),
                           builder.bitcast(array.data, _BYTE_POINTER), stride])
        return context.get_dummy_value()
    return types.none(slice_kernel, block), codegen


def _c_entry(context, module, dispatcher, inner):
    """A ``void f(void*)`` C function in ``module`` that calls ``dispatcher``'s compiled
    ``inner`` overload (Numba's own calling convention is not C's). The slice kernels never
    raise (no bounds checks, NumPy's error model), so its status is not looked at."""
    name = f"c_entry_{dispatcher.py_func.__module__}_{dispatcher.py_func.__name__}"
    fn = cgutils.get_or_insert_function(
        module, ir.FunctionType(ir.VoidType(), [_BYTE_POINTER]), name)
    if fn.is_declaration:
        fn.linkage = "internal"  # one per kernel module: no clash between kernels
        compiled = dispatcher.overloads[inner.args]
        context.active_code_library.add_linking_library(compiled.library)
        builder = ir.IRBuilder(fn.append_basic_block())
        context.call_internal_no_propagate(builder, compiled.fndesc, inner, [fn.args[0]])
        builder.ret_void()
    return fn
