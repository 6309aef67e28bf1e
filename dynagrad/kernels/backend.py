"""The contract each target implements, and ``backend(buffer)``, which picks the target.

A target is a module of functions over its own buffers: ``kernels.cpu.backend`` over NumPy arrays,
``kernels.cuda.backend`` over ``DeviceArray`` s. Both define every family below with the same
signature, so an op calls ``backend(buf).family(...)`` and never asks which device it is on. A new
family goes here first, then into both targets; ``tests/test_layers.py`` checks that each target
defines every name with this signature. An op keeps a device branch only where its algorithm
differs by device, with a comment saying why.

The families (``buf`` is the target's buffer type; results are fresh buffers on the same device):

``elementwise(expr, kinds, types, out_type, operands, out, params=())``
    ``out[...] = expr(*operands)`` with broadcasting. ``expr`` is a scalar expression over ``x``,
    ``y``, ``z``... (the names of ``kernels.scalar_functions`` and ``math``/``np`` scalars);
    ``kinds`` says per operand whether it is an array ("a") or a scalar ("s"), ``types`` their
    Numba type names, ``params`` extra named scalars ``(name, type, value)``.
``reduce_axis(x, dim, kind, out_dtype)``
    Fold ``x`` over ``dim``; ``kind`` is ``(init, combine, final, accumulator type)`` source.
``arg_reduce_axis(x, dim, better)``
    The int64 position along ``dim`` of the value ``better`` (a comparison) prefers; first wins.
``scan_axis(x, dim, combine)``
    Inclusive prefix fold along ``dim`` (cumsum, cumprod, cummax...).
``argsort_axis(x, dim, descending, k=None)``
    The stable sort permutation along ``dim`` (NaN largest, ties in order), or its first ``k``.
``gather3(x3, index3)`` / ``scatter3(out3, index3, src3, accumulate)``
    ``out[i, index[i, j, l], l]`` on 3-D views (outer, indexed, inner dims) of any gather/scatter.
``index_select3(x3, index)`` / ``index_add3(out3, index, src3)``
    Whole rows of the middle dim picked by a 1-D int64 ``index``, or added into ``out3`` there.
``matmul(a, b)``
    ``a @ b`` with NumPy's rules (vectors, broadcast batches), C-contiguous, in the operands' dtype.
``copy(src, dst)``
    ``dst[...] = src``, broadcasting ``src`` (a buffer on any device); strided either side.
``empty(shape, dtype, like)``
    An uninitialised buffer on ``like``'s device (``kernels.buffers`` has the device-free helpers).

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.backend import backend
    >>> from dynagrad.kernels.cpu import backend as cpu
    >>> backend(np.zeros(2)) is cpu
    True
"""
from __future__ import annotations

from .cpu import backend as cpu
from .cuda import backend as cuda
from .cuda.device_array import DeviceArray

FAMILIES = ("elementwise", "reduce_axis", "arg_reduce_axis", "scan_axis", "argsort_axis",
            "gather3", "scatter3", "index_select3", "index_add3", "matmul", "copy", "empty")


def backend(buf):
    """The target module that runs kernels on ``buf``: ``kernels.cpu.backend`` for a NumPy array,
    ``kernels.cuda.backend`` for a ``DeviceArray``."""
    return cuda if type(buf) is DeviceArray else cpu
