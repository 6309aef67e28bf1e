"""Graph nodes and user-defined differentiable functions.

A ``Node`` is one recorded op: ``next_functions`` points at the nodes that produced its inputs (or
at a leaf's ``AccumulateGrad``), and ``apply(*grads)`` returns one gradient per input. Built-in ops
make a Node class per op with ``node_class``; users subclass ``Function``.

Example:
    >>> import dynagrad as dg
    >>> class Square(dg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = dg.tensor([3.0], requires_grad=True)
    >>> Square.apply(x).backward(dg.ones(1)); x.grad
    tensor([6.])
"""
from __future__ import annotations

import weakref

from . import grad_mode


class Node:
    """A recorded operation in the autograd graph."""

    _saved = ()
    _saved_versions = ()
    _released = False
    _pre_hooks = None     # output index -> [hook(grad) -> grad | None]
    _post_hooks = None    # [hook(grad_inputs, grad_outputs)]
    _retain_hooks = None  # output index -> hook(grad) storing a non-leaf's .grad, run last
    next_functions = ()
    _output_meta = ()     # (shape, dtype, device) per output, to materialise missing gradients

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    # saved tensors -------------------------------------------------------------------------
    def save(self, *tensors) -> None:
        self._saved = tensors
        if len(tensors) == 2 and tensors[0] is not None and tensors[1] is not None:
            self._saved_versions = (tensors[0]._vc[0], tensors[1]._vc[0])  # the hot case
        else:
            self._saved_versions = tuple([None if t is None else t._vc[0] for t in tensors])

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or directly access saved "
                f"tensors of {self.name()} after they have already been freed). Saved intermediate "
                "values of the graph are freed when you call .backward() or autograd.grad(). "
                "Specify retain_graph=True if you need to backward through the graph a second time.")
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._vc[0] != v:
                self._raise_modified(t, v)
        return self._saved

    def _raise_modified(self, t, v) -> None:
        i = next(k for k, s in enumerate(self._saved) if s is t)
        raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an "
                    f"inplace operation: [{t.dtype.name} tensor of shape {tuple(t.shape)}], saved by "
                    f"{self.name()} as tensor {i}, is at version {t._vc[0]}; expected version {v} "
                    "instead. Hint: clone the tensor before modifying it in place.")

    def release(self) -> None:
        """Drop saved tensors after a backward pass that does not retain the graph."""
        self._saved = ()
        self._released = True

    # hooks ---------------------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return _RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn, output_nr: int = 0):
        """``fn(grad)`` runs on the gradient of output ``output_nr`` before backward."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)

    def register_retain_hook(self, fn, output_nr: int = 0) -> None:
        """``fn(grad)`` sees the gradient of output ``output_nr`` after every prehook changed it
        (``Tensor.retain_grad``; one per output)."""
        if self._retain_hooks is None:
            self._retain_hooks = {}
        self._retain_hooks[output_nr] = fn

    def apply(self, *grads):
        return self.backward(*grads)

    def backward(self, *grads):  # overridden per op
        raise NotImplementedError(f"{self.name()} has no backward")


class _RemovableHandle:
    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list, self._fn = lst, fn

    def remove(self) -> None:
        if self._fn in self._list:
            self._list.remove(self._fn)


class AccumulateGrad(Node):
    """Terminal node of a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    def __init__(self, variable):
        # The leaf owns its AccumulateGrad (so it is built once per leaf); the node only
        # points back weakly, so no reference cycle keeps either alive.
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        return self._variable()

    def has_leaf_hooks(self) -> bool:
        leaf = self._variable()
        return leaf is not None and bool(leaf._hooks)

    def apply(self, grad):
        # accumulation itself is done by the engine (it knows create_graph and inputs=)
        raise RuntimeError("AccumulateGrad is applied by the engine")


def node_class(name: str, backward) -> type:
    """A Node subclass called ``name`` (shown as ``grad_fn=<name>``) whose backward is ``backward``."""
    return type(name, (Node,), {"backward": backward})


def edge_of(t):
    """Where gradient for tensor ``t`` flows: ``(node, output_nr)``, or ``None`` (also for an
    absent optional input, ``t`` None)."""
    if t is None or not t._requires_grad:
        return None
    fn = t.grad_fn
    return (fn, t._output_nr) if fn is not None else (accumulator(t), 0)


def accumulator(t) -> AccumulateGrad:
    node = t._accum
    if node is None:
        node = t._accum = AccumulateGrad(t)
    return node


def record_one(node: Node, t, out) -> Node:
    """``record(node, (t,), (out,))`` for an input ``t`` that requires grad: the hot case of
    one-input ops, with no tuples to unpack and ``edge_of`` inlined."""
    fn = t.grad_fn
    node.next_functions = ((fn, t._output_nr) if fn is not None else (accumulator(t), 0),)
    out.grad_fn, out._requires_grad = node, True
    return node


def record(node: Node, inputs, outputs) -> Node:
    """Connect ``node`` to the tensors ``inputs`` and make it the grad_fn of ``outputs``."""
    n = len(inputs)
    if n == 1:  # the hot cases: no comprehension frame
        node.next_functions = (edge_of(inputs[0]),)
    elif n == 2:
        node.next_functions = (edge_of(inputs[0]), edge_of(inputs[1]))
    else:
        node.next_functions = tuple([edge_of(t) for t in inputs])
    if len(outputs) == 1:  # one output always receives its gradient: no metadata needed
        o = outputs[0]
        o.grad_fn, o._requires_grad = node, True
        if o._output_nr:  # 0 is the class default: a fresh output needs no third attribute
            o._output_nr = 0
        return node
    meta = []
    for i, o in enumerate(outputs):
        o.grad_fn = node
        o._output_nr = i
        o._requires_grad = True
        meta.append((o._data.shape, o.dtype, o.device))
    node._output_meta = tuple(meta)
    return node


def needs_grad(*tensors) -> bool:
    """True when grad mode is on and some input requires grad."""
    if not grad_mode.GRAD_ENABLED[0]:
        return False
    for t in tensors:
        if t is not None and t._requires_grad:
            return True
    return False


# --- user-defined functions ----------------------------------------------------------------

class FunctionCtx(Node):
    """The ``ctx`` of a custom Function: it is also the backward node (as in PyTorch)."""

    _fn_class = None
    needs_input_grad = ()
    _non_differentiable = ()
    _dirty = ()
    materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        self.save(*tensors)

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = tuple(tensors)

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tuple(tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def apply(self, *grads):
        result = self._fn_class.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next_functions)
        if len(result) < n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        extra = result[n:]
        if any(g is not None for g in extra):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        result = result[:n]
        from ..tensor import Tensor
        checked = []
        for i, (g, meta) in enumerate(zip(result, self._input_meta)):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {self.name()} returned a {type(g).__name__} as "
                                f"gradient {i}; expected a Tensor or None")
            if g is not None and meta is not None:
                shape, dtype = meta
                if tuple(g.shape) != shape:
                    raise RuntimeError(f"function {self.name()} returned an invalid gradient at "
                                       f"index {i} - got {list(g.shape)} but expected shape "
                                       f"compatible with {list(shape)}")
                if g.dtype is not dtype:  # as PyTorch: cast to the input's dtype
                    g = g.to(dtype)
            checked.append(g)
        return tuple(checked)


class Function:
    """Base class for custom differentiable operations (``forward``/``backward`` staticmethods).

    Call ``MyFunction.apply(*args)``; never instantiate it.
    """

    _backward_cls = FunctionCtx

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (FunctionCtx,), {"_fn_class": cls})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must implement forward")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("a Function subclass must implement backward")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..tensor import Tensor
        ctx = cls._backward_cls()
        tensor_args = [a if isinstance(a, Tensor) else None for a in args]
        ctx.needs_input_grad = tuple(t is not None and t.requires_grad for t in tensor_args)
        ctx._input_meta = tuple(None if t is None else (tuple(t.shape), t.dtype)
                                for t in tensor_args)
        recording = needs_grad(*tensor_args)
        with grad_mode.no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, tuple)
        outputs = (out,) if single else out
        if recording:
            for t in ctx._dirty:
                if t.is_leaf and t.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                       "in-place operation.")
            # an output that is an input (and not marked dirty) must become a new tensor object
            arg_ids = {id(t) for t in tensor_args if t is not None}
            dirty_ids = {id(t) for t in ctx._dirty}
            outputs = tuple(o._alias() if isinstance(o, Tensor) and id(o) in arg_ids
                            and id(o) not in dirty_ids else o for o in outputs)
            tensors = [o for o in outputs if isinstance(o, Tensor)]
            record(ctx, tensor_args, tensors)
            # integer outputs (indices, counts) can never carry gradient, marked or not (float
            # and complex ones can: dtype categories 2 and 3)
            for t in list(ctx._non_differentiable) + [t for t in tensors
                                                      if t.dtype.category < 2]:
                t._requires_grad = False
                t.grad_fn = None
        return outputs[0] if single else outputs
