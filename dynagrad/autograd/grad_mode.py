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
import inspect

# One flag read on every op: a one-element list is the cheapest mutable global to test.
GRAD_ENABLED = [True]
INFERENCE = [False]


def is_grad_enabled() -> bool:
    return GRAD_ENABLED[0]


def is_inference_mode_enabled() -> bool:
    return INFERENCE[0]


def _decorate(make_mode, func):
    """Wrap ``func`` so each call runs inside a fresh ``make_mode()`` context.

    The wrapper is a plain function, so on a class it binds ``self`` like any method. A
    generator function gets a generator wrapper that enters the mode around each resume of the
    inner generator only (the caller's code between ``next`` calls runs in the caller's mode),
    as PyTorch does.
    """
    if not callable(func):
        raise TypeError(f"a grad-mode decorator wraps a function, got {type(func).__name__}")
    if inspect.isgeneratorfunction(func):
        @functools.wraps(func)
        def generator_wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with make_mode():
                    response = next(gen)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with make_mode():
                            gen.close()
                        raise
                    except BaseException as exc:  # noqa: BLE001 -- thrown in by the caller: pass it on
                        with make_mode():
                            response = gen.throw(exc)
                    else:
                        with make_mode():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return generator_wrapper

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with make_mode():
            return func(*args, **kwargs)
    return wrapper


class _Mode:
    """Base: set the flag on enter, restore on exit; usable as ``@decorator`` or ``@decorator()``.

    Each decorated call enters a fresh instance (an instance keeps the state it restores, so
    sharing one would break recursion and threads).
    """

    def __new__(cls, func=None):
        if func is not None:  # bare ``@no_grad``: the result is the wrapped function
            return _decorate(cls, func)
        return super().__new__(cls)

    def _target(self) -> bool:
        raise NotImplementedError

    def _fresh(self) -> _Mode:
        return type(self)()

    def __enter__(self):
        self._prev = (GRAD_ENABLED[0], INFERENCE[0])
        GRAD_ENABLED[0] = self._target()
        return self

    def __exit__(self, *exc):
        GRAD_ENABLED[0], INFERENCE[0] = self._prev
        return False

    def __call__(self, func):
        return _decorate(self._fresh, func)


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

    def __new__(cls, mode=True):
        if callable(mode):  # bare ``@inference_mode``
            return _decorate(cls, mode)
        return object.__new__(cls)

    def __init__(self, mode=True):
        self._on = bool(mode)

    def _target(self) -> bool:
        return not self._on

    def _fresh(self) -> inference_mode:
        return inference_mode(self._on)

    def __enter__(self):
        super().__enter__()
        INFERENCE[0] = self._on
        return self


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
        return _decorate(lambda: set_grad_enabled(self._mode), func)
