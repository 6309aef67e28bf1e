"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each works as a context manager and as a decorator, like PyTorch's.

Example:
    >>> import dynagrad as dg
    >>> x = dg.ones(2, requires_grad=True)
    >>> with dg.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
"""
from __future__ import annotations

import functools

# One flag read on every op: a one-element list is the cheapest mutable global to test.
GRAD_ENABLED = [True]
INFERENCE = [False]


def is_grad_enabled() -> bool:
    return GRAD_ENABLED[0]


def is_inference_mode_enabled() -> bool:
    return INFERENCE[0]


class _Mode:
    """Base: set the flag on enter, restore on exit; usable as ``@decorator`` or ``@decorator()``."""

    def __init__(self, func=None):
        self._func = func
        if func is not None:
            functools.update_wrapper(self, func)

    def _target(self) -> bool:
        raise NotImplementedError

    def __enter__(self):
        self._prev = (GRAD_ENABLED[0], INFERENCE[0])
        GRAD_ENABLED[0] = self._target()
        return self

    def __exit__(self, *exc):
        GRAD_ENABLED[0], INFERENCE[0] = self._prev
        return False

    def __call__(self, *args, **kwargs):
        if self._func is None:  # used as @mode() around a function
            if kwargs or len(args) != 1 or not callable(args[0]):
                name = type(self).__name__
                raise TypeError(f"{name}() decorates a function: use it as @{name}()")
            return type(self)(args[0])
        with type(self)():
            return self._func(*args, **kwargs)


class no_grad(_Mode):
    """Ops inside record no graph; results do not require grad."""

    def _target(self) -> bool:
        return False


class enable_grad(_Mode):
    """Turn recording back on inside a ``no_grad`` block."""

    def _target(self) -> bool:
        return True


class inference_mode(_Mode):
    """Like ``no_grad``; ``inference_mode(False)`` turns inference mode off and grad mode on (as
    PyTorch's does, even inside ``no_grad``)."""

    def __init__(self, mode=True, func=None):
        if callable(mode):  # bare ``@inference_mode``
            mode, func = True, mode
        self._on = bool(mode)
        super().__init__(func)

    def _target(self) -> bool:
        return not self._on

    def __enter__(self):
        super().__enter__()
        INFERENCE[0] = self._on
        return self

    def __call__(self, *args, **kwargs):
        if self._func is None:  # ``@inference_mode(mode)`` keeps its mode
            return inference_mode(self._on, args[0])
        with inference_mode(self._on):
            return self._func(*args, **kwargs)


class set_grad_enabled:
    """Set grad mode to ``mode`` (takes effect immediately, like PyTorch, and restores on exit)."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._prev = GRAD_ENABLED[0]
        GRAD_ENABLED[0] = self._mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        GRAD_ENABLED[0] = self._prev
        return False

    def __call__(self, func):
        GRAD_ENABLED[0] = self._prev  # as a decorator it changes the mode only during calls

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(self._mode):
                return func(*args, **kwargs)
        return wrapper
