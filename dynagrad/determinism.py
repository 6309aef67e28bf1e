"""The deterministic-algorithms switch (PyTorch's ``use_deterministic_algorithms``).

On the CPU every dynagrad kernel is deterministic. On CUDA, the accumulating index kernels
(``index_add``, ``scatter_add``/``scatter_reduce``, ``index_put_`` with ``accumulate=True`` and the
backward of ``index_select``/``embedding``/``gather``) use float atomics by default, whose order
varies from run to run; with the switch on they use a fixed order instead (slower). Sums and other
reductions never use atomics.

Example:
    >>> import dynagrad as dg
    >>> dg.use_deterministic_algorithms(True); dg.are_deterministic_algorithms_enabled()
    True
    >>> dg.use_deterministic_algorithms(False)
"""
from __future__ import annotations

_STATE = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make every kernel that could vary between runs use a fixed-order implementation."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: mode must be a bool (got "
                        f"{type(mode).__name__})")
    _STATE["enabled"], _STATE["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _STATE["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _STATE["warn_only"]
