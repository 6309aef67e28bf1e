"""Activation checkpointing (PyTorch's ``torch.utils.checkpoint``): run a segment of the forward
pass without keeping its intermediate tensors, and run it again during backward to get them.

``checkpoint(fn, *args, use_reentrant=...)`` has PyTorch's two modes:

- ``use_reentrant=True``: ``fn`` runs under ``no_grad``; the result's backward node
  (``CheckpointFunction``) runs ``fn`` again with grad mode on and starts a nested backward
  from its outputs. Gradients reach the arguments and accumulate into the ``.grad`` of the
  parameters ``fn`` uses; as in PyTorch it does not work with ``autograd.grad`` for those
  parameters, and the outputs require grad only when an argument does.
- ``use_reentrant=False``: ``fn`` runs once with its graph recorded only to find where the
  segment's gradients leave it (its tensor arguments and every leaf it reads, parameters
  included); that graph is dropped as soon as ``fn`` returns, and the outputs hang off one
  recompute node with an edge to each of them. Backward runs ``fn`` again and returns the
  gradients of all of those tensors, so ``autograd.grad`` and ``backward(inputs=...)`` work
  and keyword arguments are passed through. ``determinism_check="default"`` compares the
  recomputed outputs' shapes, dtypes and devices with the first run's (``CheckpointError``).

Either way the activations inside the segment are freed when it returns: only its inputs and
outputs stay alive until backward. (Non-reentrant mode keeps a segment's recomputed graph until
its nested backward ends, so that a non-leaf tensor the segment reads through a closure keeps
the caller's nodes it leads to for the main pass.) ``preserve_rng_state`` (default) replays the CPU generator and
the generators of the CUDA devices of the arguments, so dropout draws the same mask again.

Selective checkpointing (``create_selective_checkpoint_contexts``, ``CheckpointPolicy``,
``SelectiveCheckpointContext``, ``SAC_IGNORED_OPS``) is not offered: its policy decides per
dispatched ATen op whether to save or recompute, and dynagrad has no dispatcher where every op
call can be intercepted and its saved output substituted during recompute.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.utils.checkpoint import checkpoint
    >>> x = dg.tensor([0.0, 1.0], requires_grad=True)
    >>> checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False).backward()
    >>> x.grad
    tensor([0., 2.])
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable

from .. import random as _random
from ..autograd import engine as _engine
from ..autograd import grad_mode
from ..autograd.function import AccumulateGrad, Function, Node, record
from ..tensor import Tensor

__all__ = ["CheckpointError", "CheckpointFunction", "DefaultDeviceType", "GraphExecGroup",
           "checkpoint", "checkpoint_sequential", "detach_variable", "get_device_states",
           "noop_context_fn", "set_checkpoint_debug_enabled", "set_checkpoint_early_stop",
           "set_device_states"]


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed segment did not reproduce its first run."""


class DefaultDeviceType:
    """The device type whose generator state ``checkpoint`` preserves besides the CPU's."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if DefaultDeviceType._default_device_type is None:
            from .. import cuda
            return "cuda" if cuda.is_available() else "cpu"
        return DefaultDeviceType._default_device_type


def noop_context_fn():
    """The default ``context_fn``: no context around the forward run nor the recompute."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Each Tensor of ``inputs`` detached, keeping its ``requires_grad`` (the recompute's fresh
    leaves); other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(  # noqa: TRY004 (PyTorch's type)
            f"Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def get_device_states(*args) -> tuple[list, list]:
    """(device indices, generator states) of the CUDA devices holding tensors among ``args``."""
    devices = sorted({a.device.index or 0 for a in _tensors(args) if a.device.type == "cuda"})
    return devices, [_random._device_generator(d).get_state() for d in devices]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore the generator states ``get_device_states`` returned."""
    for d, s in zip(devices, states):
        _random._device_generator(d).set_state(s)


def _tensors(tree) -> list:
    if isinstance(tree, Tensor):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [t for x in tree for t in _tensors(x)]
    if isinstance(tree, dict):
        return [t for x in tree.values() for t in _tensors(x)]
    return []


class _RngState:
    """The CPU generator's state and those of the arguments' CUDA devices at the first run;
    ``replay()`` sets them for the recompute and restores the current ones after it."""

    def __init__(self, args):
        self.cpu = _random.get_rng_state()
        self.devices, self.states = get_device_states(*args)

    @contextlib.contextmanager
    def replay(self):
        cpu_now = _random.get_rng_state()
        devices_now = [_random._device_generator(d).get_state() for d in self.devices]
        _random.set_rng_state(self.cpu)
        set_device_states(self.devices, self.states)
        try:
            yield
        finally:
            _random.set_rng_state(cpu_now)
            set_device_states(self.devices, devices_now)


# settings --------------------------------------------------------------------------------------

_DEBUG = [False]
_EARLY_STOP = [True]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Context manager overriding ``checkpoint``'s ``debug`` flag (``None``: each call's own).
    In debug mode a ``CheckpointError`` also lists the first run's and the recompute's
    output metadata in full."""
    prev = _DEBUG[0]
    _DEBUG[0] = enabled
    try:
        yield
    finally:
        _DEBUG[0] = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Context manager overriding ``early_stop``. PyTorch may stop a recompute once every saved
    tensor is back; dynagrad always reruns the whole segment (the gradients are the same either
    way), so the setting is accepted and has no effect on results."""
    prev = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = prev


class GraphExecGroup:
    """Backward calls under one instance of this context manager recompute each checkpointed
    segment (``use_reentrant=False``) at most once: the recomputed graph is kept for the group's
    later backward calls, which must run over separate parts of the graph."""

    _current: GraphExecGroup | None = None

    def __enter__(self):
        if GraphExecGroup._current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *exc):
        GraphExecGroup._current = None
        return False


# reentrant mode ------------------------------------------------------------------------------

class CheckpointFunction(Function):
    """The reentrant checkpoint: ``CheckpointFunction.apply(run_function, preserve_rng_state,
    *args)`` runs ``run_function(*args)`` under ``no_grad``; its backward recomputes and runs a
    nested backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _RngState(args) if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        saved = iter(detach_variable(tuple(ctx.saved_tensors)))
        inputs = tuple(next(saved) if a is None else a for a in ctx.inputs)
        replay = ctx.rng.replay() if ctx.rng is not None else contextlib.nullcontext()
        with replay, grad_mode.enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        _engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)
        return (None, None) + grads


# non-reentrant mode --------------------------------------------------------------------------

def _boundary(outputs: list, args: list) -> list:
    """The tensors where gradient leaves the segment that produced ``outputs``: the arguments
    it reaches and every leaf that requires grad, found by walking the segment's graph."""
    by_edge = {}
    for a in args:
        if a.requires_grad:
            edge = (a.grad_fn, a._output_nr) if a.grad_fn is not None else None
            if edge is not None:
                by_edge[(id(edge[0]), edge[1])] = a
    found, seen_t, seen_n = [], set(), set()
    stack = [(o.grad_fn, o._output_nr) for o in outputs if o.grad_fn is not None]
    stack += [(None, o) for o in outputs if o.grad_fn is None and o.requires_grad]
    while stack:
        node, nr = stack.pop()
        if node is None:  # an output that is itself a leaf
            t = nr
        elif (id(node), nr) in by_edge:
            t = by_edge[(id(node), nr)]
        elif type(node) is AccumulateGrad:
            t = node.variable
        else:
            if id(node) not in seen_n:
                seen_n.add(id(node))
                stack += [e for e in node.next_functions if e is not None]
            continue
        if t is not None and id(t) not in seen_t:
            seen_t.add(id(t))
            found.append(t)
    return found


def _meta(t: Tensor) -> tuple:
    return tuple(t.shape), t.dtype, t.device


class _Recompute(Node):
    """The backward node of a non-reentrant checkpoint: one edge per boundary tensor."""

    def name(self) -> str:
        return "CheckpointBackward"

    def backward(self, *grads):
        cached = self.group_cache if self.group is GraphExecGroup._current else None
        if cached is None:
            cached = self._recompute()
            if GraphExecGroup._current is not None:
                self.group, self.group_cache = GraphExecGroup._current, cached
        outs, targets = cached
        pairs = [(o, g) for o, g in zip(outs, grads) if o.requires_grad and g is not None]
        if not pairs:
            return (None,) * len(targets)
        # the graph is retained: a non-leaf tensor the segment reads from outside (a closure) is
        # reached through the caller's nodes, which the main pass still has to run; the
        # recomputed graph itself is freed when this returns
        return _engine.grad([o for o, _ in pairs], targets, [g for _, g in pairs],
                            retain_graph=True, create_graph=grad_mode.GRAD_ENABLED[0],
                            allow_unused=True)

    group = None
    group_cache = None

    def _recompute(self):
        fresh = {}
        # a backward that records its graph (create_graph) must reach the caller's tensors:
        # the recompute then runs on views of them, not on detached copies
        connect = grad_mode.GRAD_ENABLED[0]

        def swap(x):
            if isinstance(x, Tensor):
                if id(x) not in fresh:
                    fresh[id(x)] = (x.view_as(x) if connect and x.requires_grad
                                    else detach_variable((x,))[0])
                return fresh[id(x)]
            if isinstance(x, (tuple, list)):
                return type(x)(swap(y) for y in x)
            if isinstance(x, dict):
                return {k: swap(v) for k, v in x.items()}
            return x
        args, kwargs = swap(self.args), swap(self.kwargs)
        replay = self.rng.replay() if self.rng is not None else contextlib.nullcontext()
        with replay, grad_mode.enable_grad(), self.recompute_context:
            out = self.function(*args, **kwargs)
        leaves = _tensors(out)
        outs = [leaves[k] if k < len(leaves) else None for k in self.positions]
        if self.determinism_check == "default":
            now = [None if o is None else _meta(o) for o in outs]
            if now != self.metas:
                detail = (f"\nforward pass: {self.metas}\nrecompute: {now}"
                          if self.debug or _DEBUG[0] else "")
                raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                                      "tensors have different metadata than during the forward "
                                      f"pass.{detail}")
        outs = [o if o is not None else t for o, t in zip(outs, self.placeholders)]
        targets = [fresh.get(id(t), t) for t in self.boundary]
        return outs, targets


def _checkpoint_without_reentrant(function, args, kwargs, context_fn, determinism_check, debug,
                                  preserve_rng_state):
    forward_context, recompute_context = context_fn()
    rng = _RngState((args, kwargs)) if preserve_rng_state else None
    with forward_context:
        out = function(*args, **kwargs)
    if not grad_mode.GRAD_ENABLED[0]:
        return out  # no graph: nothing will ask for a recompute
    leaves = _tensors(out)
    positions = [k for k, t in enumerate(leaves) if t.requires_grad]
    if not positions:
        return out
    produced = [leaves[k] for k in positions]
    boundary = _boundary(produced, _tensors((args, kwargs)))
    node = _Recompute()
    node.function, node.args, node.kwargs = function, args, kwargs
    node.rng, node.recompute_context = rng, recompute_context
    node.determinism_check, node.debug = determinism_check, debug
    node.positions, node.metas = positions, [_meta(t) for t in produced]
    node.boundary = boundary
    detached = [t.detach() for t in produced]
    node.placeholders = [t.new_zeros(()) for t in detached]  # stand-ins if a recompute lacks one
    record(node, boundary, detached)
    # rebuild the output structure around the detached tensors: the segment's graph goes now
    swap = {id(t): d for t, d in zip(produced, detached)}
    return _replace(out, swap)


def _replace(tree, swap: dict):
    if isinstance(tree, Tensor):
        return swap.get(id(tree), tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_replace(x, swap) for x in tree)
    if isinstance(tree, dict):
        return {k: _replace(v, swap) for k, v in tree.items()}
    return tree


# the entry points ----------------------------------------------------------------------------

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its intermediate tensors; backward runs it
    again (see the module docstring for the two modes). ``preserve_rng_state=True`` (a keyword)
    replays the random generators so random ops draw the same values again.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.utils.checkpoint import checkpoint
        >>> lin = dg.nn.Linear(3, 3)
        >>> y = checkpoint(lin, dg.ones(1, 3), use_reentrant=False)
        >>> y.sum().backward(); lin.weight.grad.shape
        dynagrad.Size([3, 3])
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if grad_mode.GRAD_ENABLED[0] and not any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, args, kwargs, context_fn, determinism_check,
                                         debug, preserve)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (a ``Sequential`` or a list of callables) in ``segments`` pieces, each
    but the last under ``checkpoint``: only the pieces' boundaries are kept for backward.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.utils.checkpoint import checkpoint_sequential
        >>> net = dg.nn.Sequential(dg.nn.Linear(2, 2), dg.nn.Tanh(), dg.nn.Linear(2, 1))
        >>> checkpoint_sequential(net, 2, dg.ones(1, 2), use_reentrant=False).shape
        dynagrad.Size([1, 1])
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)

    def run(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
