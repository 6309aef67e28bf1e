"""Data-dependent control flow with PyTorch's names: ``cond`` and ``while_loop``.

dynagrad runs eagerly, so both are what their names say: ``cond`` calls one branch,
``while_loop`` loops in Python; gradients flow through the ops the taken path ran. The rules
PyTorch checks when it traces (each body returns as many values as it carries, each with the
same shape and dtype) are checked on the values the loop actually produces.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([1.0, -2.0])
    >>> dg.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,)).tolist()
    [0.0, -3.0]
"""
from __future__ import annotations

from collections.abc import Callable

from .tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred, what: str) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got "
                               f"{pred}.")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {pred!r}.")


def cond(pred, true_fn: Callable, false_fn: Callable, operands: tuple | list = ()):
    """``true_fn(*operands)`` if ``pred`` holds, else ``false_fn(*operands)``.

    ``pred`` is a bool, a number or a one-element tensor.

    Example:
        >>> import dynagrad as dg
        >>> dg.cond(False, lambda t: t + 1, lambda t: t - 1, [dg.zeros(2)]).tolist()
        [-1.0, -1.0]
    """
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands!r}.")
    branch = true_fn if _truth(pred, "pred") else false_fn
    return branch(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: tuple | list):
    """Repeat ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; returns the
    final ``carried`` as a tuple.

    ``body_fn`` returns as many values as it receives, each tensor with the shape and dtype of
    the one it replaces.

    Example:
        >>> import dynagrad as dg
        >>> i, x = dg.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
        ...                      (dg.tensor(0), dg.ones(2)))
        >>> i.item(), x.tolist()
        (3, [8.0, 8.0])
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got "
                           f"{type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "cond_fn's output"):
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        _check_carried(out, carried)
        carried = out
    return carried


def _check_carried(out: tuple, carried: tuple) -> None:
    if len(out) != len(carried):
        raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same number of "
                           f"outputs but got {len(out)} and {len(carried)}")
    for k, (new, old) in enumerate(zip(out, carried)):
        if isinstance(old, Tensor) and (not isinstance(new, Tensor) or new.shape != old.shape
                                        or new.dtype is not old.dtype):
            got = (f"{tuple(new.shape)} {new.dtype}" if isinstance(new, Tensor)
                   else type(new).__name__)
            raise RuntimeError(f"Expected body_fn_output[{k}] to have the shape and dtype of "
                               f"carried_inputs[{k}] ({tuple(old.shape)} {old.dtype}), got {got}")
