"""Uniform random numbers drawn by a compiled kernel on the CPU, bit for bit NumPy's Philox draws.

NumPy's ``Generator.random`` is slow per float32: a dropout mask spent most of its time drawing.
Philox is counter-based (``kernels.philox`` explains the stream), so this kernel computes whole
4-word blocks straight from the counter, each round's 64 x 64 -> 128-bit products as single
multiplies, the draw is shared among the cores, and the caller moves the generator past the
words used (``stream.advance_state``), as if NumPy had drawn them.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.cpu import philox
    >>> a, b = (np.random.Generator(np.random.Philox(key=3)) for _ in range(2))
    >>> bool((philox.uniform(a, 1000, np.float32) == b.random(1000, np.float32)).all())
    True
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..._runtime.blas_threads import run_split
from .. import philox as stream
from ..cache import _memory, lookup
from .templates import HEADER
from ..cache import compiled_into_kernels

compiled_into_kernels(__name__)  # its code compiles into the kernels importing it

# Repeated draws from this size take the kernel (``random.repeated_uniform``: dropout masks), in
# slices on both cores. Smaller ones stay with NumPy, which is as fast up to ~2^16 once the
# kernel's Python side (the state, the round keys, the state after the draw) is counted.
MIN_DRAWS = 1 << 17
_I64, _I128 = ir.IntType(64), ir.IntType(128)


@intrinsic
def mulhilo(typingctx, a, b):
    """``(high, low)`` 64-bit words of the 128-bit product of two uint64."""
    if a != types.uint64 or b != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        product = builder.mul(builder.zext(args[0], _I128), builder.zext(args[1], _I128))
        high = builder.trunc(builder.lshr(product, _I128(64)), _I64)
        return cgutils.pack_array(builder, [high, builder.trunc(product, _I64)])
    return types.UniTuple(types.uint64, 2)(a, b), codegen


# The kernel writes ``out`` from the stream's state: for float32, a kept high half first (``has``),
# then the low and high halves of the buffered words from ``pos`` on, then of new blocks, each at
# the next counter (the counter steps before each block, as NumPy's Philox does); float64 takes
# whole words. Every element's word and half follow from its index, so blocks are independent.
_SOURCE = HEADER + """\
from dynagrad.kernels.cpu.philox import mulhilo

_LOW = np.uint64(0xFFFFFFFF)
_M0 = np.uint64({mult0})
_M1 = np.uint64({mult1})
_F32_ULP = np.float32(5.9604644775390625e-08)  # 2 ** -24


{blocks}

@numba.njit(inline="always")
def to_float(word, half):
{to_float}


@numba.njit(cache=True, nogil=True, error_model="numpy")
def kernel(out, keys, c0, c1, c2, c3, b0, b1, b2, b3, pos, has, uint):
    n = out.shape[0]
    j = 0
    if {per_word} == 2 and has and n:
        out[0] = to_float(uint, 0)
        j = 1
    buffered = (b0, b1, b2, b3)
    for w in range(pos, 4):
        for half in range({per_word}):
            if j < n:
                out[j] = to_float(buffered[w], half)
                j += 1
    per_block = 4 * {per_word}
    blocks = (n - j + per_block - 1) // per_block
    for t0 in range(0, blocks, {lanes}):
        words = blocks_from(keys, c0, c1, c2, c3, t0)
        at = j + t0 * per_block
        if at + {lanes} * per_block <= n:  # (all but the last group: no bounds tests)
{store_all}
        else:
{store_some}
"""

# Blocks computed together (one block's ten rounds are a chain of dependent multiplies): two
# at a time hide that chain best; one leaves it exposed, four ran slower again.
LANES = 2


def _blocks_source(lanes: int) -> str:
    """``blocks_from(keys, c0, c1, c2, c3, t0)``: the words of blocks ``t0 .. t0 + lanes``, each
    at counter ``c0 + t + 1`` (carried into ``c1``), as one flat tuple."""
    xs = [[f"x{i}_{b}" for i in range(4)] for b in range(lanes)]
    lines = ["@numba.njit(inline=\"always\")", "def blocks_from(keys, c0, c1, c2, c3, t0):"]
    for b in range(lanes):
        x0, x1, x2, x3 = xs[b]
        lines += [f"    {x0} = c0 + np.uint64(t0 + {b + 1})",
                  f"    {x1} = c1 + np.uint64(1) if {x0} < c0 else c1",
                  f"    {x2}, {x3} = c2, c3"]
    lines.append(f"    for r in range({stream.ROUNDS}):")
    for b in range(lanes):
        x0, x1, x2, x3 = xs[b]
        lines += [f"        hi0, lo0 = mulhilo(_M0, {x0})",
                  f"        hi1, lo1 = mulhilo(_M1, {x2})",
                  f"        {x0}, {x1}, {x2}, {x3} = hi1 ^ {x1} ^ keys[r, 0], lo1, "
                  f"hi0 ^ {x3} ^ keys[r, 1], lo0"]
    lines.append("    return (" + ", ".join(x for b in xs for x in b) + ")")
    return "\n".join(lines)


def _stores_source(lanes: int, per_word: int, checked: bool) -> str:
    """The group's stores, element by element (a tuple indexed by a loop variable would not be
    unrolled); ``checked``: each only if it lies below ``n``."""
    lines = []
    for i in range(4 * lanes * per_word):
        store = f"out[at + {i}] = to_float(words[{i // per_word}], {i % per_word})"
        lines += [f"if at + {i} < n:", f"    {store}"] if checked else [store]
    return "\n".join(" " * 12 + line for line in lines)


_TO_FLOAT = {
    # NumPy's next_float: the top 24 of a 32-bit draw; halves: low word first, then high
    # (converted through a signed integer, which x86 converts in one instruction)
    "float32": "    u = (word >> np.uint64(32)) if half else (word & _LOW)\n"
               "    return np.float32(np.int32(u >> np.uint64(8))) * _F32_ULP",
    # next_double: the top 53 bits of a 64-bit draw
    "float64": "    return np.float64(np.int64(word >> np.uint64(11))) * 1.1102230246251565e-16",
}


def _build(dtype: str) -> tuple:
    per_word = 2 if dtype == "float32" else 1
    source = _SOURCE.format(to_float=_TO_FLOAT[dtype], per_word=per_word,
                            mult0=hex(stream.MULTIPLIERS[0]),
                            mult1=hex(stream.MULTIPLIERS[1]),
                            blocks=_blocks_source(LANES), lanes=LANES,
                            store_all=_stores_source(LANES, per_word, False),
                            store_some=_stores_source(LANES, per_word, True))
    u64 = types.uint64
    signature = (types.Array(getattr(types, dtype), 1, "C"), types.Array(u64, 2, "C", True),
                 u64, u64, u64, u64, u64, u64, u64, u64, types.int64, types.int64, u64)
    return source, "kernel", signature, f"philox uniform {dtype} (CPU)"


def uniform(gen: np.random.Generator, n: int, dtype) -> np.ndarray:
    """``gen.random(n, dtype)`` for a Philox ``gen``: the same numbers, and ``gen`` left where
    NumPy would leave it. The draw is split across the cores, each slice starting from the
    state NumPy would have reached at its first element."""
    name = np.dtype(dtype).name
    state = gen.bit_generator.state
    key = ("philox_uniform", name)
    kernel = _memory.get(key) or lookup(key, lambda: _build(name))
    out = np.empty(n, name)
    keys = stream.round_keys(state["state"]["key"])

    def draw(lo: int, hi: int) -> None:
        at = stream.advance_state(state, lo, name) if lo else state
        kernel(out[lo:hi], keys, *stream.kernel_state(at))
    run_split(n, draw)
    gen.bit_generator.state = stream.advance_state(state, n, name)
    return out
