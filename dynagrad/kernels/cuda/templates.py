"""CUDA kernel templates: each function returns ``(source, function_name, signature, description)``
like ``kernels/cpu/templates.py``, for ``cuda.jit`` grid-stride kernels on numba device arrays.

The scalar pieces (an elementwise expression, a reduction's ``init``/``combine``/``final``, a scan's
``combine``, an arg-reduction's ``better``) are the very strings the CPU templates receive, so an op
defined once runs on both devices. Kernels specialize on dtypes and a layout class only:

* elementwise ``"c"``: every array and the output are 1-D contiguous of one length;
* elementwise ``"s"``: ``ndim``-D arrays of any strides (stride 0 broadcasts), indexed by the
  output's multi-index (``ndim`` is 2, 4 or 8);
* reductions, scans and index kernels work on 3-D ``(outer, axis, inner)`` views of any strides.

float16 arrays are read as float16 and computed in float32; a value is converted to the output's
dtype only when stored. Block-cooperative kernels take their block size as a source constant
(shared-memory sizes must be), so the host launches them with exactly that many threads.

Example:
    >>> src, name, sig, what = elementwise("x + y", ("a", "s"), ("float32", "float32"),
    ...                                    ("float32", "float32"), "float32", "float32", "c", 1)
    >>> "out[_i] = np.float32(x + y)" in src, [str(t) for t in sig]
    (True, ['array(float32, 1d, C)', 'float32', 'array(float32, 1d, C)'])
"""
from __future__ import annotations

from numba.core import types

from ..cpu.templates import NUMBA_TYPE, OPERAND_NAMES, np_dtype

HEADER = """\
import numba
from numba import cuda
from dynagrad.kernels.cuda.scalarlib import *

"""
DECORATOR = "@cuda.jit(cache=True)\n"
ATOMIC_TYPES = ("float32", "float64", "int32", "int64")  # cuda.atomic.add supports these


def compute_type(t: str) -> str:
    """The type device code computes a ``t`` value in (half math runs in float32)."""
    return "float32" if t == "float16" else t


def _nb(t: str):
    return getattr(types, NUMBA_TYPE[t])


def _arr(t: str, ndim: int, layout: str = "A") -> types.Array:
    return types.Array(_nb(t), ndim, layout)


def _load(ref: str, stored: str, want: str | None = None) -> str:
    """Read an element stored as ``stored`` as a value of (compute) type ``want``."""
    want = compute_type(want or stored)
    return ref if want == stored else f"{np_dtype(want)}({ref})"


def _cast(value: str, t: str) -> str:
    return f"(({value}) != 0)" if t == "bool" else f"{np_dtype(t)}({value})"


def _store(value: str, value_type: str, stored: str) -> str:
    """Convert ``value`` to ``value_type`` (the op's declared result type), then to the storage
    dtype when that differs (a half result rounds once, straight from the computed value)."""
    if stored == "float16":
        return f"np.float16({value})"
    first = _cast(value, compute_type(value_type))
    return first if compute_type(value_type) == stored else _cast(first, stored)


def _grid_loop(var: str, total: str) -> str:
    return f"for {var} in range(cuda.grid(1), {total}, cuda.gridsize(1)):"


def _source(args: list, body: list, prelude: str = "") -> str:
    return (HEADER + prelude + DECORATOR + f"def kernel({', '.join(args)}):\n"
            + "\n".join("    " + line for line in body) + "\n")


def _indent(lines: list, n: int = 1) -> list:
    return ["    " * n + line for line in lines]


# --- elementwise -----------------------------------------------------------------------------

def elementwise(expr: str, kinds: tuple, in_types: tuple, arr_types: tuple, out_type: str,
                out_dtype: str, layout: str, ndim: int, params: tuple = ()) -> tuple:
    """``out = expr(x, y, ...)`` over the output, one grid-stride loop.

    ``in_types`` are the compute types of the operands, ``arr_types`` their stored dtypes (an
    array is converted on load when they differ); ``out_type`` is the op's result type and
    ``out_dtype`` the output array's dtype; ``params`` are ``(name, type)`` extra scalars.
    """
    contiguous = layout == "c"
    dims = 1 if contiguous else ndim
    sig = [_arr(a, dims, "C" if contiguous else "A") if k == "a" else _nb(compute_type(t))
           for k, t, a in zip(kinds, in_types, arr_types)]
    sig += [_nb(compute_type(t)) for _, t in params]
    sig.append(_arr(out_dtype, dims, "C" if contiguous else "A"))
    args = [f"a{i}" for i in range(len(kinds))] + [p for p, _ in params] + ["out"]
    body = [f"{OPERAND_NAMES[i]} = a{i}" for i, k in enumerate(kinds) if k == "s"]
    if contiguous:
        index = "_i"
        body.append(_grid_loop("_i", "out.shape[0]"))
        step = []
    else:
        index = ", ".join(f"_j{d}" for d in range(ndim))
        body += _mixed_radix_start(ndim)
        body.append("for _i in range(_start, out.size, _step):")
        step = _mixed_radix_step(ndim)
    loads = [f"{OPERAND_NAMES[i]} = {_load(f'a{i}[{index}]', a, t)}"
             for i, (k, t, a) in enumerate(zip(kinds, in_types, arr_types)) if k == "a"]
    body += _indent(loads + [f"out[{index}] = {_store(expr, out_type, out_dtype)}"] + step)
    what = f"cuda elementwise[{expr}] {arr_types}->{out_dtype} layout={layout}{dims}"
    return _source(args, body), "kernel", tuple(sig), what


def _mixed_radix_start(ndim: int) -> list:
    """Digits of this thread's first flat index (``_j*``) and of the grid stride (``_s*``) in the
    output's shape: the loop then steps the multi-index by carries instead of dividing."""
    lines = [", ".join(f"_n{d}" for d in range(ndim)) + " = out.shape",
             "_start = cuda.grid(1)", "_step = cuda.gridsize(1)"]
    for digit, flat in (("_j", "_start"), ("_s", "_step")):
        lines.append(f"_r = {flat}")
        for d in range(ndim - 1, 0, -1):
            lines += [f"{digit}{d} = _r % _n{d}", f"_r //= _n{d}"]
        lines.append(f"{digit}0 = _r")
    return lines


def _mixed_radix_step(ndim: int) -> list:
    # each digit plus its step plus a carry stays below twice its size: one subtraction suffices
    lines = []
    for d in range(ndim - 1, 0, -1):
        lines += [f"_j{d} += _s{d}", f"if _j{d} >= _n{d}:", f"    _j{d} -= _n{d}",
                  f"    _j{d - 1} += 1"]
    lines.append("_j0 += _s0")
    return lines


# --- reductions ----------------------------------------------------------------------------

def reduce(init: str, combine: str, final: str, in_type: str, acc_type: str, out_dtype: str,
           mode: str, block: int) -> tuple:
    """Fold the middle axis of ``x`` (O, R, I) into ``out`` (O, C, I).

    ``combine`` is the CPU template's statement updating ``acc`` from ``v``; partial results
    merge with the same statement (``v`` is then another partial accumulator). Modes:
    ``"serial"`` - a thread per output folds its R values in order (C == 1);
    ``"tree"`` - a block per output and chunk ``c`` of ``L`` values: each thread folds every
    ``block``-th value of the chunk in order, then a fixed shared-memory tree merges the threads;
    ``"partial"`` - as ``"tree"`` but stores the raw accumulators (the first pass of a split
    reduction; the second pass is a ``"tree"`` over them). No atomics: bit-identical every run.
    ``final`` may read ``R``, the full reduced length (``R_total``).
    """
    acc = compute_type(acc_type)
    start = f"acc = {_cast(init, acc) if acc != 'bool' else f'np.bool_({init})'}"
    load = f"v = {_load('x[_o, _r, _i]', in_type)}"
    if mode == "partial":
        write = "out[_o, _c, _i] = acc"
    else:
        write = f"out[_o, _c, _i] = {_store(final, acc, out_dtype)}"
    if mode == "serial":
        args = ["x", "out", "R_total"]
        body = ["_O, _R, _I = x.shape", "R = R_total", "_c = 0", _grid_loop("_m", "_O * _I"),
                "    _o = _m // _I", "    _i = _m - _o * _I", "    " + start,
                "    for _r in range(_R):", "        " + load, "        " + combine,
                "    " + write]
    else:
        args = ["x", "out", "R_total", "L"]
        body = [f"_sh = cuda.shared.array({block}, numba.{NUMBA_TYPE[acc]})",
                "_t = cuda.threadIdx.x", "_O, _R, _I = x.shape", "_CI = out.shape[1] * _I",
                "R = R_total",
                "for _w in range(cuda.blockIdx.x, _O * _CI, cuda.gridDim.x):",
                "    _o = _w // _CI", "    _q = _w - _o * _CI", "    _c = _q // _I",
                "    _i = _q - _c * _I", "    _lo = _c * L", "    _hi = min(_lo + L, _R)",
                "    " + start,
                f"    for _r in range(_lo + _t, _hi, {block}):", "        " + load,
                "        " + combine,
                "    _sh[_t] = acc", "    cuda.syncthreads()", f"    _k = {block // 2}",
                "    while _k > 0:", "        if _t < _k:", "            acc = _sh[_t]",
                "            v = _sh[_t + _k]", "            " + combine,
                "            _sh[_t] = acc",
                "        cuda.syncthreads()", "        _k //= 2",
                "    if _t == 0:", "        acc = _sh[0]", "        " + write]
    what = f"cuda reduce[{combine}] {in_type}->{out_dtype} {mode}"
    sig = (_arr(in_type, 3), _arr(acc if mode == "partial" else out_dtype, 3), types.int64)
    if mode != "serial":
        sig += (types.int64,)
    return _source(args, body), "kernel", sig, what


def arg_reduce(better: str, in_type: str, mode: str, block: int) -> tuple:
    """Index of the first best value along the middle axis of ``x`` (O, R, I) into ``out``
    (O, 1, I) int64; ``better`` says candidate ``v`` beats ``best`` (argmax/argmin, NaN rules).

    ``"serial"``: a thread per output scans in order. ``"tree"``: a block per output; each thread
    keeps the first best of its values, and merges take the better value or, when neither is
    better, the smaller index - so the result is the first best index, as on the CPU.
    """
    val = compute_type(in_type)
    load = _load("x[_o, _r, _i]", in_type)
    if mode == "serial":
        body = ["_O, _R, _I = x.shape", _grid_loop("_m", "_O * _I"),
                "    _o = _m // _I", "    _i = _m - _o * _I", "    _r = 0",
                f"    best = {load}", "    idx = 0", "    for _r in range(1, _R):",
                f"        v = {load}", f"        if {better}:", "            best = v",
                "            idx = _r", "    out[_o, 0, _i] = idx"]
    else:
        body = [f"_sv = cuda.shared.array({block}, numba.{NUMBA_TYPE[val]})",
                f"_si = cuda.shared.array({block}, numba.int64)",
                "_t = cuda.threadIdx.x", "_O, _R, _I = x.shape",
                "for _w in range(cuda.blockIdx.x, _O * _I, cuda.gridDim.x):",
                "    _o = _w // _I", "    _i = _w - _o * _I", "    _r = 0",
                f"    best = {load}", "    idx = -1",
                f"    for _r in range(_t, _R, {block}):", f"        v = {load}",
                f"        if idx < 0 or ({better}):", "            best = v",
                "            idx = _r",
                "    _sv[_t] = best", "    _si[_t] = idx", "    cuda.syncthreads()",
                f"    _k = {block // 2}", "    while _k > 0:",
                "        if _t < _k and _si[_t + _k] >= 0:",
                "            _ci = _si[_t + _k]", "            _mi = _si[_t]",
                "            _cv = _sv[_t + _k]", "            _mv = _sv[_t]",
                "            v = _cv", "            best = _mv", f"            _b1 = {better}",
                "            v = _mv", "            best = _cv", f"            _b2 = {better}",
                "            if _mi < 0 or _b1 or (not _b2 and _ci < _mi):",
                "                _sv[_t] = _cv", "                _si[_t] = _ci",
                "        cuda.syncthreads()", "        _k //= 2",
                "    if _t == 0:", "        out[_o, 0, _i] = _si[0]"]
    sig = (_arr(in_type, 3), _arr("int64", 3))
    return _source(["x", "out"], body), "kernel", sig, f"cuda arg_reduce[{better}] {in_type} {mode}"


def scan(combine: str, in_type: str, out_dtype: str, mode: str, block: int) -> tuple:
    """Inclusive scan along the middle axis of ``x`` (O, R, I): ``acc = combine(acc, v)``.

    ``"serial"``: a thread per line, in order. ``"block"``: a block per line; thread ``t`` scans
    its own contiguous chunk, a fixed Hillis-Steele scan over the chunk totals gives each chunk
    its prefix, then each thread rescans its chunk from that prefix. ``combine`` must be
    associative (sum, product, max, min). Deterministic.
    """
    acc = compute_type(in_type)
    load = _load("x[_o, _r, _i]", in_type)
    put = f"out[_o, _r, _i] = {_store('acc', acc, out_dtype)}"
    if mode == "serial":
        body = ["_O, _R, _I = x.shape", _grid_loop("_m", "_O * _I"),
                "    _o = _m // _I", "    _i = _m - _o * _I", "    _r = 0",
                f"    acc = {load}", "    " + put, "    for _r in range(1, _R):",
                f"        v = {load}", f"        acc = {combine}", "        " + put]
    else:
        body = [f"_sh = cuda.shared.array({block}, numba.{NUMBA_TYPE[acc]})",
                "_t = cuda.threadIdx.x", "_O, _R, _I = x.shape",
                f"_L = (_R + {block - 1}) // {block}", "_nc = (_R + _L - 1) // _L",
                "_lo = _t * _L", "_hi = min(_lo + _L, _R)",
                "for _w in range(cuda.blockIdx.x, _O * _I, cuda.gridDim.x):",
                "    _o = _w // _I", "    _i = _w - _o * _I", "    _r = _lo",
                "    if _lo < _hi:", f"        acc = {load}",
                "        for _r in range(_lo + 1, _hi):", f"            v = {load}",
                f"            acc = {combine}", "        _sh[_t] = acc",
                "    cuda.syncthreads()", "    _k = 1", "    while _k < _nc:",
                "        _mine = _k <= _t < _nc", "        if _mine:",
                "            acc = _sh[_t - _k]", "            v = _sh[_t]",
                f"            acc = {combine}", "        cuda.syncthreads()",
                "        if _mine:", "            _sh[_t] = acc", "        cuda.syncthreads()",
                "        _k *= 2",
                "    if _lo < _hi:", "        _r = _lo", f"        v = {load}",
                "        acc = v", "        if _t > 0:", "            acc = _sh[_t - 1]",
                f"            acc = {combine}", "        " + put,
                "        for _r in range(_lo + 1, _hi):", f"            v = {load}",
                f"            acc = {combine}", "            " + put,
                "    cuda.syncthreads()"]
    sig = (_arr(in_type, 3), _arr(out_dtype, 3))
    return _source(["x", "out"], body), "kernel", sig, f"cuda scan[{combine}] {in_type} {mode}"


# --- indexing ------------------------------------------------------------------------------

def _decode3(flat: str, a: str, b: str, c: str, mid: str, inner: str) -> list:
    """``a, b, c`` = the (outer, middle, inner) digits of ``flat``."""
    return [f"    {a} = {flat} // ({mid} * {inner})", f"    _q = {flat} - {a} * ({mid} * {inner})",
            f"    {b} = _q // {inner}", f"    {c} = _q - {b} * {inner}"]


def _add_in_place(target: str, addend: str, dtype: str) -> str:
    total = f"{_load(target, dtype)} + {_load(addend, dtype)}"
    return f"{target} = {_store(total, dtype, dtype)}"


def gather(dtype: str) -> tuple:
    """``out[o, r, i] = x[o, index[o, r, i], i]`` (indices validated by the caller)."""
    body = ["_O, _R, _I = out.shape", _grid_loop("_m", "_O * _R * _I"),
            *_decode3("_m", "_o", "_r", "_i", "_R", "_I"),
            "    out[_o, _r, _i] = x[_o, index[_o, _r, _i], _i]"]
    sig = (_arr(dtype, 3), _arr("int64", 3), _arr(dtype, 3))
    return _source(["x", "index", "out"], body), "kernel", sig, f"cuda gather {dtype}"


def scatter(dtype: str, accumulate: bool, atomic: bool) -> tuple:
    """``out[o, index[o, r, i], i] (+)= src[o, r, i]`` in place (indices validated by the caller).

    Deterministic form (``atomic=False``): a thread per (o, i) walks r in order, so repeated
    indices resolve as on the CPU (the last write wins; sums add in order). ``atomic=True``
    (accumulate only): a thread per element with ``cuda.atomic.add`` - faster when few (o, i)
    pairs share many r, but float sums then depend on timing.
    """
    target = "out[_o, index[_o, _r, _i], _i]"
    if atomic:
        body = ["_O, _R, _I = index.shape", _grid_loop("_m", "_O * _R * _I"),
                *_decode3("_m", "_o", "_r", "_i", "_R", "_I"),
                "    cuda.atomic.add(out, (_o, index[_o, _r, _i], _i), src[_o, _r, _i])"]
    else:
        write = _add_in_place(target, "src[_o, _r, _i]", dtype) if accumulate else \
            f"{target} = src[_o, _r, _i]"
        body = ["_O, _R, _I = index.shape", _grid_loop("_m", "_O * _I"),
                "    _o = _m // _I", "    _i = _m - _o * _I", "    for _r in range(_R):",
                "        " + write]
    sig = (_arr(dtype, 3), _arr("int64", 3), _arr(dtype, 3))
    what = f"cuda scatter{'_add' if accumulate else ''}{' atomic' if atomic else ''} {dtype}"
    return _source(["out", "index", "src"], body), "kernel", sig, what


def index_select(dtype: str) -> tuple:
    """``out[o, k, i] = x[o, index[k], i]`` (indices validated by the caller)."""
    body = ["_O, _K, _I = out.shape", _grid_loop("_m", "_O * _K * _I"),
            *_decode3("_m", "_o", "_k", "_i", "_K", "_I"),
            "    out[_o, _k, _i] = x[_o, index[_k], _i]"]
    sig = (_arr(dtype, 3), _arr("int64", 1), _arr(dtype, 3))
    return _source(["x", "index", "out"], body), "kernel", sig, f"cuda index_select {dtype}"


def index_add(dtype: str, atomic: bool) -> tuple:
    """``out[o, index[k], i] += src[o, k, i]`` in place (indices validated by the caller).

    Deterministic form: a thread per (o, i) adds k in order (the CPU's order). ``atomic=True``:
    a thread per source element with ``cuda.atomic.add`` (float sums then depend on timing).
    """
    if atomic:
        body = ["_O, _K, _I = src.shape", _grid_loop("_m", "_O * _K * _I"),
                *_decode3("_m", "_o", "_k", "_i", "_K", "_I"),
                "    cuda.atomic.add(out, (_o, index[_k], _i), src[_o, _k, _i])"]
    else:
        body = ["_O, _K, _I = src.shape", _grid_loop("_m", "_O * _I"),
                "    _o = _m // _I", "    _i = _m - _o * _I", "    for _k in range(_K):",
                "        " + _add_in_place("out[_o, index[_k], _i]", "src[_o, _k, _i]", dtype)]
    sig = (_arr(dtype, 3), _arr("int64", 1), _arr(dtype, 3))
    what = f"cuda index_add{' atomic' if atomic else ''} {dtype}"
    return _source(["out", "index", "src"], body), "kernel", sig, what


# --- matmul --------------------------------------------------------------------------------

def matmul(dtype: str, tile: int) -> tuple:
    """``out[z] = alpha * a[z] @ b[z]`` for (B, M, K) @ (B, K, N), any strides, launched with
    ``(tile, tile)`` threads per block: square tiles of ``a`` and ``b`` staged in shared memory,
    accumulated in float32 (float64 for float64 inputs)."""
    acc = compute_type(dtype)
    zero = f"{np_dtype(acc)}(0)"
    body = [f"_sa = cuda.shared.array(({tile}, {tile}), numba.{acc})",
            f"_sb = cuda.shared.array(({tile}, {tile}), numba.{acc})",
            "_tx = cuda.threadIdx.x", "_ty = cuda.threadIdx.y",
            "_B, _M, _K = a.shape", "_N = b.shape[2]",
            "for _z in range(cuda.blockIdx.z, _B, cuda.gridDim.z):",
            f"    for _row0 in range(cuda.blockIdx.y * {tile}, _M, cuda.gridDim.y * {tile}):",
            f"        for _col0 in range(cuda.blockIdx.x * {tile}, _N, cuda.gridDim.x * {tile}):",
            "            _row = _row0 + _ty", "            _col = _col0 + _tx",
            f"            acc = {zero}",
            f"            for _k0 in range(0, _K, {tile}):",
            "                if _row < _M and _k0 + _tx < _K:",
            f"                    _sa[_ty, _tx] = {_load('a[_z, _row, _k0 + _tx]', dtype)}",
            "                else:", f"                    _sa[_ty, _tx] = {zero}",
            "                if _k0 + _ty < _K and _col < _N:",
            f"                    _sb[_ty, _tx] = {_load('b[_z, _k0 + _ty, _col]', dtype)}",
            "                else:", f"                    _sb[_ty, _tx] = {zero}",
            "                cuda.syncthreads()",
            f"                for _kk in range({tile}):",
            "                    acc += _sa[_ty, _kk] * _sb[_kk, _tx]",
            "                cuda.syncthreads()",
            "            if _row < _M and _col < _N:",
            f"                out[_z, _row, _col] = {_store('alpha * acc', acc, dtype)}"]
    sig = (_arr(dtype, 3), _arr(dtype, 3), _arr(dtype, 3), _nb(acc))
    what = f"cuda matmul {dtype} tile={tile}"
    return _source(["a", "b", "out", "alpha"], body), "kernel", sig, what


# --- sorting -------------------------------------------------------------------------------

def sort_rank(dtype: str, descending: bool) -> tuple:
    """The stable sort permutation of each line along the middle axis of ``x`` (O, R, I):
    ``out[o, rank(r), i] = r`` for every ``rank(r) < K`` (``out`` is (O, K, I): K = R sorts,
    a smaller K keeps the first K - topk).

    One thread per element counts the elements of its line that come before it: those with a
    smaller index unless they are strictly after it, those with a larger index only if strictly
    before it - so equal values keep their original order. "Before" is ``<`` (``>`` when
    ``descending``) with NaN as the largest value. O(R^2) work per line (fine for lines up to a
    few thousand); the ranks of a line are a permutation, so every write has its own slot.
    """
    # _lt(p, q): p strictly before q in the sort order (NaN largest, as PyTorch and NumPy)
    if descending:
        lt = "({p} > {q} or ({p} != {p} and {q} == {q}))"
    else:
        lt = "({p} < {q} or ({q} != {q} and {p} == {p}))"
    load = _load("x[_o, _j, _i]", dtype)
    body = ["_O, _R, _I = x.shape", "_K = out.shape[1]", _grid_loop("_m", "_O * _R * _I"),
            *_decode3("_m", "_o", "_r", "_i", "_R", "_I"),
            f"    a = {_load('x[_o, _r, _i]', dtype)}", "    _rank = 0",
            "    for _j in range(_r):", f"        b = {load}",
            f"        if not {lt.format(p='a', q='b')}:", "            _rank += 1",
            "    for _j in range(_r + 1, _R):", f"        b = {load}",
            f"        if {lt.format(p='b', q='a')}:", "            _rank += 1",
            "    if _rank < _K:", "        out[_o, _rank, _i] = _r"]
    sig = (_arr(dtype, 3), _arr("int64", 3))
    what = f"cuda sort_rank {dtype}{' descending' if descending else ''}"
    return _source(["x", "out"], body), "kernel", sig, what
