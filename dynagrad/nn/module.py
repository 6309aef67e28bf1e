"""``Module``: the base class of every layer, with PyTorch's registration, traversal, state_dict,
hook and printing semantics.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> class Scale(nn.Module):
    ...     def __init__(self, n):
    ...         super().__init__()
    ...         self.weight = nn.Parameter(dg.ones(n))
    ...         self.register_buffer("calls", dg.zeros(()))
    ...     def forward(self, x):
    ...         return x * self.weight
    >>> m = Scale(2)
    >>> list(m.state_dict())
    ['weight', 'calls']
    >>> m(dg.tensor([1.0, 2.0]))
    tensor([1., 2.], grad_fn=<MulBackward0>)
"""
from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Callable, Iterator

from ..autograd.grad_mode import no_grad
from ..dtypes import dtype as DType
from ..ops.tensor_methods import parse_to_args
from ..tensor import Tensor, reset_grads
from .parameter import Buffer, Parameter

__all__ = ["Module", "RemovableHandle"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj) -> str:
    """``dynagrad.FloatTensor`` for tensors (PyTorch's legacy names), the qualified class name
    for anything else."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (nested module reprs)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    return first + "\n" + "\n".join(" " * spaces + line for line in rest)


class RemovableHandle:
    """Returned by ``register_*_hook``: ``handle.remove()`` unregisters the hook (also usable as a
    context manager)."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict, *, extra_dict=None):
        # Plain references: the dicts belong to the module and hold no reference back to it.
        self.id = next(RemovableHandle._next_id)
        extra = (extra_dict,) if isinstance(extra_dict, dict) else tuple(extra_dict or ())
        self._dicts = (hooks_dict,) + extra

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _forward_unimplemented(self, *args, **kwargs):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" '
                              "function")


class Module:
    """Base class for all layers. Subclasses call ``super().__init__()`` first, then assign
    parameters, buffers and submodules as attributes, and define ``forward``.
    """

    training: bool
    _version = 1  # state_dict metadata version, as PyTorch's
    forward: Callable = _forward_unimplemented

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments: "
                            f"{args!r} {kwargs!r}")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}

    # --- calling -------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # Hot path: one dict truth test per hook kind, then forward.
        if self._forward_pre_hooks or self._forward_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    try:
                        self._run_forward_hook(hook_id, hook, args, kwargs, None)
                    except Exception as hook_error:  # the forward's own error is the one raised
                        warnings.warn("module forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised "
                                      f"in forward: {hook_error}")
            raise
        for hook_id, hook in list(self._forward_hooks.items()):
            result = self._run_forward_hook(hook_id, hook, args, kwargs, output)
            if result is not None:
                output = result
        return output

    def _run_forward_hook(self, hook_id, hook, args, kwargs, output):
        if hook_id in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, output)
        return hook(self, args, output)

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward`` and may return new args (a tuple, or one
        value). With ``with_kwargs=True``: ``hook(module, args, kwargs)`` -> None or
        ``(args, kwargs)``."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward`` and may return a new output.
        With ``with_kwargs=True``: ``hook(module, args, kwargs, output)``. ``always_call=True``
        runs it even when ``forward`` raises."""
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=(self._forward_hooks_with_kwargs,
                                             self._forward_hooks_always_called))
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    # --- registration --------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a ``None`` placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(dynagrad.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (e.g. running statistics). Persistent
        buffers are part of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(dynagrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name`` (it is then reachable as an attribute)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: parameters, buffers and children live in dicts.
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(dynagrad.nn.Parameter or None expected)")
            params[name] = None
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(dynagrad.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value, persistent=value._buffer_persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(dynagrad.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from every registry but ``keep`` (an attribute changes its kind)."""
        d = self.__dict__
        d.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                d[registry].pop(name, None)
        if keep != "_buffers":
            d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del d["_parameters"][name]
        elif name in d.get("_buffers", ()):
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d.get("_modules", ()):
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = itertools.chain(dir(type(self)), self.__dict__, self._parameters, self._modules,
                               self._buffers)
        return sorted(k for k in set(keys) if not k.isdigit())

    # --- traversal -----------------------------------------------------------------------
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + "." + k if module_prefix else k), v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module (and its descendants when ``recurse``), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)`` pairs in registration order, depth first."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """``(dotted_name, module)`` for this module (name ``prefix``) and every descendant."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def get_submodule(self, target: str) -> "Module":
        """The descendant at dotted path ``target`` (``""`` is this module)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # --- modes and gradients ---------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode on this module and all descendants (dropout, batch norm use it)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to ``None`` (default) or to zeros in place."""
        reset_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every descendant (children first) and then on this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # --- dtype and device ------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor]) -> "Module":
        """Convert every parameter (in place, keeping its identity), gradient and buffer."""
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                p.data = fn(p)
                if p.grad is not None:
                    p._grad = fn(p.grad)
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(tensor)``; dtype changes
        apply to floating-point parameters and buffers only."""
        given = [False]
        device, dtype, _ = parse_to_args(args, kwargs, given)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")
        if dtype is None and not given[0]:
            return self

        def convert(t: Tensor) -> Tensor:
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            return t.to(device) if given[0] else t
        return self._apply(convert)

    def float(self) -> "Module":
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def type(self, dst_type: DType) -> "Module":
        return self._apply(lambda t: t.to(dst_type))

    def cpu(self) -> "Module":
        """Move every parameter and buffer to the CPU (in place)."""
        return self.to("cpu")

    def cuda(self, device=None) -> "Module":
        """Move every parameter and buffer to a CUDA device (in place); e.g. ``model.cuda()``."""
        return self.to("cuda" if device is None else device)

    # --- state_dict ------------------------------------------------------------------------
    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save non-tensor state in ``state_dict``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (no descendants); override to customise."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of every parameter and persistent buffer, keyed by dotted name.

        Values are detached tensors sharing memory with the module (``keep_vars=True`` returns
        the parameters themselves)."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """Load this module's own entries from ``state_dict``; override to migrate old keys.
        (PyTorch's signature; ``load_state_dict(assign=True)`` arrives in ``local_metadata``.)"""
        assign = local_metadata.get("assign_to_params_buffers", False)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected Tensor or '
                                  f"Tensor-like object from checkpoint but received "
                                  f"{type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model is "
                                  f"{param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        self._assign_loaded(name, param, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.shape} and whose dimensions in the "
                                  f"checkpoint are {value.shape}, an exception occurred : "
                                  f"{ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    name = key[len(prefix):].split(".", 1)[0]
                    if name not in self._modules and name not in local_state:
                        unexpected_keys.append(key)

    def _assign_loaded(self, name: str, current: Tensor, value: Tensor) -> None:
        """``load_state_dict(assign=True)``: take the checkpoint tensor itself."""
        if isinstance(current, Parameter):
            new = value if isinstance(value, Parameter) else Parameter(value,
                                                                       current.requires_grad)
            new.requires_grad_(current.requires_grad)
            self._parameters[name] = new
        else:
            self._buffers[name] = value

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy ``state_dict``'s tensors into this module's parameters and buffers.

        Returns ``(missing_keys, unexpected_keys)``; with ``strict=True`` (default) either being
        non-empty raises, as does any shape mismatch."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)

        def load(module: Module, prefix: str) -> None:
            local_metadata = dict({} if metadata is None else metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self, "")
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # --- printing --------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in its repr; override in layers."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"
