"""PyTorch-style printing: ``tensor([1., 2.], requires_grad=True)``.

A port of ``torch._tensor_str`` (with its print options: ``set_printoptions``): one formatter per tensor picks integer,
fixed or scientific notation from the (summarised) values and right-aligns every element to a common
width, so columns line up exactly as PyTorch prints them.

Example:
    >>> import dynagrad as dg
    >>> dg.tensor([0.1098, -1.0241])
    tensor([ 0.1098, -1.0241])
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import dtypes


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4          # digits after the point
    threshold: float = 1000     # more elements than this are summarised with "..."
    edgeitems: int = 3          # elements kept at each end of a summarised dimension
    linewidth: int = 80         # characters per line
    sci_mode: bool | None = None  # force (True) or forbid (False) scientific notation; None: auto


PRINT_OPTS = _PrintOptions()

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
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


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
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        precision = PRINT_OPTS.precision
        for v in vals.tolist():
            if self.sci_mode:
                width = len(f"{v:.{precision}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value) -> str:
        if not self.floating:
            ret = f"{value}"
        elif self.sci_mode:
            ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            ret = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                ret += "."
        else:
            ret = f"{value:.{PRINT_OPTS.precision}f}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(arr: np.ndarray) -> np.ndarray:
    """Only the elements a summarised print shows (the formatter is built from these)."""
    if arr.ndim == 0:
        return arr
    edge = PRINT_OPTS.edgeitems
    if arr.shape[0] > 2 * edge:
        arr = np.concatenate([arr[:edge], arr[-edge:]])
    if arr.ndim == 1:
        return arr
    return np.stack([_summarized(row) for row in arr])


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    edge = PRINT_OPTS.edgeitems
    if summarize and arr.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in arr[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-edge:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    n, edge = arr.shape[0], PRINT_OPTS.edgeitems
    if summarize and n > 2 * edge:
        rows = ([_array_str(arr[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                + [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)])
    else:
        rows = [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    """Append ``, suffix`` items, wrapping to a new line past the line width."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS.linewidth:
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
        if t.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={t.dtype!r}")
        summarize = arr.size > PRINT_OPTS.threshold
        fmt = _Formatter(_summarized(arr) if summarize else arr)
        body = _array_str(arr, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
