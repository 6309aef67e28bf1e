"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``, as PyTorch's.

With anomaly mode on (and ``check_nan``, the default), the backward pass checks each node's
gradients as it produces them and raises a RuntimeError naming the first node that returned NaN,
instead of letting NaN spread silently into every ``.grad``. The engine reads the flags once per
backward pass; with the mode off a node costs one test of a local boolean. (Unlike PyTorch, no
traceback of the forward call is kept: recording one would cost every op its stack walk.)

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([0.0, 1.0], requires_grad=True)
    >>> with dg.autograd.set_detect_anomaly(True):
    ...     dg.sqrt(x).mul(0).sum().backward()
    Traceback (most recent call last):
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
"""
from __future__ import annotations

import functools
import warnings

# [enabled, check_nan]: read by the engine at the start of each backward pass
ANOMALY = [False, True]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return ANOMALY[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN."""
    return ANOMALY[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``check_nan``: also check gradients for NaN)."""
    ANOMALY[0], ANOMALY[1] = bool(enabled), bool(check_nan)


class set_detect_anomaly:
    """Set anomaly detection to ``mode`` now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = tuple(ANOMALY)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        ANOMALY[0], ANOMALY[1] = self._prev
        return False


class detect_anomaly:
    """A context manager (or decorator) that turns anomaly detection on inside it; it warns that
    the mode slows training, as PyTorch does."""

    def __init__(self, check_nan: bool = True):
        self._check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = tuple(ANOMALY)
        set_anomaly_enabled(True, self._check_nan)
        return self

    def __exit__(self, *exc):
        ANOMALY[0], ANOMALY[1] = self._prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self._check_nan):
                return func(*args, **kwargs)
        return wrapper


def check_gradients(node, grads) -> None:
    """Raise if any gradient ``node`` returned holds NaN (the engine's check in anomaly mode)."""
    for i, g in enumerate(grads):
        if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")
