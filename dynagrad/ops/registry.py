"""The op registry: one entry per op, from which the Tensor method and the functional form come.

Example:
    >>> from dynagrad.ops.registry import REGISTRY
    >>> REGISTRY["add"].method, REGISTRY["add"].inplace
    ('add', 'add_')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..tensor import Tensor


@dataclass(frozen=True)
class OpInfo:
    name: str
    fn: Callable
    method: str | None        # Tensor method name, if any
    inplace: str | None       # Tensor in-place method name, if any
    family: str               # elementwise, reduce, movement, indexing, linalg, creation


REGISTRY: dict[str, OpInfo] = {}
FUNCTIONS: dict[str, Callable] = {}   # public functional forms exported as dg.<name>
METHODS: dict[str, object] = {}       # Tensor attributes attached here, ops' methods included


def tensor_method(name: str, fn) -> None:
    """Attach ``fn`` as ``Tensor.<name>``. Every Tensor method an op module adds comes through
    here (ops' own methods through ``register``), so ``METHODS`` lists them all (``tensor.pyi`` is
    generated from it)."""
    METHODS[name] = fn
    setattr(Tensor, name, fn)


def register(name: str, fn: Callable, family: str, method: bool | str = True,
             inplace: Callable | None = None, functional: bool = True,
             aliases: tuple = ()) -> Callable:
    """Record ``fn`` as op ``name``; attach it as a Tensor method and ``name_`` in-place variant."""
    method_name = (name if method is True else method) or None
    inplace_name = f"{name}_" if inplace is not None else None
    REGISTRY[name] = OpInfo(name, fn, method_name, inplace_name, family)
    if method_name:
        tensor_method(method_name, fn)
    if inplace is not None:
        tensor_method(inplace_name, inplace)
    if functional:
        FUNCTIONS[name] = fn
    for alias in aliases:
        REGISTRY[alias] = OpInfo(alias, fn, alias if method_name else None,
                                 alias + "_" if inplace is not None else None, "alias")
        if method_name:
            tensor_method(alias, fn)
        if inplace is not None:
            tensor_method(alias + "_", inplace)
        if functional:
            FUNCTIONS[alias] = fn
    return fn


def op(name: str, family: str, **kwargs):
    """Decorator form of ``register``."""
    def deco(fn):
        return register(name, fn, family, **kwargs)
    return deco
