"""The ``Optimizer`` base class: parameter groups, lazy per-parameter state, state dicts, hooks.

Subclasses implement ``step``; it is wrapped automatically so that it runs under ``no_grad``, calls
the step hooks and marks the optimizer as stepped (for the LR schedulers' order check). The update
math of every built-in optimizer runs in one generated kernel per parameter tensor (see
``dynagrad/kernels/optim_updates.py``, compiled for the CPU or, for parameters on a GPU, as a CUDA
kernel from the same loop body); ``launch`` is the bridge from tensors to that kernel.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.optim import SGD
    >>> w = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step(); opt.zero_grad()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Iterable

import numpy as np

from .. import dtypes
from ..autograd import enable_grad, no_grad
from ..kernels import cache as _kcache
from ..kernels.cpu import backend as _cpu
from ..kernels.optim_updates import update_kernel
from ..kernels.buffers import contiguous, full_like_array, host
from ..tensor import Tensor, _wrap, reset_grads

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a hyper-parameter that each parameter group must give itself."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _Handle:
    """Removes a hook from its dict."""

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


def _wrap_step(step: Callable) -> Callable:
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in list(self._step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                args, kwargs = result
        with no_grad():
            out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in list(self._step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._dg_wrapped = True
    return wrapper


class Optimizer:
    """Base class of all optimizers (PyTorch's ``torch.optim.Optimizer`` API).

    ``params`` is an iterable of tensors, or of dicts each holding ``"params"`` and per-group
    options that override ``defaults``.
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_dg_wrapped", False):
            cls.step = _wrap_step(step)

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._step_pre_hooks: OrderedDict = OrderedDict()
        self._step_post_hooks: OrderedDict = OrderedDict()
        self._hook_id = 0
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got dynagrad.Tensor")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_step_pre_hooks", "_step_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_hook_id", 0)

    # --- groups ------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Append a group of parameters (a dict with ``"params"`` and optional options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names and len(names) != len(params):
            raise ValueError("all optimizer params should be with/without names. "
                             "Some param names are missing")
        param_group["params"] = params
        if names:
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__module__ + "." + type(p).__name__)
            if not (p.is_leaf or p._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen: set = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # --- gradients and steps -----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: drop them (default) or fill them with zeros."""
        for group in self.param_groups:
            reset_grads(group["params"], set_to_none)

    def step(self, closure: Callable[[], Any] | None = None):
        """Perform one optimization step (``closure`` re-evaluates the loss when given)."""
        raise NotImplementedError

    def _param_state(self, p: Tensor, *buffers: str, **scalars: float) -> dict:
        """The state of ``p``, filled on its first step as PyTorch does: ``step`` 0, then a 0-d
        entry per name in ``scalars`` (its initial value), then a zero buffer shaped like ``p``
        per name in ``buffers``."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            for name, value in scalars.items():
                state[name] = new_step(value)
            for name in buffers:
                state[name] = zeros_like(p)
        return state

    @staticmethod
    def _closure_loss(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def register_step_pre_hook(self, hook: Callable) -> _Handle:
        """``hook(optimizer, args, kwargs)`` runs before each step; it may return new
        ``(args, kwargs)``."""
        return self._add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> _Handle:
        """``hook(optimizer, args, kwargs)`` runs after each step."""
        return self._add_hook(self._step_post_hooks, hook)

    def _add_hook(self, hooks: dict, hook: Callable) -> _Handle:
        self._hook_id += 1
        hooks[self._hook_id] = hook
        return _Handle(hooks, self._hook_id)

    # --- state dicts -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``, with
        parameters numbered in group order as PyTorch does. Tensors are shared, not copied."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict made by ``state_dict`` (of this class, possibly from PyTorch's format).

        State tensors are copied and cast to their parameter's dtype (``step`` keeps its dtype).
        """
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(self.param_groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(self.param_groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in self.param_groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v
        for group, new in zip(self.param_groups, saved_groups):
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups


def _cast(param: Tensor, value, key=None):
    """A copy of ``value`` with its tensors contiguous and (except ``step``, which stays on the
    CPU) in param's dtype and on param's device."""
    if isinstance(value, Tensor):
        arr = host(value._data)
        if key != "step" and param.dtype.is_floating_point and value.dtype is not param.dtype:
            out = _wrap(np.array(arr, dtype=param.dtype.np, order="C"), param.dtype)
        else:
            out = _wrap(np.array(arr, copy=True, order="C"), value.dtype)
        return out.to(param.device) if key != "step" and param.is_cuda else out
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value


# --- helpers shared by the built-in optimizers ---------------------------------------------------
_KERNEL_DTYPES = ("float32", "float64")


def scalar_dtype():
    """dtype of scalar state such as ``step`` (float64 only when that is the default dtype)."""
    return dtypes.float64 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.float32


def new_step(value: float = 0.0) -> Tensor:
    """A 0-d scalar-state tensor such as ``state["step"]``."""
    dt = scalar_dtype()
    return _wrap(np.array(value, dtype=dt.np), dt)


def bump(t: Tensor) -> float:
    """Add one to a 0-d state tensor in place and return its new value as a Python float."""
    arr = t._data
    arr += 1
    t._vc[0] += 1
    return float(arr)


def zeros_like(p: Tensor, fill: float = 0.0) -> Tensor:
    """A contiguous state buffer shaped like ``p``, on its device."""
    if p.is_cuda:
        return _wrap(full_like_array(p._data, p._data.shape, fill, p._data.dtype), p.dtype)
    return _wrap(np.full(p._data.shape, fill, dtype=p._data.dtype), p.dtype)


def params_with_grad(group: dict, name: str):
    """The parameters of ``group`` that have a gradient, checked for what the kernels support."""
    out = []
    for p in group["params"]:
        g = p._grad
        if g is None:
            continue
        if p.dtype.name not in _KERNEL_DTYPES:
            raise TypeError(f"{name}: parameters must be float32 or float64, but got a parameter "
                            f"of shape {tuple(p.shape)} and dtype {p.dtype.name}")
        out.append(p)
    return out


def launch(family: str, options: tuple, p: Tensor, buffers: tuple, *scalars) -> None:
    """Run the fused update kernel of ``family`` on ``p``, its gradient and state ``buffers``
    (on a CPU or a CUDA device: one generated kernel from the same loop body)."""
    dt = p.dtype.name
    if p.is_cuda:
        _launch_cuda(family, options, dt, p, buffers, scalars)
        return
    data = p._data
    # a large parameter's update runs threaded, on OpenBLAS's workers (as elementwise ops do)
    target = "cpu-threaded" if _cpu.POOLED and data.size >= _cpu.FLAT_PARALLEL_MIN_ELEMENTS \
        else "cpu"
    key = ("optim", family, dt) + options if target == "cpu" else \
        ("optim", family, dt, target) + options
    kernel = _kcache._memory.get(key)
    if kernel is None:
        kernel = _kcache.lookup(key, lambda: update_kernel(family, dt, *options, target=target))
    g = p._grad._data
    if not g.flags.c_contiguous:
        g = np.ascontiguousarray(g)
    bufs = [b._data.reshape(-1) for b in buffers]
    if data.flags.c_contiguous:
        kernel(data.reshape(-1), g.reshape(-1), *bufs, *scalars)
    else:  # a strided parameter: update a contiguous copy, then write it back
        work = np.ascontiguousarray(data)
        kernel(work.reshape(-1), g.reshape(-1), *bufs, *scalars)
        data[...] = work
    p._vc[0] += 1
    for b in buffers:
        b._vc[0] += 1


def _launch_cuda(family: str, options: tuple, dt: str, p: Tensor, buffers: tuple,
                 scalars: tuple) -> None:
    from ..kernels.cuda import runner as cuda
    key = ("optim", family, dt, "cuda") + options
    data = p._data if p._data.flags.c_contiguous else p._data.copy()
    g = contiguous(p._grad._data)
    # scalars in the parameter's dtype, as the CPU kernel's signature converts them
    typed = [s if isinstance(s, bool) else p.dtype.np.type(s) for s in scalars]
    cuda.launch_flat(key, lambda: update_kernel(family, dt, *options, target="cuda"), data.size,
                     data.reshape(-1).kernel_view(), g.reshape(-1).kernel_view(),
                     *(b._data.reshape(-1).kernel_view() for b in buffers), *typed)
    if data is not p._data:  # a strided parameter: the update ran on a contiguous copy
        p._data[...] = data
    p._vc[0] += 1
    for b in buffers:
        b._vc[0] += 1


_INVALID = {"lr": "Invalid learning rate", "eps": "Invalid epsilon value"}


def check_non_negative(**hyper) -> None:
    """PyTorch's ``Invalid ... value`` errors for hyper-parameters that must be >= 0, checked in
    the order given (``lr`` may be a 1-element tensor)."""
    for name, value in hyper.items():
        if not 0.0 <= (scalar(value) if name == "lr" else value):
            raise ValueError(f"{_INVALID.get(name, f'Invalid {name} value')}: {value}")


def check_supported(name: str, differentiable: bool = False, capturable: bool = False) -> None:
    """Reject PyTorch options that have no meaning here."""
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True is not supported")
    if capturable:
        raise NotImplementedError(f"{name}: capturable=True is not supported (no CUDA graphs)")


def scalar(x, what: str = "lr"):
    """A hyper-parameter as a number. A 1-element tensor becomes a NumPy scalar of its dtype, so
    arithmetic with it stays in that dtype, as PyTorch's arithmetic on a tensor ``lr`` does."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError(f"Tensor {what} must be 1-element")
        return host(x._data).reshape(())[()]
    return x
