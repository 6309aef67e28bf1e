"""The Philox stream maths both targets share: blocks, round keys, and where a stream stands after
n draws.

dynagrad's generators are NumPy ``Philox`` (4x64, 10 rounds) streams. Philox is counter-based:
the n-th 64-bit word of a stream is a pure function of (key, counter, n), so every GPU thread
computes its own words and a draw of any size runs in parallel, yet lands exactly where a CPU draw
of the same seed would. The host then moves the generator's state past the words used, as if
NumPy had drawn them (``advance_state``).

Uniform floats are NumPy's: float32 ``(u32 >> 8) * 2**-24`` from successive 32-bit halves (low,
then high) of the words, float64 ``(u64 >> 11) * 2**-53`` from whole words. Normal draws use
NumPy's ziggurat, whose rejections consume a data-dependent number of words: they stay on the host.

Example:
    >>> import numpy as np
    >>> state = np.random.Philox(key=5).state
    >>> block([1, 0, 0, 0], [5, 0])[0] == 13535223855206698129  # NumPy's first word for key 5
    True
"""
from __future__ import annotations

import numpy as np

_M64 = (1 << 64) - 1
MULTIPLIERS = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
_BUMP = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
ROUNDS = 10


def block(counter, key) -> list:
    """The four 64-bit words Philox4x64-10 gives for ``counter`` (4 words) and ``key`` (2)."""
    c, k = [int(v) for v in counter], [int(v) for v in key]
    for r in range(ROUNDS):
        if r:
            k = [(k[0] + _BUMP[0]) & _M64, (k[1] + _BUMP[1]) & _M64]
        p0, p1 = MULTIPLIERS[0] * c[0], MULTIPLIERS[1] * c[2]
        c = [(p1 >> 64) ^ c[1] ^ k[0], p1 & _M64, (p0 >> 64) ^ c[3] ^ k[1], p0 & _M64]
    return c


def round_keys(key) -> np.ndarray:
    """The key of every round, ``(ROUNDS, 2)`` uint64 (the kernel reads them, not adds them)."""
    k = [int(key[0]), int(key[1])]
    out = []
    for r in range(ROUNDS):
        if r:
            k = [(k[0] + _BUMP[0]) & _M64, (k[1] + _BUMP[1]) & _M64]
        out.append(k)
    return np.array(out, dtype=np.uint64)


def kernel_state(state: dict) -> tuple:
    """A NumPy Philox ``state`` as the uniform kernels' state arguments: the counter's 4 words,
    the buffered block's 4 words, the buffer position, whether a 32-bit half is kept, and it."""
    u64 = np.uint64
    return (*(u64(c) for c in state["state"]["counter"]), *(u64(b) for b in state["buffer"]),
            np.int64(state["buffer_pos"]), np.int64(state["has_uint32"]), u64(state["uinteger"]))


def advance_state(state: dict, n: int, dtype: str) -> dict:
    """The Philox state after ``n`` uniform draws of ``dtype`` (what NumPy's would be)."""
    ctr = [int(v) for v in state["state"]["counter"]]
    key = state["state"]["key"]
    buf = [int(v) for v in state["buffer"]]
    pos, has, uint = int(state["buffer_pos"]), int(state["has_uint32"]), int(state["uinteger"])
    if dtype == "float32":
        if has and n:
            n, has = n - 1, 0
        words, odd = (n + 1) // 2, n % 2
    else:
        words, odd = n, 0
    last = None
    if words:
        left = 4 - pos
        if words <= left:
            pos += words
        else:
            blocks = (words - left + 3) // 4
            ctr[0] += blocks
            if ctr[0] > _M64:  # carry into the next counter word
                ctr[0] &= _M64
                ctr[1] = (ctr[1] + 1) & _M64
            buf = block(ctr, key)
            pos = words - left - 4 * (blocks - 1)
        last = buf[pos - 1]
    if dtype == "float32" and words:  # NumPy keeps the last word's high half (used if odd)
        has, uint = odd, last >> 32
    return {"bit_generator": "Philox",
            "state": {"counter": np.array(ctr, np.uint64), "key": np.array(key, np.uint64)},
            "buffer": np.array(buf, np.uint64), "buffer_pos": pos, "has_uint32": has,
            "uinteger": uint}
