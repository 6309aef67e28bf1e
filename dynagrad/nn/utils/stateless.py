"""``functional_call`` (PyTorch's deprecated ``torch.nn.utils.stateless``): run a module with
some of its parameters and buffers replaced by given tensors, for that call only.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> import warnings; warnings.simplefilter("ignore", FutureWarning)
    >>> m = nn.Linear(2, 1)
    >>> functional_call(m, {"weight": dg.ones(1, 2), "bias": dg.zeros(1)}, dg.tensor([[1.0, 2.0]]))
    tensor([[3.]])
"""
from __future__ import annotations

import contextlib
import warnings

from ...tensor import Tensor
from ..module import Module

__all__ = ["functional_call"]


def _untie(module: Module, given: dict) -> dict:
    """``given`` extended to every name tied (the same tensor) to a given name; two different
    values for tied names are an error."""
    by_tensor: dict = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    out = dict(given)
    for name in given:
        if name not in tied:
            continue
        names = tied[name]
        values = {id(given[n]) for n in names if n in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
        for other in names:
            out[other] = given[name]
    return out


def _owner(module: Module, name: str) -> tuple:
    path, _, attr = name.rpartition(".")
    return module.get_submodule(path), attr


def _swap(module: Module, name: str, value):
    """Put ``value`` at dotted ``name`` (a parameter, buffer or plain attribute slot) and
    return what was there (``_MISSING`` when nothing was)."""
    owner, attr = _owner(module, name)
    for registry in (owner._parameters, owner._buffers):
        if attr in registry:
            old = registry[attr]
            registry[attr] = value
            return old
    old = owner.__dict__.get(attr, _MISSING)
    if value is _MISSING:
        owner.__dict__.pop(attr, None)
    else:
        setattr(owner, attr, value)
    return old


_MISSING = object()


@contextlib.contextmanager
def _reparametrize(module: Module, tensors: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
                   {n for n, _ in module.named_buffers(remove_duplicate=False)}
        unexpected = sorted(set(tensors) - expected)
        missing = sorted(expected - set(tensors))
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    originals = {}
    try:
        for name, value in tensors.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            _swap(module, name, old)


def functional_call(module: Module, parameters_and_buffers: dict, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (keyed by
    dotted name) in place of the module's own for this call; the module is restored after.
    ``tie_weights``: a tensor given for one of several tied names replaces all of them.
    ``strict``: the dict must name exactly the module's parameters and buffers. Deprecated in
    PyTorch (a ``FutureWarning``) for ``torch.func.functional_call``."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    for name, value in parameters_and_buffers.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"functional_call: the value for '{name}' must be a Tensor, got "
                            f"{type(value).__name__}")
    with _reparametrize(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)
