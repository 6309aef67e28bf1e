"""Run generated CUDA kernels on numba device arrays: cpu.py's API for the GPU.

Every array argument is a numba device array (``DeviceNDArray`` on a GPU, the simulator's
``FakeCUDAArray``) of any shape and strides - stride 0 broadcasts - and outputs are written in
place; ``elementwise_flat`` alone takes dynagrad's ``DeviceArray`` s, by address. Kernels come
from ``templates`` through ``cache.lookup(..., target="cuda")``: one hash-named source file
per specialization, compiled once per GPU architecture and kept on disk.

Reductions, scans, arg-reductions and every index kernel whose ``deterministic`` flag is set use
no atomics: each output is combined in a fixed order, so results are bit-identical run to run.
``scatter3(..., accumulate=True, deterministic=False)`` and ``index_add3(..., deterministic=False)``
use ``cuda.atomic.add`` (float sums then depend on timing).

Launches run on the default stream with 256 threads per block and at most one full wave of blocks
(16 per multiprocessor); under the simulator, which runs every thread as a Python thread, launches
use at most two blocks of a few threads.

Example:
    >>> import numpy as np
    >>> from numba import cuda as nbcuda                                  # doctest: +SKIP
    >>> from dynagrad.kernels.cuda import runner as cuda
    >>> x = nbcuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))   # doctest: +SKIP
    >>> out = nbcuda.device_array((2, 3), np.float32)                       # doctest: +SKIP
    >>> cuda.elementwise("x * y", ("a", "s"), ("float32", "float32"), "float32",
    ...                  (x, np.float32(2)), out)                           # doctest: +SKIP
    >>> out.copy_to_host().tolist()                                         # doctest: +SKIP
    [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
"""
from __future__ import annotations

import numpy as np

from .runtime import current_index as _runtime_index
from . import launch
from . import templates
from ..cache import _log, _memory, _stats, cuda_arch, lookup

THREADS = 256          # threads per block on a GPU
BLOCKS_PER_SM = 16     # grid cap: one full wave of 256-thread blocks (grid-stride beyond it)
TILE = 16              # matmul fallback tile (TILE x TILE threads per block)
SIM_THREADS, SIM_BLOCKS, SIM_TILE = 8, 2, 4  # the simulator: few threads, few blocks

# Reduction strategy (fixed numbers, never the device's size, so results do not depend on it):
SERIAL_MAX_R = 32           # reduce/scan lengths up to this: one thread per output, in order
COLUMN_MIN_OUTPUTS = 4096   # strided reduced axis and this many outputs: one thread per output
SPLIT_MIN_R = 32768         # a long axis with few outputs is cut into chunks (two passes)
SPLIT_MAX_OUTPUTS = 512
SPLIT_CHUNK = 8192
SPLIT_MAX_CHUNKS = 1024

_rt: dict = {}  # "cuda", "sim", "arch", "blocks", "view"; filled on the first launch


def _runtime() -> dict:
    if not _rt:
        from numba import cuda
        from numba.cuda.core import config
        sim = bool(config.ENABLE_CUDASIM)
        _rt.update(cuda=cuda, sim=sim, arch=cuda_arch())
        if sim:
            from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
            from numpy.lib.stride_tricks import as_strided
            _rt["blocks"] = SIM_BLOCKS
            _rt["view"] = lambda a, shape, strides: FakeCUDAArray(
                as_strided(a._ary, shape, strides))
        else:
            from numba.cuda.cudadrv.devicearray import DeviceNDArray
            _rt["blocks"] = cuda.get_current_device().MULTIPROCESSOR_COUNT * BLOCKS_PER_SM
            _rt["view"] = lambda a, shape, strides: DeviceNDArray(
                shape, strides, a.dtype, stream=a.stream, gpu_data=a.gpu_data)
    return _rt


def _view(arr, shape: tuple, strides: tuple):
    """A view of ``arr``'s memory with this shape and byte strides (element 0 stays in place)."""
    return _rt["view"](arr, shape, strides)


def _empty(shape: tuple, dtype):
    """Scratch device memory (split-reduction partials, staging for unviewable outputs)."""
    return _allocator[0](shape, np.dtype(dtype))


_allocator: list = [lambda shape, dtype: _rt["cuda"].device_array(shape, dtype)]


def set_scratch_allocator(fn) -> None:
    """Route this module's scratch allocations through ``fn(shape, dtype) -> device array``
    (e.g. dynagrad's caching allocator)."""
    _allocator[0] = fn


def _kernel(key: tuple, build):
    kernel = _memory.get(key)
    if kernel is None:
        return lookup(key, build, target="cuda")
    _stats["hits"] += 1
    return kernel


def _launch_1d(n: int) -> tuple:
    """(blocks, threads) for a grid-stride loop over ``n`` items."""
    if _rt["sim"]:
        threads = max(1, min(n, SIM_THREADS))
    else:
        threads = THREADS
    return max(1, min(-(-n // threads), _rt["blocks"])), threads


def launch_flat(key: tuple, build, n: int, *args) -> None:
    """Run a generated grid-stride kernel over ``n`` items: ``build()`` gives its
    ``(source, name, signature, description)`` on the first call (e.g. an optimizer update from
    ``optim_updates.update_kernel(..., target="cuda")``). ``key`` names the kernel among the CUDA
    ones: it is kept apart from CPU kernels' keys and from other architectures'."""
    _runtime()
    if n:
        kernel = _kernel(("cuda", _rt["arch"]) + key, build)
        kernel[_launch_1d(n)](*args)


def _block_size() -> int:
    return SIM_THREADS if _rt["sim"] else THREADS


_TYPE_NAMES: dict = {}


def _tname(dtype) -> str:
    name = _TYPE_NAMES.get(dtype)
    if name is None:
        d = np.dtype(dtype)
        name = _TYPE_NAMES[dtype] = "bool" if d == np.bool_ else d.name
    return name


def _describe(arr) -> str:
    return f"{_tname(arr.dtype)}{tuple(arr.shape)}"


def _scalar(value, t: str):
    return np.bool_(value) if t == "bool" else np.dtype(templates.compute_type(t)).type(value)


# --- layout helpers --------------------------------------------------------------------------

def _is_c(arr) -> bool:
    return arr.is_c_contiguous()


def _flat(arr, n: int):
    """A 1-D unit-stride view of a C-contiguous array (typed as numba's "C" layout)."""
    if arr.ndim == 1 and arr.strides[0] == arr.dtype.itemsize:
        return arr
    return _view(arr, (n,), (arr.dtype.itemsize,))


def _merge(shape: tuple, strides: tuple):
    """(size, stride) of dimensions that step through memory as one, or None."""
    size, inner = 1, 0
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if size == 1:
            size, inner = n, s
        elif s == inner * size:
            size *= n
        else:
            return None
    return size, inner


def _coalesce(shape: tuple, stride_sets: list) -> tuple:
    """Drop size-1 dimensions and merge neighbours that step through memory as one in every
    array; returns (shape, [strides per array])."""
    dims: list = []       # [size, [stride per array]] from the innermost out
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        if n == 1:
            continue
        strides = [s[d] for s in stride_sets]
        if dims and all(s == t * dims[-1][0] for s, t in zip(strides, dims[-1][1])):
            dims[-1][0] *= n
        else:
            dims.append([n, strides])
    dims.reverse()
    shape_out = tuple(d[0] for d in dims)
    return shape_out, [tuple(d[1][k] for d in dims) for k in range(len(stride_sets))]


def _broadcast_strides(op: str, arr, shape: tuple) -> tuple:
    """Byte strides that read ``arr`` broadcast to ``shape`` (stride 0 where it repeats)."""
    pad = len(shape) - arr.ndim
    ok = pad >= 0
    strides = [0] * max(pad, 0)
    for d in range(arr.ndim if ok else 0):
        n = arr.shape[d]
        if n == shape[pad + d]:
            strides.append(arr.strides[d] if n != 1 else 0)
        elif n == 1:
            strides.append(0)
        else:
            ok = False
            break
    if not ok:
        raise ValueError(f"{op}: operand {_describe(arr)} does not broadcast to the output "
                         f"shape {tuple(shape)}")
    return tuple(strides)


# --- elementwise -------------------------------------------------------------------------------

def elementwise(expr: str, kinds: tuple, types: tuple, out_type: str, operands: tuple, out,
                params: tuple = ()) -> None:
    """``out[...] = expr(*operands)`` with broadcasting, as ``cpu.elementwise``.

    ``kinds`` are "a" (a device array broadcast to ``out.shape``) or "s" (a scalar); ``types``
    the operands' compute types (an array stored in another dtype is converted on load; float16
    computes in float32); ``out_type`` the expression's result type, converted to ``out.dtype``
    on store; ``params`` ``(name, type, value)`` scalars the expression names.

    Example: ``elementwise("x + y", ("a", "a"), ("float32",) * 2, "float32", (a, b), out)``.
    """
    if len(operands) != len(kinds) or len(types) != len(kinds):
        raise ValueError(f"cuda elementwise[{expr}]: {len(operands)} operands, {len(kinds)} kinds "
                         f"and {len(types)} types must match")
    _runtime()
    shape = tuple(out.shape)
    arrays = [o for o, k in zip(operands, kinds) if k == "a"]
    if _is_c(out) and all(tuple(a.shape) == shape and _is_c(a) for a in arrays):
        n = out.size
        if n == 0:
            return
        views, out_view, layout, ndim = [_flat(a, n) for a in arrays], _flat(out, n), "c", 1
    else:
        op = f"cuda elementwise[{expr}]"
        stride_sets = [_broadcast_strides(op, out, shape)] + \
                      [_broadcast_strides(op, a, shape) for a in arrays]
        if 0 in shape:
            return
        dims, strides = _coalesce(shape, stride_sets)
        if len(dims) > 8:  # more than 8 dimensions that cannot merge: one launch per leading index
            _peel(expr, kinds, types, out_type, operands, out, params)
            return
        every = [out] + arrays
        if len(dims) <= 1 and all(s[0] == a.dtype.itemsize for s, a in zip(strides, every)
                                  if dims):
            # one run of contiguous memory after all (size-1 dims with odd strides): flat kernel
            views = [_view(a, (out.size,), (a.dtype.itemsize,)) for a in every]
            layout, ndim = "c", 1
        else:
            ndim = 2 if len(dims) <= 2 else (4 if len(dims) <= 4 else 8)
            pad = ndim - len(dims)
            views = [_view(a, (1,) * pad + dims, (0,) * pad + s) for a, s in zip(every, strides)]
            layout = "s"
        out_view, views = views[0], views[1:]
    arr_types = tuple(_tname(o.dtype) if k == "a" else t for o, k, t in zip(operands, kinds, types))
    ptypes = tuple((p[0], p[1]) for p in params)
    kernel = elementwise_kernel(expr, kinds, types, arr_types, out_type, _tname(out.dtype), layout,
                                ndim, ptypes)
    it = iter(views)
    args = [next(it) if k == "a" else _scalar(o, t) for o, k, t in zip(operands, kinds, types)]
    args += [_scalar(v, t) for _, t, v in params]
    blocks, threads = _launch_1d(out.size)
    kernel[blocks, threads](*args, out_view)


def elementwise_flat(expr: str, kinds: tuple, types: tuple, out_type: str, operands: tuple,
                     out) -> bool:
    """``elementwise`` for same-shape C-contiguous buffers, launched with arguments packed from
    their addresses: array operands and ``out`` are ``DeviceArray`` s (anything with ``shape``,
    ``dtype``, ``itemsize``, ``flags`` and ``data_ptr``), and no numba view of them is made (a
    view costs host time on every small op).

    Returns False, having launched nothing, where that does not apply (the simulator, operands of
    other shapes or layouts, a kernel numba launches itself): then call ``elementwise``.
    """
    if _runtime()["sim"]:
        return False
    shape, arr_types = out.shape, []
    for o, k, t in zip(operands, kinds, types):
        if k == "a":
            if o.shape != shape or not o.flags.c_contiguous:
                return False
            t = _tname(o.dtype)
        arr_types.append(t)
    n = out.size
    if not n:
        return True
    kernel = elementwise_kernel(expr, kinds, types, tuple(arr_types), out_type, _tname(out.dtype))
    if type(kernel) is not launch.Launcher:
        return False
    values: list = []
    for i, (o, k, t) in enumerate(zip(operands, kinds, types)):
        if k == "a":
            values += launch.flat_array_values(o.data_ptr, n, o.itemsize)
        else:
            kernel.pack(i, _scalar(o, t), values)
    values += launch.flat_array_values(out.data_ptr, n, out.itemsize)
    kernel.launch_values(launch.config(*_launch_1d(n)), values)
    return True


def elementwise_kernel(expr: str, kinds: tuple, types: tuple, arr_types: tuple, out_type: str,
                       out_name: str, layout: str = "c", ndim: int = 1, ptypes: tuple = ()):
    """The compiled ``elementwise`` kernel for these operand kinds and types, the output's dtype
    name and a layout class: ``"c"`` (every array a 1-D unit-stride view of the same length) or
    ``"s"`` (``ndim``-D views with any strides)."""
    _runtime()
    key = ("cuda", _rt["arch"], "ew", expr, kinds, types, arr_types, out_type, out_name, layout,
           ndim, ptypes)
    return _kernel(key, lambda: templates.elementwise(expr, kinds, types, arr_types, out_type,
                                                      out_name, layout, ndim, ptypes))


def _peel(expr, kinds, types, out_type, operands, out, params) -> None:
    nd = out.ndim
    for j in range(out.shape[0]):
        sub = tuple(o if k == "s" or o.ndim < nd else (o[0] if o.shape[0] == 1 else o[j])
                    for o, k in zip(operands, kinds))
        elementwise(expr, kinds, types, out_type, sub, out[j], params)


def fill(out, value) -> None:
    """``out[...] = value`` (cast to ``out.dtype``)."""
    t = _tname(out.dtype)
    elementwise("x", ("s",), (t,), t, (value,), out)


def copy(src, out) -> None:
    """``out[...] = src`` with broadcasting and a dtype cast (float -> int truncates, like NumPy's
    ``astype``; anything -> bool is ``!= 0``)."""
    t = _tname(src.dtype)
    elementwise("x", ("a",), (t,), _tname(out.dtype), (src,), out)


# --- reductions and scans ----------------------------------------------------------------------

def _axis(op: str, x, dim: int) -> int:
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{op}: dim {dim} is out of range for an array {_describe(x)}")
    return dim % nd


def _three(arr, dim: int, keep_axis: bool = True):
    """``arr`` viewed as (outer, axis, inner) - or (outer, 1, inner) for an output that lacks the
    axis - or None when its strides allow no such view."""
    shape, strides = tuple(arr.shape), tuple(arr.strides)
    if not shape:
        return _view(arr, (1, 1, 1), (0, 0, 0))
    outer = _merge(shape[:dim], strides[:dim])
    after = dim + 1 if keep_axis else dim
    inner = _merge(shape[after:], strides[after:])
    if outer is None or inner is None:
        return None
    mid = (shape[dim], strides[dim]) if keep_axis else (1, 0)
    return _view(arr, (outer[0], mid[0], inner[0]), (outer[1], mid[1], inner[1]))


def _input3(x, dim: int):
    x3 = _three(x, dim)
    if x3 is None:  # strides that merge into no 3-D view: work on a contiguous copy
        tmp = _empty(tuple(x.shape), x.dtype)
        copy(x, tmp)
        x3 = _three(tmp, dim)
    return x3


def _output3(out, dim: int, keep_axis: bool):
    """(3-D view to write, the array to copy it into afterwards or None)."""
    out3 = _three(out, dim, keep_axis)
    if out3 is not None:
        return out3, None
    tmp = _empty(tuple(out.shape), out.dtype)
    return _three(tmp, dim, keep_axis), tmp


def _check_out(op: str, x, dim: int, out) -> None:
    want = tuple(x.shape[:dim]) + tuple(x.shape[dim + 1:])
    if tuple(out.shape) != want:
        raise ValueError(f"{op}: out {_describe(out)} should have shape {want} for input "
                         f"{_describe(x)} reduced over dim {dim}")


def reduce_axis(x, dim: int, kind: tuple, out) -> None:
    """Reduce ``x`` over ``dim`` into ``out`` (``x``'s shape without ``dim``).

    ``kind`` = (init, combine, final, acc_type) exactly as ``cpu.reduce_kernel``'s (see
    ``ops/reduce.py``); a float16 accumulator computes in float32. Deterministic: a fixed-order
    fold per output (one thread for short axes, otherwise a block and a fixed shared-memory tree;
    long axes with few outputs are cut into fixed chunks reduced in two passes).

    Example: ``reduce_axis(x, 1, ("0", "acc += v", "acc", "float64"), out)`` sums rows.
    """
    init, combine, final, acc_type = kind
    _runtime()
    dim = _axis("reduce_axis", x, dim)
    if x.ndim:
        _check_out("reduce_axis", x, dim, out)
    if out.size == 0:
        return
    x3 = _input3(x, dim)
    out3, staged = _output3(out, dim, keep_axis=False)
    O, R, I = x3.shape
    M = O * I
    in_name, out_name = _tname(x.dtype), _tname(out.dtype)
    acc = templates.compute_type(acc_type)
    column = x3.strides[1] != x3.dtype.itemsize and M >= COLUMN_MIN_OUTPUTS
    if R <= SERIAL_MAX_R or column:
        kernel = _reduce_kernel(kind, in_name, out_name, "serial")
        blocks, threads = _launch_1d(M)
        kernel[blocks, threads](x3, out3, R)
    else:
        chunks = 1 if R < SPLIT_MIN_R or M >= SPLIT_MAX_OUTPUTS else \
            min(-(-R // SPLIT_CHUNK), SPLIT_MAX_CHUNKS)
        length = -(-R // chunks)
        chunks = -(-R // length)
        block = _block_size()
        if chunks == 1:
            kernel = _reduce_kernel(kind, in_name, out_name, "tree")
            kernel[min(M, _rt["blocks"]), block](x3, out3, R, R)
        else:
            partial = _empty((O, chunks, I), acc)
            first = _reduce_kernel(kind, in_name, acc, "partial")
            first[min(M * chunks, _rt["blocks"]), block](x3, partial, R, length)
            second = _reduce_kernel(kind, acc, out_name, "tree")
            second[min(M, _rt["blocks"]), block](partial, out3, R, chunks)
    if staged is not None:
        copy(staged, out)


def _reduce_kernel(kind: tuple, in_name: str, out_name: str, mode: str):
    init, combine, final, acc_type = kind
    block = _block_size()
    key = ("cuda", _rt["arch"], "reduce", kind, in_name, out_name, mode, block)
    return _kernel(key, lambda: templates.reduce(init, combine, final, in_name, acc_type, out_name,
                                                 mode, block))


def arg_reduce_axis(x, dim: int, better: str, out) -> None:
    """Index (int64) of the first best element of ``x`` along ``dim`` into ``out``; ``better``
    as ``cpu.arg_reduce_axis`` (e.g. ``"v > best or (v != v and best == best)"`` for argmax:
    the first NaN wins). Deterministic. The axis must not be empty."""
    _runtime()
    dim = _axis("arg_reduce_axis", x, dim)
    if x.ndim:
        _check_out("arg_reduce_axis", x, dim, out)
        if x.shape[dim] == 0:
            raise ValueError(f"arg_reduce_axis: cannot take the best index of an empty dimension "
                             f"(input {_describe(x)}, dim {dim})")
    if _tname(out.dtype) != "int64":
        raise TypeError(f"arg_reduce_axis: out must be int64, got {_describe(out)}")
    if out.size == 0:
        return
    x3 = _input3(x, dim)
    out3, staged = _output3(out, dim, keep_axis=False)
    O, R, I = x3.shape
    column = x3.strides[1] != x3.dtype.itemsize and O * I >= COLUMN_MIN_OUTPUTS
    mode = "serial" if R <= SERIAL_MAX_R or column else "tree"
    in_name = _tname(x.dtype)
    block = _block_size()
    key = ("cuda", _rt["arch"], "arg_reduce", better, in_name, mode, block)
    kernel = _kernel(key, lambda: templates.arg_reduce(better, in_name, mode, block))
    _run_per_output(kernel, mode, block, x3, out3, staged, out)


def _run_per_output(kernel, mode: str, block: int, x3, out3, staged, out) -> None:
    """Launch an axis kernel over the ``O * I`` outputs of ``(O, R, I)`` input ``x3``: a thread
    each ("serial"), or a block each; then copy a staged result into ``out``."""
    O, _, I = x3.shape
    if mode == "serial":
        kernel[_launch_1d(O * I)](x3, out3)
    else:
        kernel[min(O * I, _rt["blocks"]), block](x3, out3)
    if staged is not None:
        copy(staged, out)


def scan_axis(x, dim: int, combine: str, out) -> None:
    """Inclusive scan of ``x`` along ``dim`` into ``out`` (same shape): ``combine`` is an
    expression in ``acc`` and ``v`` (``"acc + v"`` for cumsum, ``"acc * v"`` for cumprod), as
    ``cpu.scan_axis``. Deterministic; long axes scan in per-thread chunks, so float rounding may
    differ from a serial scan."""
    _runtime()
    dim = _axis("scan_axis", x, dim)
    if tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"scan_axis: out {_describe(out)} must have the input's shape "
                         f"{tuple(x.shape)}")
    if out.size == 0:
        return
    x3 = _input3(x, dim)
    out3, staged = _output3(out, dim, keep_axis=True)
    mode = "serial" if x3.shape[1] <= SERIAL_MAX_R else "block"
    in_name, out_name = _tname(x.dtype), _tname(out.dtype)
    block = _block_size()
    key = ("cuda", _rt["arch"], "scan", combine, in_name, out_name, mode, block)
    kernel = _kernel(key, lambda: templates.scan(combine, in_name, out_name, mode, block))
    _run_per_output(kernel, mode, block, x3, out3, staged, out)


# --- indexing ----------------------------------------------------------------------------------

def _check_index(op: str, index, ndim: int) -> None:
    if _tname(index.dtype) != "int64" or index.ndim != ndim:
        raise TypeError(f"{op}: index must be a {ndim}-D int64 array, got {_describe(index)}")


def _check_3d(op: str, *arrays) -> None:
    for a in arrays:
        if a.ndim != 3:
            raise ValueError(f"{op}: expected 3-D (outer, axis, inner) arrays, got {_describe(a)}")


def _check_same_dtype(op: str, a, b) -> None:
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: dtypes differ: {_describe(a)} and {_describe(b)}")


def gather3(x3, index3, out) -> None:
    """``out[o, r, i] = x3[o, index3[o, r, i], i]``; ``out`` has ``index3``'s shape. Indices must
    be valid (the caller checks them: a kernel reading out of bounds does not raise)."""
    _runtime()
    _check_3d("gather3", x3, out)
    _check_index("gather3", index3, 3)
    _check_same_dtype("gather3", x3, out)
    if tuple(out.shape) != tuple(index3.shape):
        raise ValueError(f"gather3: out {_describe(out)} must have the index's shape "
                         f"{tuple(index3.shape)}")
    if out.size == 0:
        return
    t = _tname(x3.dtype)
    kernel = _kernel(("cuda", _rt["arch"], "gather", t), lambda: templates.gather(t))
    kernel[_launch_1d(out.size)](x3, index3, out)


def scatter3(out3, index3, src3, accumulate: bool, deterministic: bool = True) -> None:
    """``out3[o, index3[o, r, i], i] = src3[o, r, i]`` (``+=`` with ``accumulate``), in place.

    Deterministic by default: one thread per (o, i) walks r in order, so repeated indices give the
    CPU's result (last write wins, sums in order). ``accumulate`` with ``deterministic=False``
    uses ``cuda.atomic.add`` for float32/float64/int32/int64 (parallel over every element; float
    sums then vary in their last bits). Indices must be valid.
    """
    _runtime()
    _check_3d("scatter3", out3, src3)
    _check_index("scatter3", index3, 3)
    _check_same_dtype("scatter3", out3, src3)
    if index3.size == 0:
        return
    t = _tname(out3.dtype)
    atomic = accumulate and not deterministic and t in templates.ATOMIC_TYPES
    key = ("cuda", _rt["arch"], "scatter", t, accumulate, atomic)
    kernel = _kernel(key, lambda: templates.scatter(t, accumulate, atomic))
    O, R, I = index3.shape
    kernel[_launch_1d(O * R * I if atomic else O * I)](out3, index3, src3)


def _check_rows(op: str, table, index, rows, name: str) -> None:
    """``rows`` holds one (O, ·, I) slice of the 3-D ``table`` per entry of the 1-D ``index``."""
    _check_3d(op, table, rows)
    _check_index(op, index, 1)
    _check_same_dtype(op, table, rows)
    want = (table.shape[0], index.shape[0], table.shape[2])
    if tuple(rows.shape) != want:
        raise ValueError(f"{op}: {name} {_describe(rows)} should have shape {want}")


def index_select3(x3, index, out) -> None:
    """``out[o, k, i] = x3[o, index[k], i]`` (``index`` 1-D int64, valid)."""
    _runtime()
    _check_rows("index_select3", x3, index, out, "out")
    if out.size == 0:
        return
    t = _tname(x3.dtype)
    kernel = _kernel(("cuda", _rt["arch"], "index_select", t), lambda: templates.index_select(t))
    kernel[_launch_1d(out.size)](x3, index, out)


def index_add3(out3, index, src3, deterministic: bool = True) -> None:
    """``out3[o, index[k], i] += src3[o, k, i]`` in place (``index`` 1-D int64, valid).

    ``deterministic``: one thread per (o, i) adds k in order (the CPU's order, bit-identical every
    run). Otherwise ``cuda.atomic.add`` per element for float32/float64/int32/int64 (parallel
    over k too; float sums then vary in their last bits).
    """
    _runtime()
    _check_rows("index_add3", out3, index, src3, "src")
    if src3.size == 0:
        return
    t = _tname(out3.dtype)
    atomic = not deterministic and t in templates.ATOMIC_TYPES
    kernel = _kernel(("cuda", _rt["arch"], "index_add", t, atomic),
                     lambda: templates.index_add(t, atomic))
    O, K, I = src3.shape
    kernel[_launch_1d(O * K * I if atomic else O * I)](out3, index, src3)


def sort_axis(x, dim: int, descending: bool, out) -> None:
    """The stable sort permutation of ``x`` along ``dim`` into ``out`` (int64): ``x``'s shape, or
    with ``dim`` cut to its first K positions (the K first of the order, for topk).

    Ascending puts NaN last, descending first; equal values keep their original order either
    way (NumPy's stable argsort, and the CPU's descending order). A rank kernel: O(R^2) per line
    of length R - meant for lines up to a few thousand. ``x`` may be any numeric dtype but bool
    (view it as uint8).
    """
    _runtime()
    if x.ndim == 0:
        raise ValueError(f"sort_axis: expected an array with at least one dimension, got "
                         f"{_describe(x)}")
    dim = _axis("sort_axis", x, dim)
    if out.ndim != x.ndim or out.shape[dim] > x.shape[dim] or any(
            a != b for d, (a, b) in enumerate(zip(out.shape, x.shape)) if d != dim):
        raise ValueError(f"sort_axis: out {_describe(out)} should have the shape of input "
                         f"{_describe(x)} with at most {x.shape[dim]} entries along dim {dim}")
    if _tname(out.dtype) != "int64":
        raise TypeError(f"sort_axis: out must be int64, got {_describe(out)}")
    t = _tname(x.dtype)
    if t == "bool":
        raise TypeError(f"sort_axis: cannot compare bool values in a kernel; pass input "
                        f"{_describe(x)} viewed as uint8")
    if out.size == 0:
        return
    x3 = _input3(x, dim)
    out3, staged = _output3(out, dim, keep_axis=True)
    key = ("cuda", _rt["arch"], "sort_rank", t, bool(descending))
    kernel = _kernel(key, lambda: templates.sort_rank(t, bool(descending)))
    kernel[_launch_1d(x3.shape[0] * x3.shape[1] * x3.shape[2])](x3, out3)
    if staged is not None:
        copy(staged, out)


# --- matmul ------------------------------------------------------------------------------------

def matmul(a, b, out, alpha: float = 1.0) -> None:
    """``out = alpha * a @ b`` for (M, K) @ (K, N) or batched (B, M, K) @ (B, K, N) (a batch of
    1 broadcasts), float32/float64/float16 (half accumulates in float32), any strides.

    cuBLAS (through nvmath-python's ``nvmath.bindings.cublas``, raw device pointers) on a GPU when
    it imports; otherwise a tiled shared-memory kernel. ``matmul_backend()`` says which.
    """
    _runtime()
    batched = a.ndim == 3
    if a.ndim not in (2, 3) or b.ndim != a.ndim or out.ndim != a.ndim:
        raise ValueError(f"matmul: expected 2-D or 3-D operands of one rank, got a "
                         f"{_describe(a)}, b {_describe(b)}, out {_describe(out)}")
    t = _tname(a.dtype)
    if t not in ("float16", "float32", "float64") or b.dtype != a.dtype or out.dtype != a.dtype:
        raise TypeError(f"matmul: a, b and out must share one float dtype (float16, float32, "
                        f"float64), got a {_describe(a)}, b {_describe(b)}, out {_describe(out)}")
    a3, b3, o3 = (x if batched else _view(x, (1,) + tuple(x.shape), (0,) + tuple(x.strides))
                  for x in (a, b, out))
    (ba, m, k), (bb, k2, n) = a3.shape, b3.shape
    batch = max(ba, bb)
    if k != k2 or ba not in (1, batch) or bb not in (1, batch) or \
            tuple(o3.shape) != (batch, m, n):
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be "
                         f"multiplied into out {tuple(out.shape)}")
    if out.size == 0:
        return
    if k == 0:
        fill(out, 0)
        return
    a3, b3 = (x if x.shape[0] == batch else _view(x, (batch,) + tuple(x.shape[1:]),
                                                  (0,) + tuple(x.strides[1:])) for x in (a3, b3))
    blas = _cublas()
    if blas is not None:
        _gemm(blas, a3, b3, o3, alpha)
        return
    tile = SIM_TILE if _rt["sim"] else TILE
    kernel = _kernel(("cuda", _rt["arch"], "matmul", t, tile), lambda: templates.matmul(t, tile))
    grid = (min(-(-n // tile), 65535), min(-(-m // tile), 65535), min(batch, 65535))
    kernel[grid, (tile, tile)](a3, b3, o3, _scalar(alpha, templates.compute_type(t)))


def matmul_backend() -> str:
    """``"cublas"`` when matmul calls cuBLAS, ``"numba"`` for the tiled kernel."""
    _runtime()
    return "numba" if _cublas() is None else "cublas"


_blas: list = []


def _cublas():
    """nvmath's cuBLAS bindings module when it works on this GPU, else None (memoised)."""
    if not _blas:
        mod = None
        if not _rt["sim"]:
            try:
                from nvmath.bindings import cublas as mod
                _blas_handle(mod)  # loads libcublas: a missing or broken library shows here
            except Exception as exc:  # ImportError, or the library failing to load or start
                if not isinstance(exc, ImportError):
                    _log(f"cuBLAS through nvmath-python is unusable ({exc!r}): matmul uses the "
                         f"numba kernel")
                mod = None
        _blas.append(mod)
    return _blas[0]


# cuBLAS's C enum values (stable ABI): operations, data types, compute types, default algorithm.
_OP_N, _OP_T = 0, 1
_CUDA_R = {"float16": 2, "float32": 0, "float64": 1}                 # CUDA_R_16F / 32F / 64F
_COMPUTE = {"float16": 68, "float32": 68, "float64": 70}             # CUBLAS_COMPUTE_32F / 64F
_GEMM_DEFAULT = -1
_handles: dict = {}  # device id -> cuBLAS handle


def _blas_ld(rows: int, cols: int, rs: int, cs: int):
    """How cuBLAS (column-major) reads the transpose of a row-major ``rows x cols`` matrix with
    element strides ``(rs, cs)``: ``(operation, leading dimension)``, or None if it cannot."""
    if cols == 1:
        cs = 1  # a single column's stride is never used
    if rows == 1:  # nor a single row's: pick the one that makes a valid layout
        rs = max(cols, 1) if cs == 1 else 1
    if cs == 1 and rs >= max(cols, 1):
        return _OP_N, rs
    if rs == 1 and cs >= max(rows, 1):
        return _OP_T, cs
    return None


def _blas_handle(blas) -> int:
    """This device's cuBLAS handle (made once, bound to the default stream where every dynagrad
    kernel runs)."""
    dev = _runtime_index("matmul")  # (numba's get_current_device() is slow on every call)
    handle = _handles.get(dev)
    if handle is None:
        handle = _handles[dev] = blas.create()
        blas.set_stream(handle, 0)
    return handle


def _ptr(x) -> int:
    """The device address of element 0 of a numba device array."""
    return x.device_ctypes_pointer.value


def _dense(x):
    tmp = _empty(tuple(x.shape), x.dtype)
    copy(x, tmp)
    return tmp


def _gemm(blas, a3, b3, o3, alpha: float) -> None:
    """``o3 = alpha * a3 @ b3`` (3-D, equal batch) with cuBLAS: the row-major product is computed
    as its column-major transpose, ``C^T = B^T A^T``, so no operand needs a copy unless its
    strides have no unit step (or a negative one)."""
    t = _tname(a3.dtype)
    item = a3.dtype.itemsize
    batch, m, k = a3.shape
    n = b3.shape[2]

    def layout(x, rows, cols):
        if x.strides[0] < 0:
            return None
        return _blas_ld(rows, cols, x.strides[1] // item, x.strides[2] // item)

    la, lb = layout(a3, m, k), layout(b3, k, n)
    if la is None:
        a3 = _dense(a3)
        la = layout(a3, m, k)
    if lb is None:
        b3 = _dense(b3)
        lb = layout(b3, k, n)
    target, lc = o3, layout(o3, m, n)
    if lc is None or lc[0] != _OP_N:  # the result must be row-major: stage it
        target = _empty(tuple(o3.shape), o3.dtype)
        lc = layout(target, m, n)
    handle = _blas_handle(blas)
    scalar = np.float64 if t == "float64" else np.float32
    alpha_h, beta_h = np.array(alpha, scalar), np.zeros((), scalar)  # host scalars, kept alive
    dt, ct = _CUDA_R[t], _COMPUTE[t]
    pa, pb, pc = (_ptr(x) for x in (a3, b3, target))
    if batch == 1:
        blas.gemm_ex(handle, lb[0], la[0], n, m, k, alpha_h.ctypes.data, pb, dt, lb[1], pa, dt,
                     la[1], beta_h.ctypes.data, pc, dt, lc[1], ct, _GEMM_DEFAULT)
    else:
        blas.gemm_strided_batched_ex(
            handle, lb[0], la[0], n, m, k, alpha_h.ctypes.data, pb, dt, lb[1],
            b3.strides[0] // item, pa, dt, la[1], a3.strides[0] // item, beta_h.ctypes.data, pc,
            dt, lc[1], target.strides[0] // item, batch, ct, _GEMM_DEFAULT)
    if target is not o3:
        copy(target, o3)
