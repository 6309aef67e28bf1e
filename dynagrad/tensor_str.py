"""PyTorch-style printing: ``tensor([1., 2.], requires_grad=True)``.

A port of ``torch._tensor_str`` (default print options): one formatter per tensor picks integer,
fixed or scientific notation from the (summarised) values and right-aligns every element to a common
width, so columns line up exactly as PyTorch prints them. ``set_printoptions`` changes the options
(the module constants below) as torch's does.

Example:
    >>> import dynagrad as dg
    >>> dg.tensor([0.1098, -1.0241])
    tensor([ 0.1098, -1.0241])
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes

PRECISION = 4      # digits after the point
THRESHOLD = 1000   # more elements than this are summarised with "..."
EDGEITEMS = 3      # elements kept at each end of a summarised dimension
LINEWIDTH = 80
SCI_MODE = None    # True / False force or forbid scientific notation; None: the values decide

# set_printoptions(profile=...): (precision, threshold, edgeitems, linewidth), as PyTorch's
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``: ``profile`` ("default", "short",
    "full") first, then each option given; ``sci_mode`` True/False forces or forbids
    scientific notation, None (also when not passed) lets the values decide.

    Example:
        >>> import dynagrad as dg
        >>> dg.set_printoptions(precision=2)
        >>> dg.tensor([1.12345])
        tensor([1.12])
        >>> dg.set_printoptions(profile="default")
    """
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
    SCI_MODE = sci_mode


class _Formatter:
    """Chooses the notation and the common width for every element of one tensor."""

    def __init__(self, arr: np.ndarray):
        self.floating = arr.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals.astype(np.float64))
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = (bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
                         if SCI_MODE is None else SCI_MODE)
        for v in vals.tolist():
            if self.sci_mode:
                width = len(f"{v:.{PRECISION}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{PRECISION}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value) -> str:
        if not self.floating:
            ret = f"{value}"
        elif self.sci_mode:
            ret = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            ret = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                ret += "."
        else:
            ret = f"{value:.{PRECISION}f}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """PyTorch's complex printing: the real and the imaginary parts each have their own formatter
    (``1.5000+2.j``); ``max_width`` counts both parts and the ``j``."""

    def __init__(self, arr: np.ndarray):
        self.real, self.imag = _Formatter(arr.real), _Formatter(arr.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _formatter(arr: np.ndarray):
    return _ComplexFormatter(arr) if arr.dtype.kind == "c" else _Formatter(arr)


def _summarized(arr: np.ndarray) -> np.ndarray:
    """Only the elements a summarised print shows (the formatter is built from these)."""
    if arr.ndim == 0:
        return arr
    if arr.shape[0] > 2 * EDGEITEMS:
        arr = np.concatenate([arr[:EDGEITEMS], arr[-EDGEITEMS:]])
    if arr.ndim == 1:
        return arr
    return np.stack([_summarized(row) for row in arr])


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.max_width + 2)))
    if summarize and arr.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in arr[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    n = arr.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        rows = ([_array_str(arr[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
                + [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)])
    else:
        rows = [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    """Append ``, suffix`` items, wrapping to a new line past the line width."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    return "".join(parts) + ")"


def tensor_repr(t) -> str:
    """``repr`` of a dynagrad Tensor, character for character as PyTorch prints the same tensor."""
    prefix = "tensor("
    indent = len(prefix)
    arr = t._data
    suffixes = []
    if type(arr) is not np.ndarray:  # a CUDA buffer: print a host copy, and say where it lives
        arr = arr.to_host()
        suffixes.append(f"device='{t.device}'")
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t.dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={t.dtype!r}")
        body = "[]"
    else:
        if t.dtype not in (dtypes.get_default_dtype(), dtypes.default_complex_dtype(),
                           dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={t.dtype!r}")
        summarize = arr.size > THRESHOLD
        fmt = _formatter(_summarized(arr) if summarize else arr)
        body = _array_str(arr, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
