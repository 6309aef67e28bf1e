"""The reverse pass: ``backward`` and ``grad``.

The engine is iterative (a 10,000-op chain needs no recursion): it orders the graph topologically
with an explicit stack, so a node runs only after every node that feeds it gradient has run and its
output gradients are summed. Saved tensors are freed node by node unless ``retain_graph`` is set.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> (gx,) = dg.autograd.grad((x * x).sum(), x)
    >>> gx
    tensor([2., 4.])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..tensor import Tensor, _wrap
from . import grad_mode
from .anomaly_mode import ANOMALY, check_gradients
from .function import AccumulateGrad, accumulator


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


_ONE: dict = {}  # NumPy dtype -> a 0-d array holding 1, copied for each scalar root


def _ones_like(out):
    arr = out._data
    if type(arr) is np.ndarray:
        if not arr.ndim:  # loss.backward(): a copy of a cached scalar beats np.ones' Python path
            one = _ONE.get(arr.dtype)
            if one is None:
                one = _ONE[arr.dtype] = np.ones((), arr.dtype)
            return _wrap(one.copy(), out.dtype)
        return _wrap(np.ones(arr.shape, arr.dtype), out.dtype)
    from ..kernels.buffers import full_like_array
    return _wrap(full_like_array(arr, arr.shape, 1, arr.dtype), out.dtype)


def _root_grads(outputs, grad_outputs) -> list:
    if len(outputs) == 1 and not grad_outputs:  # loss.backward(): the common case
        out = outputs[0]
        if out._data.size == 1 and out.dtype.is_floating_point:
            return [_ones_like(out)]
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if i < len(grad_outputs) else None
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs "
                                   f"(output {i} has shape {tuple(out.shape)}); pass gradient=")
            if not out.dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs, "
                                   f"got {out.dtype.name}")
            g = _ones_like(out)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{tuple(g.shape)} and output[{i}] has a shape of {tuple(out.shape)}.")
        elif g.dtype is not out.dtype:  # as PyTorch: cast, so every node sees its own dtype
            g = g.to(out.dtype)
        grads.append(g)
    return grads


def _topological(roots) -> list:
    """Nodes reachable from ``roots``, each before every node it feeds (iterative DFS)."""
    order, seen = [], set()
    # entries are nodes to visit, or a node wrapped in a 1-tuple: "all its inputs are done"
    stack = list(roots)
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            order.append(node[0])
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node,))
        for edge in node.next_functions:
            if edge is not None and edge[0] not in seen:
                stack.append(edge[0])
    order.reverse()  # post-order reversed: producers of gradient come first
    return order


def run_backward(outputs, grad_outputs, retain_graph: bool, create_graph: bool,
                 inputs=None, accumulate: bool = True):
    """Propagate gradients from ``outputs``; accumulate into ``.grad`` or return grads of ``inputs``."""
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                               "grad_fn")
    root_grads = _root_grads(outputs, grad_outputs)
    # tensors the engine may store as a leaf's .grad without copying: fresh results nobody else
    # holds. The user's gradient= tensors are never taken over; a taken tensor is not reused.
    # (loss.backward() skips the comprehensions: each costs a frame, felt in a small pass)
    taken = {id(g) for g in grad_outputs if g is not None} if grad_outputs else set()
    if len(outputs) == 1 and outputs[0].grad_fn is not None:
        root_edges = [(outputs[0].grad_fn, outputs[0]._output_nr)]
        order = _topological([outputs[0].grad_fn])
    else:
        root_edges = [(o.grad_fn, o._output_nr) if o.grad_fn is not None else (accumulator(o), 0)
                      for o in outputs]
        order = _topological([e[0] for e in root_edges])

    # where the gradient of each requested input is read: its producing (node, output)
    targets = None
    if inputs is not None:
        targets = {}
        for k, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError(f"One of the differentiated Tensors (input {k}) does not "
                                   "require grad")
            node, nr = (t.grad_fn, t._output_nr) if t.grad_fn is not None else (accumulator(t), 0)
            targets.setdefault(node, []).append((nr, k, t))
        needed = set(targets)
        for node in reversed(order):  # consumers last: a node is needed if it leads to a target
            if any(e is not None and e[0] in needed for e in node.next_functions):
                needed.add(node)
        order = [n for n in order if n in needed]
    captured = [None] * (0 if inputs is None else len(inputs))

    live = None if targets is None else set(order)  # None: every node runs
    buffers = {}  # node -> gradient per output, summed as producers deliver them
    for (node, nr), g in zip(root_edges, root_grads):
        _deliver(buffers, node, nr, g)

    check_nan = ANOMALY[0] and ANOMALY[1]  # anomaly mode: each node's gradients checked
    prev_mode = grad_mode.GRAD_ENABLED[0]
    grad_mode.GRAD_ENABLED[0] = create_graph
    try:
        for node in order:  # topological order: every producer of this node's gradient ran
            grads = buffers.pop(node, None)
            if grads is None:
                continue
            is_leaf = type(node) is AccumulateGrad
            if node._pre_hooks or node._retain_hooks or (is_leaf and node.has_leaf_hooks()):
                grads = _run_prehooks(node, grads)
            if targets is not None and node in targets:
                for nr, k, t in targets[node]:
                    captured[k] = grads[nr]
                    if accumulate:
                        _accumulate(t, grads[nr], create_graph, taken)
                        if t._post_accumulate_hooks:
                            _run_post_accumulate_hooks(t)
                if is_leaf or not any(
                        e is not None and e[0] in live for e in node.next_functions):
                    continue
            if is_leaf:
                leaf = node.variable
                if accumulate and targets is None and leaf is not None:
                    _accumulate(leaf, grads[0], create_graph, taken)
                    if leaf._post_accumulate_hooks:
                        _run_post_accumulate_hooks(leaf)
                continue
            if len(grads) > 1 or grads[0] is None:
                grads = _materialize(node, grads)
            in_grads = node.apply(*grads)
            if type(in_grads) is not tuple:
                in_grads = (in_grads,)
            if check_nan:
                check_gradients(node, in_grads)
            if node._post_hooks:
                for hook in node._post_hooks:
                    hook(in_grads, grads)
            if not retain_graph:
                node._saved = ()
                node._released = True
            for e, g in zip(node.next_functions, in_grads):
                if e is None or g is None or (live is not None and e[0] not in live):
                    continue
                nxt, nr = e
                buf = buffers.get(nxt)
                if buf is None:  # first gradient for this node: no addition needed
                    buf = buffers[nxt] = [None] * max(1, len(nxt._output_meta))
                    buf[nr] = g
                else:
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
    finally:
        grad_mode.GRAD_ENABLED[0] = prev_mode
    return captured


def _deliver(buffers, node, nr, g) -> None:
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * max(1, len(node._output_meta))
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def _run_prehooks(node, grads):
    hooks = node._pre_hooks
    if isinstance(node, AccumulateGrad):
        leaf = node.variable
        leaf_hooks = leaf._hooks if leaf is not None else None
        if leaf_hooks:
            hooks = {0: list(leaf_hooks.values())}
    retain = node._retain_hooks
    if not hooks and not retain:
        return grads
    grads = list(grads)
    for nr, fns in (hooks or {}).items():
        for fn in list(fns):
            if grads[nr] is None:
                continue
            new = fn(grads[nr])
            if new is not None:
                _check_hook_result(fn, grads[nr], new)
                grads[nr] = new
    for nr, fn in (retain or {}).items():  # retain_grad stores the gradient the hooks produced
        if grads[nr] is not None:
            fn(grads[nr])
    return grads


def _check_hook_result(fn, old, new) -> None:
    """A hook may replace a gradient, not change its type or shape (nodes rely on both)."""
    if not isinstance(new, Tensor):
        problem = f"returned a {type(new).__name__}; expected a Tensor or None"
    elif new.dtype is not old.dtype or new.device != old.device:
        problem = (f"has changed the type of value (was {old.dtype.name} on {old.device}, got "
                   f"{new.dtype.name} on {new.device})")
    elif new._data.shape != old._data.shape:
        problem = (f"has changed the size of value (was {tuple(old.shape)}, got "
                   f"{tuple(new.shape)})")
    else:
        return
    raise RuntimeError(f"hook '{getattr(fn, '__name__', repr(fn))}' {problem}")


def _materialize(node, grads) -> list:
    """Outputs that got no gradient receive zeros on their device (custom Functions may opt
    out)."""
    if all(g is not None for g in grads) or not getattr(node, "materialize_grads", True):
        return grads
    from ..creation import zeros
    return [zeros(shape, dtype=dtype, device=device) if g is None else g
            for g, (shape, dtype, device) in zip(grads, node._output_meta)]


def _take(g, leaf, taken: set) -> bool:
    """Whether gradient ``g`` can become ``leaf.grad`` as it is (no copy); ``taken`` holds the
    ids of tensors that may not (the user's ``gradient=`` tensors, grads already stored)."""
    arr = g._data
    if (id(g) in taken or arr.base is not None or not arr.flags.c_contiguous
            or not arr.flags.writeable or g.grad_fn is not None or leaf._hooks):
        # a view, the user's tensor, already some leaf's grad, in a graph, or seen by a
        # hook that may have kept it
        return False
    taken.add(id(g))
    return True


def _run_post_accumulate_hooks(leaf) -> None:
    """``register_post_accumulate_grad_hook``'s hooks, once the leaf's ``.grad`` holds this pass's
    gradient."""
    for hook in list(leaf._post_accumulate_hooks.values()):
        hook(leaf)


def _accumulate(t, g, create_graph: bool, taken: set) -> None:
    if g is None:
        return
    if g.dtype is not t.dtype:
        if g.dtype.is_complex and not t.dtype.is_complex:  # a real leaf: the real part
            g = g.real
        g = g.to(t.dtype)
    current = t._grad
    if current is None:
        # store a tensor the user may modify in place: never a view or an alias of another grad
        # (with create_graph the copy is recorded, so the stored grad stays differentiable)
        if create_graph:
            t.grad = g.clone()
        elif g._data.shape == t._data.shape and _take(g, t, taken):
            t._grad = g  # the shape and dtype the setter would check are known to match
        else:
            t.grad = g.detach().clone()
    elif create_graph:
        t.grad = current + g
    else:  # the engine runs with grad mode off here: a plain in-place add
        current.add_(g)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = None if inputs is None else _as_tuple(inputs)
    if inputs is not None and not inputs:
        raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty")
    run_backward(outputs, grads, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: bool | None = None, materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, without touching any ``.grad``."""
    outs = _as_tuple(outputs)
    ins: Sequence = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outs, _as_tuple(grad_outputs), retain_graph, create_graph, ins,
                          accumulate=False)
    final = []
    for k, (g, t) in enumerate(zip(result, ins)):
        if g is None:
            if materialize_grads:
                from ..creation import zeros_like
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {k}) appears to not "
                                   "have been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
        final.append(g)
    return tuple(final)
