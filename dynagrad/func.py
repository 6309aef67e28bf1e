"""Function transforms (PyTorch's ``torch.func``): ``grad``, ``grad_and_value``, ``vjp``,
``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``linearize``, ``vmap``, ``functional_call``,
``stack_module_state`` and the helpers around them.

The derivative transforms are built on the reverse engine's ``grad``: each call gives the
arguments it differentiates fresh handles, runs ``func`` with grad mode on and asks the engine
for gradients. Inside another transform (or when an argument already requires grad) the
gradients are recorded (``create_graph=True``), so transforms nest: ``grad(grad(f))``,
``jacrev(grad(f))``, ``jacfwd(jacrev(f))``. Forward-mode products (``jvp``, ``jacfwd``,
``linearize``) use the double-vjp trick: ``J v`` is the gradient with respect to a dummy
cotangent ``u`` of ``u^T J v``, so every op with a backward has a forward derivative. A
closure's tensors (not arguments) get a differentiable result only inside another transform or
when an argument requires grad: pass what you differentiate as arguments (``functional_call``).

Arguments may be pytrees: tuples, lists and dicts of Tensors, as in PyTorch.

``vmap(func)`` maps ``func`` over a dimension of its inputs. dynagrad runs ``func`` once per
slice and stacks the results: the values and gradients are those of PyTorch's batching rules
(every op here works on any batch of leading dims, so no op needs a batching rule), the cost is
one call per slice rather than one batched call.

Example:
    >>> import dynagrad as dg
    >>> dg.vmap(dg.dot)(dg.ones(2, 3), dg.ones(2, 3)).tolist()
    [3.0, 3.0]
    >>> dg.func.grad(lambda x: (x ** 3).sum())(dg.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
"""
# PyTorch raises RuntimeError/ValueError for wrong argument types here; so does dynagrad
# ruff: noqa: TRY004
from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable

from .autograd import grad_mode
from .autograd.engine import grad as _engine_grad
from .ops.movement import movedim, select, stack
from .tensor import Tensor

__all__ = ["debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "rearrange",
           "replace_all_batch_norm_modules_", "stack_module_state", "vjp", "vmap"]


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its inputs; the results are stacked along
    ``out_dims``.

    ``in_dims`` is an int (every tensor argument is mapped over that dim), ``None`` (no argument
    is) or a tuple with one entry per positional argument (an int, ``None``, or for a tuple/list
    argument a tuple/list of entries). ``out_dims`` is an int or one int per output. Keyword
    arguments are passed unmapped, as in PyTorch. ``randomness`` and ``chunk_size`` are accepted
    for PyTorch's signature: each slice is a separate call, so random ops draw independently per
    slice (PyTorch's ``"different"``).

    Example:
        >>> import dynagrad as dg
        >>> dg.vmap(lambda row: row.sum(), in_dims=1)(dg.ones(2, 3)).tolist()
        [2.0, 2.0, 2.0]
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        dims = _expand_in_dims(in_dims, args, func)
        size = _batch_size(args, dims, func)
        results = [func(*_slice(args, dims, i), **kwargs) for i in range(size)]
        return _stack_outputs(results, out_dims, func)
    return mapped


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _expand_in_dims(in_dims, args: tuple, func) -> tuple:
    """One in-dim entry per positional argument."""
    if in_dims is None or isinstance(in_dims, int):
        return tuple(in_dims for _ in args)
    if not isinstance(in_dims, (tuple, list)):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...): expected `in_dims` to be "
                         f"int or a (potentially nested) tuple matching the structure of inputs, "
                         f"got: {type(in_dims)}.")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={tuple(in_dims)}, ...)(<inputs>): "
                         f"in_dims is not compatible with the structure of `inputs`. in_dims has "
                         f"structure {len(in_dims)} entries but inputs has structure "
                         f"{len(args)} entries.")
    return tuple(in_dims)


def _leaves(arg, dim):
    """(tensor, dim) pairs of one argument and its in-dim entry (tuples/lists/dicts nest)."""
    if isinstance(arg, dict):
        sub = dim if isinstance(dim, dict) else dict.fromkeys(arg, dim)
        for k, a in arg.items():
            yield from _leaves(a, sub[k])
    elif isinstance(arg, (tuple, list)):
        sub = dim if isinstance(dim, (tuple, list)) else [dim] * len(arg)
        for a, d in zip(arg, sub):
            yield from _leaves(a, d)
    elif isinstance(arg, Tensor) and dim is not None:
        yield arg, dim


def _batch_size(args: tuple, dims: tuple, func) -> int:
    sizes = []
    for arg, dim in zip(args, dims):
        for t, d in _leaves(arg, dim):
            if not -t.ndim <= d < max(t.ndim, 1) or t.ndim == 0:
                raise ValueError(f"vmap({_name(func)}, in_dims={dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for an input but the input is of type Tensor with "
                                 f"{t.ndim} dims. We cannot vmap over dim {d} of it.")
            sizes.append(t.shape[d])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={dims}, ...)(<inputs>): at least one "
                         f"input must be a Tensor over which to vmap (got none)")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap({_name(func)}, in_dims={dims}, ...)(<inputs>): Expected all "
                         f"tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _slice(arg_or_args, dims, i: int):
    if isinstance(arg_or_args, dict):
        sub = dims if isinstance(dims, dict) else dict.fromkeys(arg_or_args, dims)
        return {k: _slice(a, sub[k], i) for k, a in arg_or_args.items()}
    if isinstance(arg_or_args, (tuple, list)):
        sub = dims if isinstance(dims, (tuple, list)) else [dims] * len(arg_or_args)
        return type(arg_or_args)(_slice(a, d, i) for a, d in zip(arg_or_args, sub))
    if isinstance(arg_or_args, Tensor) and dims is not None:
        return select(arg_or_args, dims, i)
    return arg_or_args


def _stack_outputs(results: list, out_dims, func):
    first = results[0]
    if isinstance(first, Tensor):
        return _stack_one(results, out_dims, func)
    if isinstance(first, dict):
        dims = out_dims if isinstance(out_dims, dict) else dict.fromkeys(first, out_dims)
        return {k: _stack_outputs([r[k] for r in results], dims[k], func) for k in first}
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else [out_dims] * len(first)
        if len(dims) != len(first):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): out_dims is not "
                             f"compatible with the structure of `outputs` ({len(first)} outputs)")
        return type(first)(_stack_outputs([r[k] for r in results], d, func)
                           for k, d in enumerate(dims))
    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got "
                     f"type {type(first)}. Did you mean to set out_dims= to None for output?")


def _stack_one(tensors: list, out_dim, func) -> Tensor:
    if out_dim is None:
        return tensors[0]
    stacked = stack(tensors, 0)
    return movedim(stacked, 0, out_dim) if out_dim not in (0, -stacked.ndim) else stacked


# --- pytrees ---------------------------------------------------------------------------------

def _flatten(tree) -> tuple[list, Callable]:
    """The Tensors (and other leaves) of a tuple/list/dict tree, and a function rebuilding the
    tree from new leaves in the same order."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]
        sizes = [len(p[0]) for p in parts]
        kind = type(tree)

        def rebuild(new):
            out, at = [], 0
            for (_, sub), n in zip(parts, sizes):
                out.append(sub(new[at:at + n]))
                at += n
            return tuple(out) if kind is tuple else kind(out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild_values = _flatten([tree[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, rebuild_values(new)))
    return [tree], lambda new: new[0]


def _structure(tree) -> str:
    """A short picture of a tree's shape (``*`` per leaf) for error messages."""
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_structure(t) for t in tree)
        return f"({inner},)" if isinstance(tree, tuple) and len(tree) == 1 else f"({inner})"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in tree.items()) + "}"
    return "*"


def _same_structure(a, b) -> bool:
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same_structure(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(_same_structure(a[k], b[k]) for k in a))
    return True


# --- levels: when results must stay differentiable --------------------------------------------

_LEVEL = [0]  # how many derivative transforms are running (a nested one must record its graph)


@contextlib.contextmanager
def _transform(leaves: list):
    """Run one transform level with grad mode on; yields whether the gradients it computes must
    be recorded: inside another transform, or when a differentiated argument requires grad (the
    caller may differentiate the result), grad mode being on outside."""
    record = grad_mode.GRAD_ENABLED[0] and (
        _LEVEL[0] > 0 or any(isinstance(t, Tensor) and t.requires_grad for t in leaves))
    _LEVEL[0] += 1
    try:
        with grad_mode.enable_grad():
            yield record
    finally:
        _LEVEL[0] -= 1


def _handle(t):
    """The tensor ``func`` sees in place of argument ``t``: a view of it when it requires grad
    (gradients flow on to the caller's tensor), else a detached leaf that requires grad."""
    if not isinstance(t, Tensor):
        raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
    if t.requires_grad:
        return t.view_as(t)
    if not t.dtype.is_floating_point and not t.dtype.is_complex:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return t.detach().requires_grad_(True)


def _keep(x, record: bool):
    """A result as returned: detached (tree-wise) unless the graph is recorded."""
    if record:
        return x
    leaves, rebuild = _flatten(x)
    return rebuild([t.detach() if isinstance(t, Tensor) else t for t in leaves])


def _grads(outputs: list, inputs: list, cotangents: list, record: bool) -> list:
    """Engine gradients of the outputs that require grad; zeros for an input they miss."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if pairs:
        got = _engine_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                           retain_graph=True, create_graph=record, allow_unused=True)
    else:
        got = [None] * len(inputs)
    return [t.new_zeros(tuple(t.shape)) if g is None else g for g, t in zip(got, inputs)]


def _argnums(argnums, nargs: int) -> tuple[tuple, bool]:
    """The positions to differentiate (normalised) and whether ``argnums`` was a tuple."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums, many = (argnums,), False
    elif isinstance(argnums, tuple) and all(isinstance(n, int) for n in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        nums, many = argnums, True
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for n in nums:
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnum={n}, but only {nargs} positional inputs")
        out.append(n % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(out), many


def _diff_args(args: tuple, argnums) -> tuple:
    """(new args with handles in place of the differentiated ones, their leaves' handles, a
    function rebuilding a per-leaf list into the ``argnums`` tree, the original leaves)."""
    nums, many = _argnums(argnums, len(args))
    args = list(args)
    originals, handles, rebuilds = [], [], []
    for n in nums:
        leaves, rebuild = _flatten(args[n])
        new = [_handle(t) for t in leaves]
        args[n] = rebuild(new)
        originals += leaves
        handles += new
        rebuilds.append((len(new), rebuild))

    def regroup(per_leaf: list):
        trees, at = [], 0
        for n, rebuild in rebuilds:
            trees.append(rebuild(per_leaf[at:at + n]))
            at += n
        return tuple(trees) if many else trees[0]
    return tuple(args), handles, regroup, originals


def _split_aux(out, has_aux: bool, name: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise RuntimeError(f"{name}(f)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out[0], out[1]


# --- grad --------------------------------------------------------------------------------------

def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` made to return ``(gradient, value)`` (``(gradient, (value, aux))`` with
    ``has_aux``); ``func`` must return a scalar Tensor. The gradient nests like the
    ``argnums`` arguments (a tuple for a tuple ``argnums``).

    Example:
        >>> import dynagrad as dg
        >>> g, v = dg.func.grad_and_value(lambda x: (x * x).sum())(dg.tensor([1.0, 2.0]))
        >>> g, v
        (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        args, handles, regroup, originals = _diff_args(args, argnums)
        with _transform(originals) as record:
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.ndim} dims. Maybe you "
                                   "wanted to use the vjp or jacrev APIs instead?")
            grads = _grads([out], handles, [None], record)
        value = _keep(out, record)
        grads = regroup(_keep(grads, record))
        return (grads, (value, _keep(aux, record))) if has_aux else (grads, value)
    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` made to return its gradient with respect to argument ``argnums`` (``(gradient,
    aux)`` with ``has_aux``); ``func`` must return a scalar Tensor. Nests: ``grad(grad(f))`` is
    the second derivative.

    Example:
        >>> import dynagrad as dg
        >>> dg.func.grad(dg.func.grad(lambda x: x ** 3))(dg.tensor(2.0))
        tensor(12.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


# --- vjp, jvp, linearize -----------------------------------------------------------------------

def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (and ``aux``): ``vjp_fn(cotangents)`` returns one
    vector-Jacobian product per primal (a tuple), the cotangents shaped like the output. The
    graph is kept, so ``vjp_fn`` may be called many times.

    Example:
        >>> import dynagrad as dg
        >>> out, fn = dg.func.vjp(lambda x: x ** 2, dg.tensor([1.0, 3.0]))
        >>> fn(dg.ones(2))
        (tensor([2., 6.]),)
    """
    args, handles, regroup, originals = _diff_args(primals, tuple(range(len(primals))))
    with _transform(originals) as record:
        out, aux = _split_aux(func(*args), has_aux, "vjp")
    out_leaves, _ = _flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"non-empty (and pytree-compatible) outputs. Got {type(o)}")

    def vjp_fn(cotangents, *more):
        if more:  # as PyTorch, several outputs may take their cotangents positionally
            cotangents = (cotangents, *more)
        if not _same_structure(cotangents, out):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: "
                               f"{_structure(cotangents)}, primal output: {_structure(out)}")
        cots, _ = _flatten(cotangents)
        needs = record or any(isinstance(c, Tensor) and c.requires_grad for c in cots)
        with _transform(cots) as inner:
            grads = _grads(out_leaves, handles, cots, needs or inner)
        return regroup(_keep(grads, needs or inner))
    result = (_keep(out, record), vjp_fn)
    return (*result, _keep(aux, record)) if has_aux else result


def _check_tangents(primals, tangents) -> None:
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not _same_structure(primals, tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure. For example, if primals is a tuple of 3 "
                           "tensors, tangents also must be. Got primals with structure "
                           f"{_structure(primals)} and tangents with structure "
                           f"{_structure(tangents)}")
    for p, t in zip(_flatten(primals)[0], _flatten(tangents)[0]):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is "
                               f"of size {list(p.shape)} while the given forward gradient is of "
                               f"size {list(t.shape)}.")


class _Linearized:
    """``func`` run once at the primals with its first backward recorded against dummy
    cotangents; ``push(tangents)`` is then one more backward per Jacobian-vector product."""

    def __init__(self, func, primals: tuple, has_aux: bool, name: str):
        args, self.handles, _, originals = _diff_args(primals, tuple(range(len(primals))))
        with _transform(originals) as self.record:
            out, self.aux = _split_aux(func(*args), has_aux, name)
            self.out = out
            self.out_leaves, self.rebuild = _flatten(out)
            for o in self.out_leaves:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"{name}(f, primals, tangents): expected f(*args) to "
                                       f"return only tensors, got unsupported type {type(o)}")
            # u: a dummy cotangent per output; g = J^T u is linear in u, and d(g . v)/du = J v
            self.dummies = [o.new_zeros(tuple(o.shape)).requires_grad_(True)
                            for o in self.out_leaves]
            self.first = _grads(self.out_leaves, self.handles, self.dummies, True)

    def push(self, tangents: list):
        record = self.record or any(t.requires_grad for t in tangents)
        with _transform(tangents) as inner:
            pairs = [(g, v) for g, v in zip(self.first, tangents) if g.requires_grad]
            if pairs:
                got = _engine_grad([g for g, _ in pairs], self.dummies, [v for _, v in pairs],
                                   retain_graph=True, create_graph=record or inner,
                                   allow_unused=True)
            else:
                got = [None] * len(self.dummies)
            res = [d.new_zeros(tuple(d.shape)) if g is None else g
                   for g, d in zip(got, self.dummies)]
        return self.rebuild(_keep(res, record or inner))


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)`` (and ``aux``): the Jacobian-vector product, by the
    double-vjp trick. ``primals`` is a tuple; ``tangents`` has its structure and shapes. An
    output independent of the inputs gets a zero tangent, or an error with ``strict``.

    Example:
        >>> import dynagrad as dg
        >>> dg.func.jvp(lambda x: x ** 2, (dg.tensor([1.0, 3.0]),), (dg.ones(2),))[1]
        tensor([2., 6.])
    """
    _check_tangents(primals, tangents)
    lin = _Linearized(func, primals, has_aux, "jvp")
    if strict and any(not o.requires_grad for o in lin.out_leaves):
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                           "independent of the inputs. This is not allowed with strict=True.")
    result = (_keep(lin.out, lin.record), lin.push(_flatten(tangents)[0]))
    return (*result, _keep(lin.aux, lin.record)) if has_aux else result


def linearize(func: Callable, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at
    ``primals``; ``func`` runs once, each call of ``jvp_fn`` is one backward through the kept
    graph.

    Example:
        >>> import dynagrad as dg
        >>> out, fn = dg.func.linearize(lambda x: x.sin(), dg.tensor([0.0]))
        >>> fn(dg.tensor([2.0]))
        tensor([2.])
    """
    lin = _Linearized(func, primals, False, "linearize")

    def jvp_fn(*tangents):
        _check_tangents(primals, tangents)
        return lin.push(_flatten(tangents)[0])
    return _keep(lin.out, lin.record), jvp_fn


# --- Jacobians and Hessians -------------------------------------------------------------------

def _jacobian(func, argnums, has_aux: bool, forward: bool, name: str) -> Callable:
    """jacrev/jacfwd: for each output leaf, the Jacobian with respect to each differentiated
    argument leaf, shaped ``out.shape + arg.shape``, nested output tree -> argnums tree."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        args, handles, regroup, originals = _diff_args(args, argnums)
        with _transform(originals) as record:
            out, aux = _split_aux(func(*args, **kwargs), has_aux, name)
            out_leaves, rebuild = _flatten(out)
            for o in out_leaves:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"{name}(f, ...)(*args): Expected f(*args) to return "
                                       f"only tensors, got unsupported type {type(o)}")
            if forward:
                jac = _columns(out_leaves, handles, record)
            else:
                jac = _rows(out_leaves, handles, record)
        jac = [regroup(_keep(per_input, record)) for per_input in jac]
        result = rebuild(jac)
        return (result, _keep(aux, record)) if has_aux else result
    return wrapper


def _rows(outs: list, inputs: list, record: bool) -> list:
    """Reverse mode: one vector-Jacobian product per output element."""
    res = []
    for o in outs:
        flat = o.reshape(-1)
        rows = [_grads([flat[e]], inputs, [None], record) for e in range(flat.numel())]
        res.append([
            (stack([r[j] for r in rows], 0) if rows else t.new_zeros((0,) + tuple(t.shape)))
            .reshape(tuple(o.shape) + tuple(t.shape)) for j, t in enumerate(inputs)])
    return res


def _columns(outs: list, inputs: list, record: bool) -> list:
    """Forward mode (double-vjp trick): one Jacobian-vector product per input element, sharing
    the recorded first backward ``g = J^T u``."""
    dummies = [o.new_zeros(tuple(o.shape)).requires_grad_(True) for o in outs]
    first = _grads(outs, inputs, dummies, True)
    res = [[None] * len(inputs) for _ in outs]
    for j, t in enumerate(inputs):
        # the tangent is zero but for element e of input j: only first[j] contributes
        cols = []
        for e in range(t.numel()):
            onehot = t.new_zeros((t.numel(),))
            onehot[e] = 1
            got = (_engine_grad([first[j]], dummies, [onehot.reshape(tuple(t.shape))],
                                retain_graph=True, create_graph=record, allow_unused=True)
                   if first[j].requires_grad else [None] * len(dummies))
            cols.append([d.new_zeros(tuple(d.shape)) if c is None else c
                         for c, d in zip(got, dummies)])
        for i, o in enumerate(outs):
            if cols:
                stacked = stack([c[i] for c in cols], -1)  # out.shape + (t.numel(),)
            else:
                stacked = o.new_zeros(tuple(o.shape) + (0,))
            res[i][j] = stacked.reshape(tuple(o.shape) + tuple(t.shape))
    return res


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """``func`` made to return its Jacobian with respect to argument(s) ``argnums`` by reverse
    mode (one vector-Jacobian product per output element). Each output leaf becomes the
    Jacobian ``out.shape + arg.shape`` (a tuple over ``argnums`` when it is a tuple).
    ``chunk_size`` is accepted: the products run one at a time whatever it is.

    Example:
        >>> import dynagrad as dg
        >>> dg.func.jacrev(lambda x: x ** 2)(dg.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, False, "jacrev")


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """``func`` made to return its Jacobian with respect to argument(s) ``argnums`` by forward
    mode (one Jacobian-vector product per input element, by the double-vjp trick); the same
    values and nesting as ``jacrev``.

    Example:
        >>> import dynagrad as dg
        >>> dg.func.jacfwd(lambda x: x ** 2)(dg.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    return _jacobian(func, argnums, has_aux, True, "jacfwd")


def hessian(func: Callable, argnums=0) -> Callable:
    """``func`` made to return its Hessian with respect to argument(s) ``argnums``:
    ``jacfwd(jacrev(func, argnums), argnums)``, as in PyTorch.

    Example:
        >>> import dynagrad as dg
        >>> dg.func.hessian(lambda x: (x ** 3).sum())(dg.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# --- modules as functions --------------------------------------------------------------------

def _owner(module, name: str):
    """(submodule, attribute) for a dotted parameter/buffer name."""
    prefix, _, attr = name.rpartition(".")
    return (module.get_submodule(prefix) if prefix else module), attr


@contextlib.contextmanager
def _swapped(module, values: dict):
    """Put ``values`` (name -> tensor) in place of the module's parameters/buffers (or as plain
    attributes for other names) and restore the originals on exit."""
    undo = []
    try:
        for name, value in values.items():
            sub, attr = _owner(module, name)
            for store in ("_parameters", "_buffers"):
                table = sub.__dict__[store]
                if attr in table:
                    undo.append((table, attr, table[attr]))
                    table[attr] = value
                    break
            else:  # not a registered tensor: an attribute for the call's duration
                had = attr in sub.__dict__
                undo.append((sub.__dict__, attr, sub.__dict__[attr] if had else _ABSENT))
                sub.__dict__[attr] = value
        yield
    finally:
        for table, attr, old in reversed(undo):
            if old is _ABSENT:
                del table[attr]
            else:
                table[attr] = old


_ABSENT = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with the tensors of ``parameter_and_buffer_dicts`` (a dict, or a sequence
    of dicts with distinct keys, of dotted names as in ``state_dict``) in place of its own
    parameters and buffers; the module is left as it was. With ``tie_weights`` a replacement
    reaches every name tied to the same tensor; ``strict`` requires exactly the module's names.

    Example:
        >>> import dynagrad as dg
        >>> lin = dg.nn.Linear(2, 1)
        >>> p = {"weight": dg.ones(1, 2), "bias": dg.zeros(1)}
        >>> dg.func.functional_call(lin, p, (dg.tensor([1.0, 2.0]),))
        tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        values, seen = {}, {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
            values.update(d)
        repeated = sorted(k for k, n in seen.items() if n > 1)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    own = [(n, t) for n, t in module.named_parameters(remove_duplicate=False)]
    own += [(n, t) for n, t in module.named_buffers(remove_duplicate=False)]
    if strict:
        names = {n for n, _ in own}
        unexpected = [k for k in values if k not in names]
        missing = [n for n, _ in own if n not in values]
        if unexpected or missing:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            raise RuntimeError(msg)
    if tie_weights:  # names sharing one tensor take the replacement given for any of them
        groups: dict = {}
        for n, t in own:
            groups.setdefault(id(t), []).append(n)
        for names in groups.values():
            given = [n for n in names if n in values]
            if len(names) < 2 or not given:
                continue
            if len({id(values[n]) for n in given}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {given}, which "
                                 "are tied. Consider using tie_weights=False")
            for n in names:
                values.setdefault(n, values[given[0]])
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of same-class ``models`` stacked along a new leading dim:
    ``(params, buffers)``, ready for ``vmap`` over ``functional_call``. The stacked parameters
    are new leaves (requiring grad where every model's does).

    Example:
        >>> import dynagrad as dg
        >>> params, _ = dg.func.stack_module_state([dg.nn.Linear(3, 2), dg.nn.Linear(3, 2)])
        >>> tuple(params["weight"].shape)
        (2, 2, 3)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    per_model = [dict(m.named_parameters()) for m in models]
    params = {}
    for k in per_model[0]:
        ts = [p[k] for p in per_model]
        params[k] = stack([t.detach() for t in ts]).requires_grad_(
            all(t.requires_grad for t in ts))
    per_model = [dict(m.named_buffers()) for m in models]
    buffers = {k: stack([b[k] for b in per_model]) for k in per_model[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every batch norm under ``root`` use batch statistics only (no running statistics),
    in place, so it can run under ``vmap``; returns ``root``.

    Example:
        >>> import dynagrad as dg
        >>> m = dg.func.replace_all_batch_norm_modules_(dg.nn.BatchNorm1d(3))
        >>> m.running_mean is None, m.track_running_stats
        (True, False)
    """
    from .nn.modules.norm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


# --- eager identities ----------------------------------------------------------------------

def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The plain tensor under a transform's wrapper. dynagrad's transforms pass ordinary tensors
    to ``func`` (no wrapper types), so this returns ``tensor`` itself."""
    return tensor


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with the semantics PyTorch's functionalization preserves. Functionalization
    rewrites a traced program without in-place ops (and, with ``"mutations_and_views"``,
    without views); dynagrad runs eagerly and traces nothing, so the call runs ``func`` as it
    is: mutations of the inputs happen, as they do after PyTorch copies them back. As in
    PyTorch, an output aliases an input only with ``remove="mutations"`` when no input was
    mutated; otherwise each Tensor output is a copy.

    Example:
        >>> import dynagrad as dg
        >>> x = dg.ones(2)
        >>> y = dg.func.functionalize(lambda a: a.view(-1), remove="mutations_and_views")(x)
        >>> y[0] = 5.0; x
        tensor([1., 1.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for "
                           f"remove={remove}. Valid options are:\n"
                           "     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place "
                           "equivalents.\n"
                           "     remove='mutations_and_views': In addition to the above, all "
                           "aliasing operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        inputs = [t for t in _flatten((args, kwargs))[0] if isinstance(t, Tensor)]
        versions = [t._vc[0] for t in inputs]
        out = func(*args, **kwargs)
        # PyTorch replays an output view on an input it left untouched (the output aliases the
        # input); a mutated input gets the new values copied in, and the outputs are new tensors
        mutated = any(t._vc[0] != v for t, v in zip(inputs, versions))
        if remove == "mutations" and not mutated:
            return out
        leaves, rebuild = _flatten(out)
        return rebuild([t.clone() if isinstance(t, Tensor) else t for t in leaves])
    return wrapper


# --- rearrange ---------------------------------------------------------------------------------

_AXIS = re.compile(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def _parse_side(side: str, pattern: str) -> list:
    """One side of an einops pattern as a list of groups (lists of axis names); ``...`` is the
    name ``"..."``, ``1`` or ``()`` an empty group (a unit dim)."""
    groups, current = [], None
    for tok in _AXIS.findall(side):
        if tok == "(":
            if current is not None:
                raise ValueError(f"Nested brackets are not allowed in pattern {pattern!r}")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError(f"Unbalanced brackets in pattern {pattern!r}")
            groups.append(current)
            current = None
        elif tok == "1":
            if current is None:
                groups.append([])
        elif tok == "..." and current is None:
            groups.append("...")  # bare: one group per dim it stands for
        elif tok == "..." or tok[0].isalpha() or tok[0] == "_":
            (groups.append([tok]) if current is None else current.append(tok))
        else:
            raise ValueError(f"Invalid axis {tok!r} in pattern {pattern!r}")
    if current is not None:
        raise ValueError(f"Unbalanced brackets in pattern {pattern!r}")
    return groups


def rearrange(tensor, pattern: str, **axes_lengths: int) -> Tensor:
    """Reorder, split and merge dims by an einops pattern, e.g. ``"b (h w) c -> b h w c"``
    (axes named on both sides, ``(...)`` groups merged or split, ``...`` for the remaining dims,
    ``1`` or ``()`` a unit dim; a split needs all but one size in ``axes_lengths``). A list or
    tuple of tensors is stacked along a new first dim first.

    Example:
        >>> import dynagrad as dg
        >>> tuple(dg.func.rearrange(dg.zeros(2, 6), "b (h w) -> h b w", h=3).shape)
        (3, 2, 2)
    """
    if isinstance(tensor, (list, tuple)):
        tensor = stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError(f"Pattern must contain a single '->' separator, got {pattern!r}")
    left_s, right_s = pattern.split("->")
    left, right = _parse_side(left_s, pattern), _parse_side(right_s, pattern)
    names_l = [n for g in left for n in ([g] if g == "..." else g)]
    names_r = [n for g in right for n in ([g] if g == "..." else g)]
    if len(set(names_l)) != len(names_l) or len(set(names_r)) != len(names_r):
        raise ValueError(f"Indexing expression contains duplicate dimension in {pattern!r}")
    if set(names_l) != set(names_r):
        raise ValueError(f"Identifiers only on one side of expression (should be on both): "
                         f"{sorted(set(names_l) ^ set(names_r))}")
    if "..." in names_l:
        at = next(k for k, g in enumerate(left) if "..." in g)
        if left[at] != "...":
            raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
        n_ell = tensor.ndim - (len(left) - 1)
        if n_ell < 0:
            raise ValueError(f"Wrong shape: expected >={len(left) - 1} dims. Received "
                             f"{tensor.ndim}-dim tensor.")
        ell = [f"...{k}" for k in range(n_ell)]
        left = left[:at] + [[e] for e in ell] + left[at + 1:]
        expanded = []
        for g in right:  # bare: one group per dim; in parentheses: merged
            if g == "...":
                expanded += [[e] for e in ell]
            else:
                expanded.append([x for n in g for x in (ell if n == "..." else [n])])
        right = expanded
    if len(left) != tensor.ndim:
        raise ValueError(f"Wrong shape: expected {len(left)} dims. Received {tensor.ndim}-dim "
                         f"tensor.")
    sizes = dict(axes_lengths)
    for g, dim in zip(left, tensor.shape):
        unknown = [n for n in g if n not in sizes]
        known = 1
        for n in g:
            known *= sizes.get(n, 1)
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {unknown}")
        if unknown:
            if known == 0 or dim % known:
                raise ValueError(f"Shape mismatch, can't divide axis of length {dim} in chunks "
                                 f"of {known}")
            sizes[unknown[0]] = dim // known
        elif known != dim:
            raise ValueError(f"Shape mismatch, {known} != {dim}")
    order = [n for g in left for n in g]
    elementary = tensor.reshape(tuple(sizes[n] for n in order))
    wanted = [n for g in right for n in g]
    moved = elementary.permute(tuple(order.index(n) for n in wanted))
    shape = []
    for g in right:
        size = 1
        for n in g:
            size *= sizes[n]
        shape.append(size)
    return moved.reshape(tuple(shape))
