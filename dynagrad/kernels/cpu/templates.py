"""Kernel templates: each function returns ``(source, function_name, signature, description)``.

Kernels see raw NumPy buffers only. They specialize on dtypes and on a layout class, never on shape:

* ``"c"``  - every array operand and the output are 1-D contiguous (flat views of same-shape tensors);
* ``"p"``  - as ``"c"`` but split over threads (large tensors only);
* ``"b"``  - 4-D C-contiguous inputs, each dimension the output's size or 1 (broadcast): the
  inner loop walks contiguous rows, so it vectorizes;
* ``"s"``  - 4-D strided arrays of any layout; a size-1 dimension of an input broadcasts.

Operands of an elementwise kernel are arrays (``"a"``) or scalars (``"s"``); in layout ``"b"`` an
``"i"`` array repeats one value along the inner dimension. An ``"o"`` operand (layouts ``"c"``,
``"p"`` and ``"b"``) is the output itself, as in ``x.add_(y)``: it is no argument, the kernel reads
``out``. The scalar expression names the operands ``x, y, z, w`` in order.

Example:
    >>> src, name, sig, what = elementwise("x + y", ("a", "a"), ("float32", "float32"), "float32", "c")
    >>> [str(t) for t in sig]
    ['readonly array(float32, 1d, C)', 'readonly array(float32, 1d, C)', 'array(float32, 1d, C)']
"""
from __future__ import annotations

import numpy as np
from numba import types

from . import worker_pool

NUMBA_TYPE = {"float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64",
              "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
              "bool": "boolean", "complex64": "complex64", "complex128": "complex128"}
OPERAND_NAMES = ("x", "y", "z", "w")
VECTOR_BYTES = 64  # one AVX-512 register: the width of scalarlib's masked row moves

HEADER = """\
import math
import numpy as np
import numba
from dynagrad.kernels.cpu.scalarlib import *

"""


def _arr(t: str, ndim: int, contiguous: bool, readonly: bool = False) -> types.Array:
    """Array argument type. Inputs are declared read-only: writable arrays convert to that type,
    and broadcast views (which NumPy marks read-only) are accepted too."""
    return types.Array(getattr(types, NUMBA_TYPE[t]), ndim, "C" if contiguous else "A",
                       readonly=readonly)


def _sig(*args) -> tuple:
    return tuple(getattr(types, NUMBA_TYPE[a]) if isinstance(a, str) else a for a in args)


def _decorator(parallel: bool = False, reassociate: bool = False) -> str:
    # "contract" fuses a*b+c into one FMA (one rounding instead of two: never less accurate);
    # "reassoc" lets LLVM split a running total into vector lanes. Neither assumes away NaN/inf.
    flags = '{"reassoc", "contract"}' if reassociate else '{"contract"}'
    extra = ", parallel=True" if parallel else ""
    return f'@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={flags}{extra})\n'


# Elements per block of a threaded flat kernel whose expression calls tanh.
BLOCK = 64
# Blocks pay where the expression is short enough for LLVM to run 4 vectors at once without
# spilling, as tanh is. The longer GELU and its gradient spill their constants in blocks and
# run faster flat; erf and sigmoid are about even.
_HEAVY_CALLS = ("ftanh(",)


def is_heavy(expr: str) -> bool:
    """Whether ``expr``'s threaded flat kernel runs in blocks of ``BLOCK`` elements."""
    return any(call in expr for call in _HEAVY_CALLS)


def elementwise(expr: str, kinds: tuple, in_types: tuple, out_type: str, layout: str,
                params: tuple = ()) -> tuple:
    """An n-ary map ``out = expr(x, y, ...)``; ``params`` are extra scalar arguments by name."""
    # An operand that is the output is read from ``out``, not from an argument of its own: LLVM
    # vectorizes a loop only behind a runtime check that no input overlaps ``out``, and an
    # argument that is ``out`` fails it every time (``x.add_(y)`` then ran a scalar loop).
    if "o" in kinds and layout == "s":
        raise ValueError("elementwise: an operand that is the output needs layout c, p or b")
    args = [f"a{i}" for i, k in enumerate(kinds) if k != "o"]
    ndim, contiguous = {"c": (1, True), "p": (1, True), "b": (4, True)}.get(layout, (4, False))
    signature = _sig(*[t if k == "s" else _arr(t, ndim, contiguous, readonly=True)
                       for k, t in zip(kinds, in_types) if k != "o"],
                     *[t for _, t in params], _arr(out_type, ndim, contiguous))
    names = args + [p for p, _ in params] + ["out"]
    what = f"elementwise[{expr}] {in_types}->{out_type} layout={layout}"
    if layout == "p" and worker_pool.AVAILABLE:
        source = _pooled_elementwise(expr, kinds, in_types, out_type, params)
        return source, "kernel", signature, what
    body = []
    for i, k in enumerate(kinds):
        if k == "s":
            body.append(f"    {OPERAND_NAMES[i]} = a{i}")
    if layout in "cp":
        arrays = [i for i, k in enumerate(kinds) if k == "a"]
        if layout == "p" and is_heavy(expr):
            # whole blocks of BLOCK elements (the caller runs the tail with the "c" kernel): a
            # fixed trip count lets LLVM run several vectors per iteration, which hides memory
            # latency behind the long dependency chain of a transcendental. The block views
            # keep the loop free of index arithmetic.
            body.append(f"    for b in numba.prange(out.shape[0] // {BLOCK}):")
            body.append(f"        start = b * {BLOCK}")
            for i in arrays:
                body.append(f"        b{i} = a{i}[start:start + {BLOCK}]")
            body.append(f"        o_block = out[start:start + {BLOCK}]")
            body.append(f"        for i in range({BLOCK}):")
            body.extend(f"            {OPERAND_NAMES[i]} = b{i}[i]" for i in arrays)
            body.extend(_reads_of_out(kinds, "o_block", 12))
            body.append(f"            o_block[i] = {expr}")
        else:
            loop = "numba.prange" if layout == "p" else "range"
            body.append(f"    for i in {loop}(out.shape[0]):")
            body.extend(f"        {OPERAND_NAMES[i]} = a{i}[i]" for i in arrays)
            body.extend(_reads_of_out(kinds, "out", 8))
            body.append(f"        out[i] = {expr}")
    elif layout == "b":
        body.extend(_broadcast_loops(expr, kinds))
    else:
        body.append("    n0, n1, n2, n3 = out.shape")
        for i, k in enumerate(kinds):
            if k == "a":  # a size-1 input dimension repeats along the output (broadcast)
                body.append(f"    m{i} = (" + ", ".join(
                    f"1 if a{i}.shape[{d}] != 1 else 0" for d in range(4)) + ")")
        body.append("    for i0 in range(n0):")
        body.append("        for i1 in range(n1):")
        body.append("            for i2 in range(n2):")
        # hoist the row of every operand: the inner loop then walks 1-D views with a step of
        # 0 (broadcast) or 1, which keeps the index arithmetic out of the hot loop
        body.append("                o_row = out[i0, i1, i2]")
        for i, k in enumerate(kinds):
            if k == "a":
                body.append(f"                r{i} = a{i}[i0 * m{i}[0], i1 * m{i}[1], "
                            f"i2 * m{i}[2]]")
                body.append(f"                s{i} = m{i}[3]")
        body.append("                for i3 in range(n3):")
        for i, k in enumerate(kinds):
            if k == "a":
                body.append(f"                    {OPERAND_NAMES[i]} = r{i}[i3 * s{i}]")
        body.append(f"                    o_row[i3] = {expr}")
    src = (HEADER + _decorator(layout == "p") + f"def kernel({', '.join(names)}):\n"
           + "\n".join(body) + "\n")
    return src, "kernel", signature, what


def _broadcast_loops(expr: str, kinds: tuple) -> list:
    """Layout ``"b"``'s loops: the outer three dimensions pick each input's row (index 0 where
    it broadcasts), and the inner loop reads ``"a"`` rows element by element and ``"i"`` inputs
    as one value: unit steps over C-contiguous rows, which LLVM vectorizes (the strided layout's
    runtime steps of 0 or 1 keep its inner loop scalar)."""
    arrays = [i for i, k in enumerate(kinds) if k in "ai"]
    lines = ["    n0, n1, n2, n3 = out.shape"]
    lines += [f"    m{i} = (" + ", ".join(f"1 if a{i}.shape[{d}] != 1 else 0" for d in range(3))
              + ")" for i in arrays]
    lines += ["    for i0 in range(n0):", "        for i1 in range(n1):",
              "            for i2 in range(n2):", "                o_row = out[i0, i1, i2]"]
    for i in arrays:
        row = f"a{i}[i0 * m{i}[0], i1 * m{i}[1], i2 * m{i}[2]]"
        lines.append(f"                r{i} = {row}" if kinds[i] == "a" else
                     f"                {OPERAND_NAMES[i]} = {row}[0]")
    lines.append("                for i3 in range(n3):")
    lines += [f"                    {OPERAND_NAMES[i]} = r{i}[i3]" for i in arrays
              if kinds[i] == "a"]
    lines += _reads_of_out(kinds, "o_row", 20, index="i3")
    lines.append(f"                    o_row[i3] = {expr}")
    return lines


def _reads_of_out(kinds: tuple, out_name: str, indent: int, index: str = "i") -> list:
    """The lines that read each ``"o"`` operand (the output itself) at ``index``."""
    return [f"{' ' * indent}{OPERAND_NAMES[i]} = {out_name}[{index}]"
            for i, k in enumerate(kinds) if k == "o"]


def whole_blocks_only(expr: str) -> bool:
    """Whether ``expr``'s threaded flat kernel covers whole ``BLOCK``s only, leaving the tail to
    its caller (the ``prange`` kernel of a transcendental; the worker-pool one covers all)."""
    return is_heavy(expr) and not worker_pool.AVAILABLE


def _scalar_word(type_name: str, word: int) -> str:
    """How a slice kernel reads a scalar from word ``word`` of its row (floats travel as float64
    bits, integers and booleans as int64)."""
    if type_name.startswith("float"):
        return f"numba.{type_name}(values[{word}])"
    if type_name == "bool":
        return f"words[{word}] != 0"
    return f"numba.{type_name}(words[{word}])"


def np_dtype(type_name: str) -> str:
    """The NumPy dtype a generated kernel's source names for a kernel type name."""
    return "np.bool_" if type_name == "bool" else f"np.{type_name}"


# names the driver and slice kernel of ``pooled_kernel`` use themselves
_POOLED_LOCALS = frozenset(("row", "words", "values", "start", "n", "end", "slices", "step",
                            "rows", "s"))


def pooled_kernel(args: list, slice_loop: list, blocked: bool = False, tail: list = (),
                  decorator: str | None = None, align: int = BLOCK) -> str:
    """Source of a threaded flat kernel on OpenBLAS's workers (see ``worker_pool``).

    ``args`` are the kernel's ``(name, type, kind)`` in argument order, kind ``"slice"`` (1-D
    contiguous arrays of one length, which the slices share out), ``"whole"`` (a 1-D contiguous
    array every slice reads whole) or ``"scalar"``. The driver ``kernel(*args)`` writes one row
    of int64 words per slice, [start, stop, each argument (arrays by address, a whole array's
    length after it, scalars by value)], and ``slice_kernel`` runs ``slice_loop`` (lines indented
    4) with every argument under its own name, sliced arrays as views of the slice's ``n``
    elements from ``start``. Slices start at multiples of ``align`` elements; with ``blocked``
    they cover whole ``BLOCK``s only and the driver then runs ``tail`` over ``range(end, n)``.
    Both functions take ``decorator`` (default: the elementwise kernels' flags).
    """
    clash = _POOLED_LOCALS.intersection(name for name, _, _ in args)
    if clash:
        raise ValueError(f"pooled_kernel: argument names {sorted(clash)} are the kernel's own")
    body, fill, word = [], [], 2
    for name, type_name, kind in args:
        if kind == "scalar":
            body.append(f"    {name} = {_scalar_word(type_name, word)}")
            store = "values" if type_name.startswith("float") else "rows"
            fill.append(f"        {store}[s, {word}] = {name}")
        elif kind == "slice":
            body.append(f"    {name} = numba.carray(pointer(words[{word}] + start * "
                        f"{np.dtype(type_name).itemsize}), n, {np_dtype(type_name)})")
            fill.append(f"        rows[s, {word}] = {name}.ctypes.data")
        else:
            body.append(f"    {name} = numba.carray(pointer(words[{word}]), words[{word + 1}], "
                        f"{np_dtype(type_name)})")
            fill.append(f"        rows[s, {word}] = {name}.ctypes.data")
            word += 1
            fill.append(f"        rows[s, {word}] = {name}.shape[0]")
        word += 1
    first_sliced = next(name for name, _, kind in args if kind == "slice")
    head = [f"    words = numba.carray(row, {word}, np.int64)",
            f"    values = numba.carray(row, {word}, np.float64)",
            "    start = words[0]",
            "    n = words[1] - start"]
    driver = [f"    n = {first_sliced}.shape[0]",
              f"    end = n - n % {BLOCK}" if blocked else "    end = n",
              "    slices = slice_count()",
              f"    step = (-(-end // slices) + {align - 1}) // {align} * {align}",
              f"    rows = np.empty((slices, {word}), np.int64)",
              "    values = rows.view(np.float64)",
              "    for s in range(slices):",
              "        rows[s, 0] = min(s * step, end)",
              "        rows[s, 1] = min(s * step + step, end)",
              *fill,
              "    run_slices(slice_kernel, rows)",
              *(tail if blocked else ())]
    names = ", ".join(name for name, _, _ in args)
    decorator = decorator or _decorator()
    return (HEADER
            + "from dynagrad.kernels.cpu.worker_pool import pointer, run_slices, slice_count\n\n"
            + decorator + "def slice_kernel(row):\n" + "\n".join(head + body + slice_loop)
            + "\n\n\n" + decorator + f"def kernel({names}):\n" + "\n".join(driver) + "\n")


def _pooled_elementwise(expr: str, kinds: tuple, in_types: tuple, out_type: str,
                        params: tuple) -> str:
    """``elementwise``'s threaded flat kernel on OpenBLAS's workers."""
    args = [(f"a{i}", t, "slice" if k == "a" else "scalar")
            for i, (k, t) in enumerate(zip(kinds, in_types)) if k != "o"]
    args += [(name, t, "scalar") for name, t in params] + [("out", out_type, "slice")]
    arrays = [i for i, k in enumerate(kinds) if k == "a"]
    scalars = [f"    {OPERAND_NAMES[i]} = a{i}" for i, k in enumerate(kinds) if k == "s"]
    elements = ["    for i in range(end, n):" if is_heavy(expr) else "    for i in range(n):",
                *(f"        {OPERAND_NAMES[i]} = a{i}[i]" for i in arrays),
                *_reads_of_out(kinds, "out", 8),
                f"        out[i] = {expr}"]
    if not is_heavy(expr):
        return pooled_kernel(args, scalars + elements)
    # whole blocks of BLOCK elements: a fixed trip count lets LLVM run several vectors per
    # iteration, which hides memory latency behind the long dependency chain of a transcendental;
    # the block views keep the loop free of index arithmetic. The driver computes the last
    # n % BLOCK elements (a second inlined copy of the expression in the slice kernel trips a
    # Numba warning).
    blocks = [f"    for block in range(n // {BLOCK}):",
              f"        first = block * {BLOCK}",
              *(f"        b{i} = a{i}[first:first + {BLOCK}]" for i in arrays),
              f"        o_block = out[first:first + {BLOCK}]",
              f"        for i in range({BLOCK}):",
              *(f"            {OPERAND_NAMES[i]} = b{i}[i]" for i in arrays),
              *_reads_of_out(kinds, "o_block", 12),
              f"            o_block[i] = {expr}"]
    return pooled_kernel(args, scalars + blocks, blocked=True, tail=scalars + elements)


def add_rows(dtype: str) -> tuple:
    """``out[r, :] += v`` for every row ``r`` of a C-contiguous ``(R, C)`` array (passed flat) and
    a ``(C,)`` vector: a bias add, threaded on OpenBLAS's workers (needs
    ``worker_pool.AVAILABLE``). A slice may start and end inside a row."""
    loop = ["    cols = v.shape[0]",
            "    col = start % cols",
            "    i = 0",
            "    while i < n:",
            "        m = min(cols - col, n - i)",
            "        o = out[i:i + m]",
            "        b = v[col:col + m]",
            "        for j in range(m):",
            "            o[j] += b[j]",
            "        i += m",
            "        col = 0"]
    source = pooled_kernel([("out", dtype, "slice"), ("v", dtype, "whole")], loop)
    signature = _sig(_arr(dtype, 1, True), _arr(dtype, 1, True, readonly=True))
    return source, "kernel", signature, f"add_rows {dtype}"


def reduce(init: str, combine: str, final: str, in_type: str, acc_type: str, out_type: str) -> tuple:
    """Reduce the middle axis of a contiguous ``(O, R, I)`` array into ``(O, I)``.

    ``combine`` is a statement updating ``acc`` from ``v``; ``final`` maps ``acc`` (and ``R``) to out.
    """
    acc_np = np_dtype(acc_type)
    src = HEADER + _decorator(reassociate=True) + f"""\
def kernel(x, out):
    O, R, I = x.shape
    if I == 1:
        for o in range(O):
            acc = {acc_np}({init})
            for r in range(R):
                v = x[o, r, 0]
                {combine}
            out[o, 0] = {final}
    else:
        accs = np.empty(I, dtype={acc_np})
        for o in range(O):
            for i in range(I):
                accs[i] = {init}
            for r in range(R):
                for i in range(I):
                    acc = accs[i]
                    v = x[o, r, i]
                    {combine}
                    accs[i] = acc
            for i in range(I):
                acc = accs[i]
                out[o, i] = {final}
"""
    sig = _sig(_arr(in_type, 3, True, True), _arr(out_type, 2, True))
    return src, "kernel", sig, f"reduce[{combine}] {in_type}->{out_type}"


def reduce_rows_parallel(init: str, combine: str, final: str, in_type: str, acc_type: str,
                         out_type: str) -> tuple:
    """Fold each ``width``-element row of a flat contiguous array ``x`` into ``out[o]``, rows
    split over threads (the first level of a two-level reduction of one large array):
    ``kernel(x, width, out)``. Each row is folded by the same code whatever the thread count, so
    the result does not depend on it."""
    pooled = worker_pool.AVAILABLE
    # (``seg``, not ``row``: the slice kernel's own argument is ``row``, see _POOLED_LOCALS)
    fold = ["        first = (start + o) * width" if pooled else "        first = o * width",
            "        seg = x[first:first + width]",
            f"        acc = {np_dtype(acc_type)}({init})",
            "        for r in range(width):",
            "            v = seg[r]",
            f"            {combine}",
            f"        out[o] = {final}"]
    if pooled:  # a slice's rows are out[start:start + n]
        src = pooled_kernel([("x", in_type, "whole"), ("width", "int64", "scalar"),
                             ("out", out_type, "slice")], ["    for o in range(n):"] + fold,
                            decorator=_decorator(reassociate=True), align=1)
    else:
        src = (HEADER + _decorator(parallel=True, reassociate=True)
               + "def kernel(x, width, out):\n    for o in numba.prange(out.shape[0]):\n"
               + "\n".join(fold) + "\n")
    sig = _sig(_arr(in_type, 1, True, True), "int64", _arr(out_type, 1, True))
    return src, "kernel", sig, f"reduce_rows_parallel[{combine}] {in_type}->{out_type}"


def arg_reduce(better: str, in_type: str) -> tuple:
    """Index of the first best element along the middle axis of ``(O, R, I)`` (argmax/argmin).

    ``better`` is a condition on ``v`` (candidate) and ``best`` that says ``v`` wins.
    """
    src = HEADER + _decorator() + f"""\
def kernel(x, out):
    O, R, I = x.shape
    if I == 1:
        for o in range(O):
            row = x[o, :, 0]
            best = row[0]
            idx = 0
            for r in range(1, R):
                v = row[r]
                if {better}:
                    best = v
                    idx = r
            out[o, 0] = idx
        return
    # along an outer dim: walk the rows in order, each column keeping its best so far (selects
    # over contiguous rows vectorize; a walk down each column touched a new line per element)
    bests = np.empty(I, x.dtype)
    for o in range(O):
        bests[:] = x[o, 0]
        idx_row = out[o]
        idx_row[:] = 0
        for r in range(1, R):
            row = x[o, r]
            for i in range(I):
                v = row[i]
                best = bests[i]
                win = {better}
                bests[i] = v if win else best
                idx_row[i] = r if win else idx_row[i]
"""
    sig = _sig(_arr(in_type, 3, True, True), _arr("int64", 2, True))
    return src, "kernel", sig, f"arg_reduce[{better}] {in_type}"


def scan(combine: str, dtype: str) -> tuple:
    """Inclusive scan along the middle axis of ``(O, R, I)``: ``out[:, r] = combine(out[:, r-1], x)``."""
    src = HEADER + _decorator() + f"""\
def kernel(x, out):
    O, R, I = x.shape
    for o in range(O):
        for i in range(I):
            acc = x[o, 0, i]
            out[o, 0, i] = acc
            for r in range(1, R):
                v = x[o, r, i]
                acc = {combine}
                out[o, r, i] = acc
"""
    sig = _sig(_arr(dtype, 3, True, True), _arr(dtype, 3, True))
    return src, "kernel", sig, f"scan[{combine}] {dtype}"


def top_rows(dtype: str) -> tuple:
    """The indices of the ``k`` best entries of each row of a contiguous ``(O, R)`` array, best
    first: ``kernel(x, largest, out)`` with ``out`` of shape ``(O, k)``. The order is the stable
    sort's (NaN largest, ties by position): a row's candidates arrive in position order, so a
    new one passes a kept one only on a strictly better value. Each row keeps its k best sorted
    in a small buffer; most candidates lose to the worst kept one in one comparison."""
    src = HEADER + _decorator() + """\
def kernel(x, largest, out):
    O, R = x.shape
    k = out.shape[1]
    best = np.empty(k, dtype=x.dtype)
    for o in range(O):
        row = x[o]
        kept = out[o]
        n = 0
        for r in range(R):
            v = row[r]
            if n == k:
                if not ranks_before(v, best[k - 1], largest):
                    continue
                n -= 1
            p = n
            while p > 0 and ranks_before(v, best[p - 1], largest):
                best[p] = best[p - 1]
                kept[p] = kept[p - 1]
                p -= 1
            best[p] = v
            kept[p] = r
            n += 1
"""
    sig = _sig(_arr(dtype, 2, True, True), types.boolean, _arr("int64", 2, True))
    return src, "kernel", sig, f"top_rows {dtype}"


COPY_TILE = 16  # a transposing copy moves tiles of this many elements square


def strided_copy(dtype: str) -> tuple:
    """``out = src`` for a C-contiguous ``out`` of at most 4 dims, from anywhere in ``span``.

    ``span`` is a 1-D view of the source's memory from its first element; ``shape``, ``src_step``
    and ``out_step`` (int64[4], in elements) describe the four loop dims. Where
    ``src_step[3] == 1`` each ``(i0, i1, i2)`` copies one contiguous row, a vectorized loop;
    otherwise ``src_step[2] == 1`` and ``out_step[3] == 1`` (a transpose) and the copy runs in
    ``COPY_TILE``-square tiles, small enough that their source and output lines both stay in
    L1 (larger tiles ran slower). Work items ``[lo, hi)`` are rows, or strips of ``COPY_TILE``
    along dim 2, in loop order, so that threads can share them out. Rows and tile columns are
    taken as views first: indexing them with a loop counter that cannot be negative keeps the
    index free of Python's wraparound, which slowed short rows. The caller copies every dtype
    of one size through one integer type.
    """
    src = HEADER + _decorator() + f"""\
def kernel(span, shape, src_step, out_step, lo, hi, out):
    n1, n2, n3 = shape[1], shape[2], shape[3]
    s0, s1, s2, s3 = src_step[0], src_step[1], src_step[2], src_step[3]
    o0, o1, o2 = out_step[0], out_step[1], out_step[2]
    if s3 == 1:
        i2 = lo % n2  # then counted on: three divisions per short row took half its time
        i1 = lo // n2 % n1
        i0 = lo // (n2 * n1)
        for _ in range(lo, hi):
            s = i0 * s0 + i1 * s1 + i2 * s2
            o = i0 * o0 + i1 * o1 + i2 * o2
            row = span[s:s + n3]
            o_row = out[o:o + n3]
            for k in range(n3):
                o_row[k] = row[k]
            i2 += 1
            if i2 == n2:
                i2 = 0
                i1 += 1
                if i1 == n1:
                    i1 = 0
                    i0 += 1
        return
    strips = (n2 + {COPY_TILE - 1}) // {COPY_TILE}
    for item in range(lo, hi):
        jb = item % strips * {COPY_TILE}
        i1 = item // strips % n1
        i0 = item // (strips * n1)
        je = min(jb + {COPY_TILE}, n2)
        s = i0 * s0 + i1 * s1
        o = i0 * o0 + i1 * o1
        for kb in range(0, n3, {COPY_TILE}):
            ke = min(kb + {COPY_TILE}, n3)
            for j in range(jb, je):
                column = span[s + j + kb * s3:s + j + (ke - 1) * s3 + 1:s3]
                o_row = out[o + j * o2 + kb:o + j * o2 + ke]
                for k in range(ke - kb):
                    o_row[k] = column[k]
"""
    steps = _arr("int64", 1, True, True)
    sig = _sig(_arr(dtype, 1, True, True), steps, steps, steps, types.int64, types.int64,
               _arr(dtype, 1, True))
    return src, "kernel", sig, f"strided_copy {dtype}"


def gather(dtype: str) -> tuple:
    """``out[o, r, i] = x[o, index[o, r, i], i]`` (indices validated by the caller)."""
    src = HEADER + _decorator() + """\
def kernel(x, index, out):
    O, R, I = out.shape
    if I == 1:  # along the last dim: one loop over rows of views, not 3-D indexing per element
        for o in range(O):
            x_row = x[o, :, 0]
            i_row = index[o, :, 0]
            o_row = out[o, :, 0]
            for r in range(R):
                o_row[r] = x_row[i_row[r]]
        return
    for o in range(O):
        for r in range(R):
            for i in range(I):
                out[o, r, i] = x[o, index[o, r, i], i]
"""
    sig = _sig(_arr(dtype, 3, False, True), _arr("int64", 3, False, True), _arr(dtype, 3, True))
    return src, "kernel", sig, f"gather {dtype}"


def scatter(dtype: str, accumulate: bool) -> tuple:
    """``out[o, index[o, r, i], i] (+)= src[o, r, i]`` in place (indices validated by the caller)."""
    op = "+=" if accumulate else "="
    src = HEADER + _decorator() + f"""\
def kernel(out, index, src):
    O, R, I = index.shape
    if I == 1:  # along the last dim (see gather)
        for o in range(O):
            o_row = out[o, :, 0]
            i_row = index[o, :, 0]
            s_row = src[o, :, 0]
            for r in range(R):
                o_row[i_row[r]] {op} s_row[r]
        return
    for o in range(O):
        for r in range(R):
            for i in range(I):
                out[o, index[o, r, i], i] {op} src[o, r, i]
"""
    sig = _sig(_arr(dtype, 3, True), _arr("int64", 3, False, True), _arr(dtype, 3, False, True))
    return src, "kernel", sig, f"scatter{'_add' if accumulate else ''} {dtype}"


def index_select(dtype: str) -> tuple:
    """``out[o, k, i] = x[o, index[k], i]`` (indices validated by the caller)."""
    src = HEADER + _decorator() + """\
def kernel(x, index, out):
    O, K, I = out.shape
    if I == 1:  # along the last dim (see gather)
        for o in range(O):
            x_row = x[o, :, 0]
            o_row = out[o, :, 0]
            for k in range(K):
                o_row[k] = x_row[index[k]]
        return
    for o in range(O):
        for k in range(K):
            # row views: the copy loop indexes from 0 and vectorizes (x[o, j, i] took a
            # wraparound check per element and stayed scalar)
            x_row = x[o, index[k]]
            o_row = out[o, k]
            for i in range(I):
                o_row[i] = x_row[i]
"""
    # x C-contiguous (the caller copies any other): a row of a strided x has a runtime step and
    # its copy stays scalar
    sig = _sig(_arr(dtype, 3, True, True), _arr("int64", 1, False, True), _arr(dtype, 3, True))
    return src, "kernel", sig, f"index_select {dtype}"


def masked_rows(dtype: str) -> tuple:
    """``out = x[mask]`` over rows: ``x (N, R)``, ``mask (N,)`` bool, ``out (count, R)`` with
    ``count`` the mask's true entries (``count >= 1``). Single elements (``R == 1``) are stored
    whatever the mask, then the write position advances by the mask: no branch to mispredict
    on a random mask (NumPy's boolean index is slow there)."""
    src = HEADER + _decorator() + """\
def kernel(x, mask, out):
    N, R = x.shape
    last = out.shape[0] - 1
    n = 0
    if R == 1:
        xf = x.reshape(N)
        of = out.reshape(out.shape[0])
        for i in range(N):
            j = min(n, last)  # past the last true entry: rewrite that slot with its own value
            of[j] = xf[i] if mask[i] else of[j]
            n += np.int64(mask[i])
        return
    for i in range(N):
        if mask[i]:
            x_row = x[i]
            o_row = out[n]
            for k in range(R):
                o_row[k] = x_row[k]
            n += 1
"""
    sig = _sig(_arr(dtype, 2, True, True), _arr("bool", 1, True, True), _arr(dtype, 2, True))
    return src, "kernel", sig, f"masked_rows {dtype}"


def masked_rows_adjoint(dtype: str) -> tuple:
    """The adjoint of ``masked_rows``: ``out[mask] = g``, zeros elsewhere (``out (N, R)``,
    ``g (count, R)``, ``count >= 1``); branch-free for single elements as there."""
    src = HEADER + _decorator() + """\
def kernel(g, mask, out):
    N, R = out.shape
    last = g.shape[0] - 1
    n = 0
    if R == 1:
        gf = g.reshape(g.shape[0])
        of = out.reshape(N)
        for i in range(N):
            v = gf[min(n, last)]
            of[i] = v if mask[i] else 0
            n += np.int64(mask[i])
        return
    for i in range(N):
        o_row = out[i]
        if mask[i]:
            g_row = g[n]
            for k in range(R):
                o_row[k] = g_row[k]
            n += 1
        else:
            for k in range(R):
                o_row[k] = 0
"""
    sig = _sig(_arr(dtype, 2, True, True), _arr("bool", 1, True, True), _arr(dtype, 2, True))
    return src, "kernel", sig, f"masked_rows_adjoint {dtype}"


def index_add(dtype: str) -> tuple:
    """``out[o, index[k], i] += src[o, k, i]`` in place (indices validated by the caller)."""
    src = HEADER + _decorator() + """\
def kernel(out, index, src):
    O, K, I = src.shape
    if I == 1:  # along the last dim (see gather)
        for o in range(O):
            o_row = out[o, :, 0]
            s_row = src[o, :, 0]
            for k in range(K):
                o_row[index[k]] += s_row[k]
        return
    for o in range(O):
        for k in range(K):
            o_row = out[o, index[k]]  # (row views: see index_select)
            s_row = src[o, k]
            for i in range(I):
                o_row[i] += s_row[i]
"""
    sig = _sig(_arr(dtype, 3, True), _arr("int64", 1, False, True), _arr(dtype, 3, True, True))
    return src, "kernel", sig, f"index_add {dtype}"  # (src C-contiguous: see index_select)
