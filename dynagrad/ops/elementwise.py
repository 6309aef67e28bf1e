"""Elementwise ops: one table line per op (scalar expression, dtype rule, gradient).

Adding an op is one ``_define`` call: the expression becomes a Numba kernel on first use (per dtype
and layout class), the gradient is written with dynagrad ops (so it is differentiable again), and
the registry attaches the Tensor method and the in-place ``name_`` variant. A few ops with no
scalar expression for both targets (nextafter, gcd, lcm, frexp) run one NumPy call on the host
buffers: a host round trip on CUDA.

Example:
    >>> import dynagrad as dg
    >>> dg.exp(dg.zeros(2)), dg.tensor([1, 2]) * 2.5
    (tensor([1., 1.]), tensor([2.5000, 5.0000]))
"""
from __future__ import annotations

import math
import re
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Node, accumulator, edge_of, node_class, record
from ..dtypes import bool_, result_type
from ..errors import describe
from ..kernels import cache as kernel_cache
from ..kernels.cpu import backend as cpu, memory, scalarlib
from ..kernels.backend import backend
from ..kernels.cuda.device_array import DeviceArray
from ..kernels.cpu.templates import BLOCK, whole_blocks_only
from ..tensor import TENSOR_TYPES, Tensor, _new, _wrap
from ..layout import empty_in_order, in_c_order, input_dim_order, output_dim_order
from ..shapes import broadcast_shapes
from .placement import common_device
from ..kernels.buffers import host, move_array
from ..kernels import complex_math
from .registry import REGISTRY, register, tensor_method

_CATEGORY = {0: "b", 1: "i", 2: "f"}
# A float literal that is not part of a name or number (``0.5``, ``1e-3``; not the 1 of log1p)
_FLOAT_LITERAL = re.compile(r"(?<![\w.])(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?"
                            r"(?![\w.])")


def float32_literals(expr: str) -> str:
    """``expr`` with its float literals as float32 constants, for float32 kernels: a Python float
    is a float64, and one ``0.5 * x`` turns the whole expression into float64 math, which does
    not vectorize with scalarlib's float32 transcendentals.

    Example:
        >>> float32_literals("0.5 * x if x > 1e-3 else log1p(x)")
        'numba.float32(0.5) * x if x > numba.float32(1e-3) else log1p(x)'
    """
    return _FLOAT_LITERAL.sub(lambda m: f"numba.float32({m.group(0)})", expr)


class Elementwise:
    """One elementwise op: expressions by dtype category, a dtype rule, and per-input gradients."""

    def __init__(self, name, exprs, rule, grads, saves, node_name, params=(), bounded=None):
        self.name = name
        self.exprs = exprs              # {"f": "...", "i": "...", "b": "..."} (missing = unsupported)
        self.exprs32 = {**exprs, "f": float32_literals(exprs["f"])} if "f" in exprs else exprs
        self.rule = rule                # promote | float | compare | logical | int | where
        self.grads = grads              # per input: f(g, *inputs, out, **params) or None
        self.saves = saves              # which inputs (by index) and "out" backward reads
        self.save_flags = (0 in saves, 1 in saves, "out" in saves)
        # input index -> the inputs whose gradient formulas read it (None: all of them); an
        # input nobody who requires grad reads is not saved (x * 2 keeps no reference to x)
        self.read_by = {}
        self.params = params            # names of scalar parameters passed to the kernel
        # (bound, expressions): a unary op whose float expression holds only for inputs of at
        # most ``bound`` in magnitude (scalarlib's fsin, fcos, ftan) runs these beyond it and
        # on a GPU
        self.bounded = bounded
        # a node's default meta: every input shaped and typed like the output (the hot paths'
        # same-shape case, which then builds no metadata)
        self.node_cls = type(node_name, (_ElementwiseNode,),
                             {"op": self, "meta": (_LIKE_OUTPUT,) * len(grads)}) if grads else None
        # hot-path entries filled on first use: dtype, (dtype, "p"), (dtype, "s"), (dtype,
        # scalar type) or, in place, ("o", dtype[, scalar type], layout) -> (kernel entry
        # point, output dtype, output numpy dtype, scalar caster); see fast_binary
        self.fast = {}
        # a transcendental's prange kernel covers whole blocks: other sizes take compute's tail
        self.blocked = any(whole_blocks_only(e) for e in exprs.values())
        self.binary = binary_function(self, lambda a, b: compute(self, (a, b)))
        self.unary = unary_function(self)

    def expr_for(self, ct):
        """The expression the kernels of compute dtype ``ct`` run, None if unsupported."""
        return (self.exprs32 if ct is dtypes.float32 else self.exprs).get(_CATEGORY[ct.category])

    def dtypes_for(self, operands):
        """(output dtype, compute dtype) for these operands, or a TypeError."""
        rt = result_type(*operands)
        rule = self.rule
        if rule == "promote":
            return rt, rt.compute
        if rule == "float":
            out = rt if rt.is_floating_point or rt.is_complex else dtypes.get_default_dtype()
            return out, out.compute
        if rule == "compare":
            return bool_, rt.compute
        if rule == "logical":
            return bool_, bool_
        if rule == "int":
            if rt.is_floating_point:
                raise TypeError(f"{self.name}: only integer and bool tensors are supported "
                                f"(got " + ", ".join(describe(o) for o in operands) + ")")
            return rt, rt.compute
        if rule == "where":  # where(cond, x, y): the dtype of x and y
            out = result_type(*operands[1:])
            return out, out.compute
        raise AssertionError(rule)


_NO_PARAMS: dict = {}
_NO_SCALARS = (None, None)
_LIKE_OUTPUT = ("input shaped and typed like the output",)  # a node.meta entry


class _ElementwiseNode(Node):
    op: Elementwise
    # what a node of an op that saves nothing, with tensor inputs and no parameters, holds
    # (one layout fits both arities: inputs, then the output)
    _saved = (None, None, None)
    scalars = _NO_SCALARS
    params = _NO_PARAMS
    complex = False  # recorded by the complex path: complex_grads' formulas apply

    def backward(self, g):
        saved = self.saved_tensors
        n = len(self.meta)
        scalars = self.scalars
        inputs = saved[:n] if scalars is _NO_SCALARS else [
            s if s is not None else a for s, a in zip(saved[:n], scalars)]
        out = saved[n]
        if out is not None and grad_mode.GRAD_ENABLED[0]:
            # create_graph: the saved output is a history-free alias; a formula that reads it
            # must see it as this node's output so the gradient of the gradient flows back here
            out = out._alias()
            out.grad_fn, out._output_nr, out._requires_grad = self, 0, True
        params = self.params
        result = []
        grads = complex_grads(self.op) if self.complex else self.op.grads
        for meta, edge, fn in zip(self.meta, self.next_functions, grads):
            if meta is None or edge is None or fn is None:
                result.append(None)
                continue
            gi = fn(g, *inputs, out, **params) if params else fn(g, *inputs, out)
            if meta is _LIKE_OUTPUT:
                result.append(gi)
                continue
            shape, dt = meta
            if gi._data.shape != shape:
                gi = sum_to(gi, shape)
            if gi.dtype.is_complex and not dt.is_complex:  # a real input: the real part
                gi = gi.real
            if gi.dtype is not dt:
                gi = gi.to(dt)
            result.append(gi)
        return tuple(result)


# op name -> its gradient formulas for complex operands where the rule below does not hold
# (set by the modules that define them: ops.complex gives abs its g * sgn(x))
COMPLEX_GRADS: dict = {}


def complex_grads(op: Elementwise) -> tuple:
    """``op``'s gradient formulas for complex operands, in PyTorch's convention (the conjugate
    Wirtinger derivative). For a holomorphic op whose real formula is ``g * f'(x)`` the complex
    one is ``g * conj(f'(z))`` = ``conj(formula(conj(g), ...))``: each formula is wrapped so."""
    grads = COMPLEX_GRADS.get(op.name)
    if grads is None:
        from .complex import conj

        def wrapped(fn):
            if fn is None:
                return None
            return lambda g, *args, **kw: conj(fn(conj(g), *args, **kw))
        grads = COMPLEX_GRADS[op.name] = tuple(wrapped(fn) for fn in op.grads)
    return grads


def compute(op: Elementwise, operands: tuple, params: dict | None = None, out: Tensor | None = None):
    """Run ``op`` on tensors / Python scalars and record its gradient node when needed."""
    out_dt, ct = op.dtypes_for(operands)
    if ct.is_complex:  # NumPy on the host buffers (see kernels.complex_math)
        return _complex_compute(op, operands, out, out_dt, ct)
    expr = op.expr_for(ct)
    if expr is None:
        raise TypeError(f"{op.name}: not supported for dtype {ct.name} (got "
                        + ", ".join(describe(o) for o in operands) + ")")
    arrays, kinds, types, shapes = [], [], [], []
    ct_np = ct.np
    tensors = [o for o in operands if isinstance(o, Tensor)]
    on_gpu = common_device(op.name, tensors)  # None on the CPU, else the CUDA device index
    for i, o in enumerate(operands):
        if isinstance(o, Tensor):
            a = o._data
            want = bool_ if op.rule == "where" and i == 0 else ct
            if o.dtype is not want:
                a = a.astype(want.np)
            # a 0-dim CPU tensor becomes a scalar argument; on a GPU reading it would mean a
            # device-to-host copy, so there it stays an array that broadcasts
            if a.ndim or on_gpu is not None:
                shapes.append(a.shape)
                kinds.append("a")
                arrays.append(a)
            else:
                kinds.append("s")
                arrays.append(a[()])
            types.append(want.name)
        else:
            if isinstance(o, complex):
                raise TypeError(f"{op.name}: complex numbers are not supported")
            kinds.append("s")
            arrays.append(ct_np.type(o))
            types.append(ct.name)
    if op.bounded is not None and (on_gpu is not None or not _within(arrays[0], op.bounded[0])):
        expr = op.bounded[1][_CATEGORY[ct.category]]
    if not shapes:  # everything 0-dim or scalar: compute as 1-element arrays
        shape = ()
    elif len(shapes) == 1 or all(s == shapes[0] for s in shapes):
        shape = shapes[0]
    else:
        shape = broadcast_shapes(op.name, *(o.shape for o in operands if isinstance(o, Tensor)))
    if op.rule in ("int", "promote") and ct.category == 1 and op.name in _INT_DIVISIONS:
        _check_int_divisor(op.name, operands[1])
    kparams = ()
    if params:
        kparams = tuple((k, ct.name, ct_np.type(params[k])) for k in op.params)
    out_np_dt = (bool_ if out_dt is bool_ else out_dt.compute).np
    if out is not None:
        _check_inplace(op.name, out, out_dt, shape, operands)
    if out is not None and out._data.dtype == out_np_dt and out_dt is out_dt.compute:
        res = out._data
    elif on_gpu is None:  # (a CPU result takes its operands' memory order; CUDA's is C order)
        order = output_dim_order(shape, [a for a, k in zip(arrays, kinds) if k == "a"])
        res = (memory.empty(shape, out_np_dt) if order is None
               else empty_in_order(shape, order, out_np_dt))
    else:
        res = DeviceArray.empty(shape, out_np_dt, on_gpu)
    out_name = "bool" if out_dt is bool_ else out_dt.compute.name
    target = res
    if shape == ():  # kernels take at least 1-D arrays: run a 0-dim result as one element
        arrays = [a.reshape(1) if k == "a" else a for a, k in zip(arrays, kinds)]
        target = res.reshape(1)
    backend(res).elementwise(expr, tuple(kinds), tuple(types), out_name, tuple(arrays), target,
                             kparams)
    if out is not None:
        if res is not out._data:
            out._data[...] = res
        out._vc[0] += 1
        return out
    if res.dtype != out_dt.np:
        res = res.astype(out_dt.np)
    result = _wrap(res, out_dt)
    if op.node_cls is not None and grad_mode.GRAD_ENABLED[0] and out_dt.is_floating_point:
        for t in tensors:
            if t._requires_grad:
                _record(op, operands, result, params)
                break
    return result


def _complex_compute(op: Elementwise, operands: tuple, out, out_dt, ct):
    """``compute`` for a complex compute dtype: ``kernels.complex_math``'s NumPy function on the
    host buffers (a CUDA operand makes a host round trip)."""
    if op.name not in complex_math.FUNCTIONS:
        raise complex_math.refusal(op.name, ct.name)
    tensors = [o for o in operands if isinstance(o, Tensor)]
    on_gpu = common_device(op.name, tensors)
    args = []
    for i, o in enumerate(operands):
        want = bool_ if op.rule == "where" and i == 0 else ct
        if isinstance(o, Tensor):
            a = host(o._data)
            args.append(a if o.dtype is want else a.astype(want.np))
        else:
            args.append(want.np.type(o))
    if op.name in complex_math.REAL_RESULT:
        if out is not None:
            raise RuntimeError(f"In-place {op.name} is not supported for complex tensors.")
        out_dt = out_dt.to_real()
    shape = broadcast_shapes(op.name, *(o.shape for o in tensors))
    res = complex_math.run(op.name, args)
    res = np.asarray(res, dtype=out_dt.np, order="C")
    if out is not None:
        _check_inplace(op.name, out, out_dt, shape, operands)
        backend(out._data).copy(res, out._data)
        out._vc[0] += 1
        return out
    result = _wrap(res if on_gpu is None else move_array(res, on_gpu), out_dt)
    if (op.node_cls is not None and grad_mode.GRAD_ENABLED[0]
            and any(t._requires_grad for t in tensors)):
        _record(op, operands, result, None)
        result.grad_fn.complex = True
    return result


def _within(a, bound: float) -> bool:
    """Whether no element of ``a`` (a CPU array operand or a scalar) exceeds ``bound`` in
    magnitude (NaN does not): ``Elementwise.bounded``'s check, a count of the elements beyond
    it (a sum: vectorized and threaded; a running maximum kept the loop scalar)."""
    if type(a) is not np.ndarray:  # a scalar, or a CUDA buffer (its op runs the bounded form)
        return isinstance(a, (float, int, np.generic)) and not math.fabs(a) > bound
    if not a.size:
        return True
    rows = a.reshape(1, -1, 1)  # (a copy of a non-contiguous one)
    fold = _COUNT_BEYOND.get(bound) or _COUNT_BEYOND.setdefault(
        bound, ("0", f"acc += 1.0 if abs(v) > {bound!r} else 0.0", "acc", "float64"))
    if a.size >= cpu.FLAT_PARALLEL_MIN_ELEMENTS or a.dtype not in _COUNT_DTYPES:
        return not cpu.reduce_axis(rows, 1, fold, np.float64)[0, 0]
    count = np.empty((1, 1))  # small: the compiled fold called directly, no dispatch
    cpu.reduce_entry(fold, a.dtype.name, "float64")(rows, count)
    return not count[0, 0]


_COUNT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_COUNT_BEYOND: dict = {}  # bound -> the fold counting elements beyond it (see _within)


# --- the hot path ----------------------------------------------------------------------------
# Same-dtype, same-shape, contiguous operands (or a tensor and a Python number) skip dtype
# resolution, broadcasting and layout selection: one dict lookup finds the compiled kernel.

_FAST_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int64, dtypes.bool_)
_PARALLEL_MIN = cpu.FLAT_PARALLEL_MIN_ELEMENTS
_BROADCAST_MIN = cpu.BROADCAST_LAYOUT_MIN_ELEMENTS
_pooled = memory.empty
_empty = np.empty  # (a global name: one lookup instead of two on every small op)
_GRAD = grad_mode.GRAD_ENABLED
_HITS = kernel_cache.hot_hits  # the hot path counts its cache hits like every other lookup
kernel_cache._clear_hooks.append(lambda: [op.fast.clear() for op in OPS.values()])


def binary_function(op: Elementwise, fallback):
    """The hot path of binary ``op`` as a function ``(a, b) -> Tensor`` for a Tensor ``a``;
    anything it does not cover goes to ``fallback(a, b)``.

    Tier 1: same shape, both contiguous (flat kernel). Tier 2: same dtype, any layout or
    broadcast, at most 4-D (strided kernel). Tensor with a Python number: flat kernel. Operators
    get their own function (with a fallback that may return NotImplemented), so ``a + b`` runs
    one Python frame instead of two.
    """
    fast = op.fast
    record = op.node_cls is not None
    blocked = op.blocked

    def run(a, b):
        da = a._data
        tb = type(b)
        if tb in TENSOR_TYPES:
            db = b._data
            shape = da.shape  # one tuple, used twice
            # (the checks are ordered so that the common case pays for as few as possible)
            dt = a.dtype
            if db.shape == shape and shape and b.dtype is dt:
                if da.size < _PARALLEL_MIN:
                    # ravel() is a view of a contiguous input and a C-order copy (base None) of
                    # any other, which costs less than checking layouts on every call; a copied
                    # 1-D input is fine, one of more dims may ask for a permuted output
                    fa, fb = da.ravel(), db.ravel()
                    if ((fa.base is None and not in_c_order(da)) or
                            (fb.base is None and not in_c_order(db))) and len(shape) > 1:
                        return _permuted(op, a, b)
                    entry = fast.get(dt)
                    if entry is None:
                        return _fill_fast(op, dt, (a, b), ("a", "a"), "c")
                    res = _empty(shape, entry[2])
                else:  # threaded kernel, pooled output
                    if (blocked and da.size % BLOCK) or not (da.flags.c_contiguous
                                                              and db.flags.c_contiguous):
                        return fallback(a, b)  # (a strided kernel beats a large copy)
                    entry = fast.get((dt, "p"))
                    if entry is None:
                        return _fill_fast(op, (dt, "p"), (a, b), ("a", "a"), "p")
                    res = _pooled(shape, entry[2])
                    fa, fb = da.ravel(), db.ravel()
                try:
                    entry[0](fa, fb, res.ravel())
                except TypeError:  # a CUDA buffer, which Numba refuses to unbox before any work
                    return fallback(a, b)
                meta = None  # inputs shaped like the output
            elif (b.dtype is dt and 0 < da.ndim <= 4 and 0 < db.ndim <= 4
                  and (da.flags.c_contiguous or in_c_order(da))
                  and (db.flags.c_contiguous or in_c_order(db))):  # (else a permuted result)
                shape = broadcast_shapes(op.name, shape, db.shape)
                if math.prod(shape) >= _BROADCAST_MIN:  # the vectorized broadcast layout
                    return fallback(a, b)
                entry = fast.get((dt, "s"))
                if entry is None:
                    return _fill_fast(op, (dt, "s"), (a, b), ("a", "a"), "s")
                res = _empty(shape, entry[2])
                try:
                    entry[0](da[_PAD[4 - da.ndim]], db[_PAD[4 - db.ndim]],
                             res[_PAD[4 - len(shape)]])
                except TypeError:  # a CUDA buffer (see above)
                    return fallback(a, b)
                meta = ((da.shape, dt), (db.shape, dt))
            else:
                return fallback(a, b)
            _HITS[0] += 1
            out = _new(Tensor)  # _wrap, inlined
            out._data, out.dtype, out._vc = res, entry[1], [0]
            if (a._requires_grad or b._requires_grad) and record and _GRAD[0]:
                _record_pair(op, a, b, out, meta)
            return out
        if (tb is float or tb is int) and da.size < _PARALLEL_MIN:
            key = (a.dtype, tb)
            entry = fast.get(key)
            if entry is None:
                return _fill_fast(op, key, (a, b), ("a", "s"), "c")
            fa = da.ravel()
            if fa.base is None and da.ndim > 1 and not in_c_order(da):  # (see above)
                return _permuted(op, a, b)
            res = _empty(da.shape, entry[2])
            try:
                entry[0](fa, entry[3](b), res.ravel())
            except TypeError:  # a CUDA buffer (see above)
                return fallback(a, b)
            _HITS[0] += 1
            out = _new(Tensor)  # _wrap, inlined
            out._data, out.dtype, out._vc = res, entry[1], [0]
            if a._requires_grad and record and _GRAD[0]:
                _record(op, (a, b), out, None)
            return out
        return fallback(a, b)
    return run


def fast_binary(op: Elementwise, a: Tensor, b) -> Tensor:
    """``op(a, b)`` for a Tensor ``a`` (hot path first, then the general ``compute``)."""
    return op.binary(a, b)


_PAD = tuple((None,) * k for k in range(5))


def unary_function(op: Elementwise):
    """The hot path of unary ``op`` as a function ``(input) -> Tensor`` (one Python frame for
    ``x.relu()``); non-tensor inputs and large non-contiguous ones take the general ``compute``,
    as do large inputs of a transcendental that are not whole blocks (they need a tail call)."""
    fast = op.fast
    record = op.node_cls is not None
    blocked = op.blocked
    bound = op.bounded[0] if op.bounded is not None else None

    def run(a):
        if type(a) not in TENSOR_TYPES:
            return compute(op, (_tensor(a, op.name),))
        da = a._data
        if da.size >= _PARALLEL_MIN:  # threaded kernel, pooled output
            if (blocked and da.size % BLOCK) or not da.flags.c_contiguous:
                return compute(op, (a,))
            entry = fast.get((a.dtype, "p"))
            if entry is None:
                return _fill_fast(op, (a.dtype, "p"), (a,), ("a",), "p")
            res = _pooled(da.shape, entry[2])
            fa = da.ravel()
        else:
            fa = da.ravel()
            if fa.base is None and da.ndim > 1 and not in_c_order(da):  # see binary_function
                return _permuted(op, a)
            entry = fast.get(a.dtype)
            if entry is None:
                return _fill_fast(op, a.dtype, (a,), ("a",), "c")
            res = _empty(da.shape, entry[2])
        if bound is not None and not _within(fa, bound):
            return compute(op, (a,))
        try:
            entry[0](fa, res.ravel())
        except TypeError:  # a CUDA buffer, which Numba refuses to unbox before any work
            return compute(op, (a,))
        _HITS[0] += 1
        out = _new(Tensor)  # _wrap, inlined
        out._data, out.dtype, out._vc = res, entry[1], [0]
        if a._requires_grad and record and _GRAD[0]:
            _record_single(op, a, out)
        return out
    return run


def _permuted(op: Elementwise, a: Tensor, b=None) -> Tensor:
    """``op(a)`` or ``op(a, b)`` (``b`` a Python number or a tensor shaped like ``a``) for a
    small ``a`` whose result takes a permuted layout (see ``_layout``). Operands laid out alike
    (a transposed matrix, attention heads' ``transpose(1, 2)``, a slice of either) run the hot
    path on their dims in memory order, and the result is permuted back, laid out as they are
    (faster than through ``compute``); any other layout takes ``compute``."""
    operands = (a,) if b is None else (a, b)
    da = a._data
    order = input_dim_order(da)
    if order is None or (type(b) in TENSOR_TYPES and b._data.strides != da.strides):
        return compute(op, operands)
    flat = [_permuted_alias(o, order) if type(o) in TENSOR_TYPES else o for o in operands]
    out = op.unary(flat[0]) if b is None else op.binary(flat[0], flat[1])
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    out._data = out._data.transpose(back)
    if op.node_cls is not None and _GRAD[0] and any(
            type(o) in TENSOR_TYPES and o._requires_grad for o in operands):
        _record(op, operands, out, None)
    return out


def _permuted_alias(t: Tensor, order: tuple) -> Tensor:
    """A history-free Tensor over ``t``'s memory with its dims in ``order``."""
    alias = _new(Tensor)
    alias._data, alias.dtype, alias._vc = t._data.transpose(order), t.dtype, t._vc
    return alias


def fast_unary(op: Elementwise, a: Tensor) -> Tensor:
    """``op(a)`` (hot path first, then the general ``compute``)."""
    return op.unary(a)


def _fill_fast(op: Elementwise, key, operands, kinds, layout) -> Tensor:
    """Run the general path once, then remember its kernel if this case may use the hot path."""
    result = compute(op, operands)
    _remember_fast(op, key, operands, kinds, layout)
    return result


def _remember_fast(op: Elementwise, key, operands, kinds, layout) -> None:
    """Store the kernel the general path just used under ``op.fast[key]`` when eligible."""
    a = operands[0]
    out_dt, ct = op.dtypes_for(operands)
    int_division = op.name in _INT_DIVISIONS and ct.category == 1  # needs its zero check
    if (a.dtype in _FAST_DTYPES and ct is a.dtype and op.rule != "where" and not int_division
            and (out_dt is ct or out_dt is bool_) and a._data.ndim):
        types = tuple(ct.name for _ in kinds)
        ckey = (op.expr_for(ct), kinds, types,
                "bool" if out_dt is bool_ else out_dt.name, layout, ())
        kernel = kernel_cache._memory.get(ckey)
        if kernel is not None:
            # Call the compiled entry point directly (skipping Numba's type dispatch): safe here
            # because the hot path only admits exactly this dtype and rank (1-D contiguous for
            # layouts "c" and "p", 4-D of any strides for layout "s").
            entry = kernel.overloads[kernel.signatures[0]].entry_point
            op.fast[key] = (entry, out_dt, out_dt.np, ct.np.type)


def _record(op, operands, result, params) -> None:
    """Attach ``op``'s backward node to ``result`` (one pass over the operands, no generators)."""
    node = op.node_cls()
    saves = op.saves
    edges, meta, scalars, saved = [], [], [], []
    for o in operands:
        if isinstance(o, Tensor):
            edges.append(edge_of(o))
            meta.append((o._data.shape, o.dtype))
            scalars.append(None)
        else:
            edges.append(None)
            meta.append(None)
            scalars.append(o)
    for i, o in enumerate(operands):
        saved.append(o if i in saves and scalars[i] is None and _needed(op, i, edges) else None)
    saved.append(result._alias() if "out" in saves else None)
    node.next_functions = tuple(edges)
    node.meta = meta
    node.scalars = scalars
    node.params = params or _NO_PARAMS
    node._saved = saved
    node._saved_versions = [None if t is None else t._vc[0] for t in saved]
    result.grad_fn = node
    result._requires_grad = True


def _needed(op, i: int, edges) -> bool:
    """Whether input ``i`` must be saved: some input whose gradient reads it requires grad."""
    readers = op.read_by.get(i)
    return readers is None or any(edges[j] is not None for j in readers)


def _record_pair(op, a: Tensor, b: Tensor, result: Tensor, meta) -> None:
    """``_record`` for two tensors (the hot path: ``edge_of`` inlined, class defaults for the
    scalars, the params and an op that saves nothing; ``meta`` None: both inputs shaped and
    typed like ``result``)."""
    node = op.node_cls()
    ea = eb = None
    if a._requires_grad:
        ea = ((a.grad_fn, a._output_nr) if a.grad_fn is not None
              else (a._accum or accumulator(a), 0))
    if b._requires_grad:
        eb = ((b.grad_fn, b._output_nr) if b.grad_fn is not None
              else (b._accum or accumulator(b), 0))
    node.next_functions = (ea, eb)
    if meta is not None:
        node.meta = meta
    s0, s1, so = op.save_flags
    if s0 or s1 or so:
        # the output is saved as a history-free alias: no result -> node -> result cycle
        node._saved = (a if s0 and _needed(op, 0, node.next_functions) else None,
                       b if s1 and _needed(op, 1, node.next_functions) else None,
                       result._alias() if so else None)
        node._saved_versions = (a._vc[0], b._vc[0], 0)
    result.grad_fn = node
    result._requires_grad = True


def _record_single(op, a: Tensor, result: Tensor) -> None:
    """``_record`` for a unary op (the hot path)."""
    node = op.node_cls()
    node.next_functions = ((a.grad_fn, a._output_nr) if a.grad_fn is not None
                           else (a._accum or accumulator(a), 0),)
    s0, _, so = op.save_flags
    if so:  # (result._alias(), inlined)
        alias = _new(Tensor)
        alias._data, alias.dtype, alias._vc = result._data, result.dtype, result._vc
        node._saved = (a if s0 else None, alias)
        node._saved_versions = (a._vc[0], 0)
    elif s0:
        node._saved = (a, None)
        node._saved_versions = (a._vc[0], 0)
    result.grad_fn = node
    result._requires_grad = True


def _check_inplace(name, out, out_dt, shape, operands):
    if out.dtype is not out_dt and dtypes.promote_types(out_dt, out.dtype) is not out.dtype:
        raise RuntimeError(f"{name}_: result type {out_dt.name} can't be cast to the desired "
                           f"output type {out.dtype.name}")
    if tuple(out._data.shape) != tuple(shape):
        raise RuntimeError(f"{name}_: output with shape {tuple(out._data.shape)} doesn't match "
                           f"the broadcast shape {tuple(shape)}")


_INT_DIVISIONS = ("floor_divide", "remainder", "fmod")


def _check_int_divisor(name, divisor) -> None:
    zero = (host(divisor._data) == 0).any() if isinstance(divisor, Tensor) else divisor == 0
    if zero:
        raise ZeroDivisionError(f"{name}: integer division by zero")


def inplace(op: Elementwise, self: Tensor, operands: tuple, params=None) -> Tensor:
    """``self`` <- op(operands) in place (``operands[0]`` is ``self`` for most ops)."""
    da = self._data
    flags = da.flags
    if not flags.writeable:
        raise RuntimeError(f"{op.name}_: unsupported operation: the tensor is a broadcast (expanded)"
                           f" view where several elements share one memory location; clone it "
                           f"first (got {describe(self)})")
    if _GRAD[0]:
        for o in operands:  # (a loop, not any(): no generator on every small in-place op)
            if isinstance(o, Tensor) and o._requires_grad:
                return _inplace_recorded(op, self, operands, params)
    if (params is None and len(operands) <= 2 and operands[0] is self and flags.c_contiguous
            and type(da) is not DeviceArray):
        return _inplace_flat(op, self, operands)
    return compute(op, operands, params, out=self)


def _inplace_recorded(op: Elementwise, self: Tensor, operands: tuple, params) -> Tensor:
    """``inplace`` where an operand requires grad: ``self`` becomes the op's output in the graph."""
    if self.grad_fn is None and self._requires_grad:
        raise RuntimeError(f"{op.name}_: a leaf Variable that requires grad is being used in "
                           "an in-place operation.")
    if op.node_cls is None:
        raise RuntimeError(f"{op.name}_: the derivative is not implemented for in-place use")
    return rebase_inplace(self, lambda old: compute(op, tuple(
        old if o is self else o for o in operands), params))


def _inplace_flat(op: Elementwise, self: Tensor, operands: tuple) -> Tensor:
    """``self`` <- op(self[, other]) for a contiguous CPU ``self`` (no autograd): the kernel that
    reads ``self`` as its output (operand kind "o") straight from ``op.fast``, once the general
    path has compiled it (threaded from ``_PARALLEL_MIN`` elements, as out of place)."""
    da = self._data
    if da.size < _PARALLEL_MIN:
        layout = "c"
    elif op.blocked and da.size % BLOCK:  # needs compute's tail call
        return compute(op, operands, None, out=self)
    else:
        layout = "p"
    if len(operands) == 1:
        key, kinds, args = ("o", self.dtype, layout), ("o",), ()
    else:
        other = operands[1]
        if type(other) in TENSOR_TYPES:
            db = other._data
            if (other is self or other.dtype is not self.dtype or type(db) is DeviceArray
                    or db.shape != da.shape or not db.flags.c_contiguous):
                return compute(op, operands, None, out=self)
            key, kinds, args = ("o", self.dtype, layout), ("o", "a"), (db.ravel(),)
        elif type(other) in (float, int):
            key, kinds, args = ("o", self.dtype, type(other), layout), ("o", "s"), None
        else:
            return compute(op, operands, None, out=self)
    entry = op.fast.get(key)
    if entry is None:
        result = compute(op, operands, None, out=self)
        _remember_fast(op, key, operands, kinds, layout)
        return result
    # (an entry exists only where compute wrote into self's buffer: the result has its dtype)
    if op.bounded is not None and not _within(da, op.bounded[0]):
        return compute(op, operands, None, out=self)
    if args is None:
        args = (entry[3](operands[1]),)
    _HITS[0] += 1
    entry[0](*args, da.ravel())
    self._vc[0] += 1
    return self


def rebase_inplace(self: Tensor, fn) -> Tensor:
    """In-place op with autograd: compute out-of-place on a snapshot of ``self``'s old value, write
    the result into ``self`` and make ``self`` the op's output in the graph."""
    if self._base is not None and self._base._requires_grad:
        raise RuntimeError("an in-place operation on a view of a tensor that requires grad is not "
                           "supported with autograd in this version; use the out-of-place op")
    old = _wrap(self._data.copy(), self.dtype)
    old._requires_grad, old.grad_fn, old._output_nr = (self._requires_grad, self.grad_fn,
                                                       self._output_nr)
    old._accum = self._accum
    res = fn(old)
    self._data[...] = res._data
    self._vc[0] += 1
    if res.grad_fn is not None:
        self.grad_fn, self._output_nr, self._requires_grad = res.grad_fn, res._output_nr, True
    return self


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum ``g`` over the dimensions that broadcasting added to reach it from ``shape``."""
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and g.shape[lead + i] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(shape) if lead else g


# --- the table ---------------------------------------------------------------------------

OPS: dict[str, Elementwise] = {}


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _define(name, exprs, rule="promote", grads=None, saves=(), params=()):
    if isinstance(exprs, str):
        exprs = {"f": exprs, "i": exprs}
    bounded = _BOUNDED.get(name)
    op = Elementwise(name, exprs, rule, grads, set(saves), f"{_camel(name)}Backward0", params,
                     None if bounded is None else (bounded[0], {"f": bounded[1], "i": bounded[1]}))
    OPS[name] = op
    return op


def _unary_fn(op: Elementwise):
    fn = op.unary

    def fn_(self: Tensor) -> Tensor:
        return inplace(op, self, (self,))
    fn.__name__, fn_.__name__ = op.name, op.name + "_"
    fn.__doc__ = f"Elementwise ``{op.name}`` (see torch.{op.name})."
    return fn, fn_


def _binary_fn(op: Elementwise):
    def fn(input, other) -> Tensor:
        return fast_binary(op, _tensor(input, op.name), other)

    def fn_(self: Tensor, other) -> Tensor:
        return inplace(op, self, (self, other))
    fn.__name__, fn_.__name__ = op.name, op.name + "_"
    fn.__doc__ = f"Elementwise ``{op.name}`` with broadcasting (see torch.{op.name})."
    return fn, fn_


def _tensor(x, name):
    if isinstance(x, Tensor):
        return x
    from ._util import as_tensor_arg
    return as_tensor_arg(x, name)


def _not_differentiable(name):
    def fail(*args, **kw):
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")
    return fail


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_DEG = math.pi / 180.0
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# unary, floating result ("float" rule: integer inputs give the default float dtype)
_UNARY_FLOAT = {
    "exp": ("fexp(x)", lambda g, x, o: g * o, "o"),
    "exp2": ("fexp2(x)", lambda g, x, o: g * o * _LN2, "o"),
    "expm1": ("fexpm1(x)", lambda g, x, o: g * (o + 1), "o"),
    "log": ("flog(x)", lambda g, x, o: g / x, "x"),
    "log2": ("flog2(x)", lambda g, x, o: g / (x * _LN2), "x"),
    "log10": ("flog10(x)", lambda g, x, o: g / (x * _LN10), "x"),
    "log1p": ("flog1p(x)", lambda g, x, o: g / (x + 1), "x"),
    "sqrt": ("math.sqrt(x) if x >= 0 else math.nan", lambda g, x, o: g / (2 * o), "o"),
    "rsqrt": ("1.0 / math.sqrt(x) if x >= 0 else math.nan",
              lambda g, x, o: g * o * o * o * -0.5, "o"),
    "sin": ("fsin(x)", lambda g, x, o: g * cos(x), "x"),
    "cos": ("fcos(x)", lambda g, x, o: -(g * sin(x)), "x"),
    "tan": ("ftan(x)", lambda g, x, o: g * (1 + o * o), "o"),
    "asin": ("math.asin(x) if -1 <= x <= 1 else math.nan",
             lambda g, x, o: g * rsqrt(1 - x * x), "x"),
    "acos": ("math.acos(x) if -1 <= x <= 1 else math.nan",
             lambda g, x, o: -(g * rsqrt(1 - x * x)), "x"),
    "atan": ("fatan(x)", lambda g, x, o: g / (1 + x * x), "x"),
    "asinh": ("fasinh(x)", lambda g, x, o: g * rsqrt(x * x + 1), "x"),
    "sinh": ("math.sinh(x)", lambda g, x, o: g * cosh(x), "x"),
    "cosh": ("math.cosh(x)", lambda g, x, o: g * sinh(x), "x"),
    "tanh": ("ftanh(x)", lambda g, x, o: g * (1 - o * o), "o"),
    "sigmoid": ("fsigmoid(x)", lambda g, x, o: g * o * (1 - o), "o"),
    "erf": ("ferf(x)", lambda g, x, o: g * exp(-(x * x)) * _TWO_OVER_SQRT_PI, "x"),
    "reciprocal": ("1.0 / x", lambda g, x, o: -(g * o * o), "o"),
    "acosh": ("math.acosh(x) if x >= 1.0 else math.nan",
              lambda g, x, o: g * rsqrt(x * x - 1), "x"),
    # (math.atanh raises at +-1 in Python, which the CUDA simulator runs: the poles by hand)
    "atanh": (("math.atanh(x) if -1.0 < x < 1.0 else "
               "(math.copysign(math.inf, x) if abs(x) == 1.0 else math.nan)"),
              lambda g, x, o: g / (1 - x * x), "x"),
    "deg2rad": ("x * 0.017453292519943295", lambda g, x, o: g * _DEG, ""),
    "rad2deg": ("x * 57.29577951308232", lambda g, x, o: g * (1 / _DEG), ""),
}

# ops whose expression above is exact only up to a bound: (bound, the expression beyond it)
_BOUNDED = {"sin": (scalarlib.SINCOS_BOUND, "math.sin(x)"),
            "cos": (scalarlib.SINCOS_BOUND, "math.cos(x)"),
            "tan": (scalarlib.SINCOS_BOUND, "math.tan(x)")}

# unary, dtype kept (integers stay integers)
_UNARY_SAME = {
    "neg": ({"f": "-x", "i": "-x"}, lambda g, x, o: -g, ""),
    "abs": ({"f": "abs(x)", "i": "abs(x)", "b": "x"}, lambda g, x, o: g * sign(x), "x"),
    "sign": ({"f": "0.0 if x != x else (1.0 if x > 0 else (-1.0 if x < 0 else 0.0))",
              "i": "1 if x > 0 else (-1 if x < 0 else 0)",
              "b": "x"}, lambda g, x, o: g * 0, ""),
    "floor": ({"f": "np.floor(x)", "i": "x", "b": "x"}, lambda g, x, o: g * 0, ""),
    "ceil": ({"f": "np.ceil(x)", "i": "x", "b": "x"}, lambda g, x, o: g * 0, ""),
    "trunc": ({"f": "np.trunc(x)", "i": "x", "b": "x"}, lambda g, x, o: g * 0, ""),
    "frac": ({"f": "frac(x)"}, lambda g, x, o: g, ""),
    "relu": ({"f": "0.0 if x <= 0 else x", "i": "0 if x <= 0 else x"},
             lambda g, x, o: fast_binary(_RELU_BACKWARD, o, g), "o"),
}

_BINARY = {
    # name: (exprs, rule, grad wrt input, grad wrt other, saves)
    "add": ({"f": "x + y", "i": "x + y", "b": "x or y"}, "promote",
            lambda g, x, y, o: g, lambda g, x, y, o: g, ()),
    "sub": ({"f": "x - y", "i": "x - y"}, "promote",
            lambda g, x, y, o: g, lambda g, x, y, o: -g, ()),
    "mul": ({"f": "x * y", "i": "x * y", "b": "x and y"}, "promote",
            lambda g, x, y, o: g * y, lambda g, x, y, o: g * x, (0, 1)),
    "div": ("x / y", "float",
            lambda g, x, y, o: g / y, lambda g, x, y, o: -(g * x) / (y * y), (0, 1)),
    "floor_divide": ({"f": "floor_div(x, y)", "i": "x // y"}, "promote",
                     _not_differentiable("floor_divide"), _not_differentiable("floor_divide"), ()),
    "remainder": ({"f": "py_mod(x, y)", "i": "x % y"}, "promote",
                  lambda g, x, y, o: g, lambda g, x, y, o: -(g * floor_divide(x, y)), (0, 1)),
    "fmod": ({"f": "np.fmod(x, y)", "i": "int_fmod(x, y)"}, "promote",
             lambda g, x, y, o: g, lambda g, x, y, o: -(g * trunc(x / y)), (0, 1)),
    "pow": ({"f": "x ** y", "i": "int_pow(x, y)"}, "promote",
            lambda g, x, y, o: _pow_grad_base(g, x, y),
            lambda g, x, y, o: _pow_grad_exp(g, x, o), (0, 1, "out")),
    "maximum": ({"f": "fmax_nan(x, y)", "i": "max(x, y)", "b": "x or y"}, "promote",
                lambda g, x, y, o: _minmax_grad(g, x, y, True),
                lambda g, x, y, o: _minmax_grad(g, y, x, True), (0, 1)),
    "minimum": ({"f": "fmin_nan(x, y)", "i": "min(x, y)", "b": "x and y"}, "promote",
                lambda g, x, y, o: _minmax_grad(g, x, y, False),
                lambda g, x, y, o: _minmax_grad(g, y, x, False), (0, 1)),
    "atan2": ("math.atan2(x, y)", "float",
              lambda g, x, y, o: g * y / (x * x + y * y),
              lambda g, x, y, o: -(g * x) / (x * x + y * y), (0, 1)),
    "hypot": ({"f": "math.hypot(x, y)"}, "promote",
              lambda g, x, y, o: g * x / o, lambda g, x, y, o: g * y / o, (0, 1, "out")),
    # log(exp(x) + exp(y)) from the larger operand; equal operands (infinities included) are
    # the larger plus log 2, which also keeps inf - inf out
    "logaddexp": ({"f": "x + 0.6931471805599453 if x == y else "
                        "max(x, y) + math.log1p(math.exp(-abs(x - y)))"}, "promote",
                  lambda g, x, y, o: g * exp(x - o), lambda g, x, y, o: g * exp(y - o),
                  (0, 1, "out")),
    "logaddexp2": ({"f": "x + 1.0 if x == y else "
                         "max(x, y) + math.log1p(2.0 ** -abs(x - y)) * 1.4426950408889634"},
                   "promote", lambda g, x, y, o: g * exp2(x - o),
                   lambda g, x, y, o: g * exp2(y - o), (0, 1, "out")),
    # d/dx copysign(x, y) = sign(x) * sign(copysign(x, y)), taken as 0 at x == 0 (as torch)
    "copysign": ("math.copysign(x, y)", "float",
                 lambda g, x, y, o: where(x == 0, 0.0, g * o / x), lambda g, x, y, o: g * 0,
                 (0, "out")),
    # maximum and minimum that ignore NaN; a tie's gradient goes to the first operand (as torch)
    "fmax": ({"f": "y if x != x else (x if y != y else (x if x >= y else y))",
              "i": "max(x, y)", "b": "x or y"}, "promote",
             lambda g, x, y, o: where(logical_or(x >= y, isnan(y)), g, 0.0),
             lambda g, x, y, o: where(logical_or(x >= y, isnan(y)), 0.0, g), (0, 1)),
    "fmin": ({"f": "y if x != x else (x if y != y else (x if x <= y else y))",
              "i": "min(x, y)", "b": "x and y"}, "promote",
             lambda g, x, y, o: where(logical_or(x <= y, isnan(y)), g, 0.0),
             lambda g, x, y, o: where(logical_or(x <= y, isnan(y)), 0.0, g), (0, 1)),
    # 0 below zero, 1 above, ``values`` at zero (NaN counts as below, as torch)
    "heaviside": ({"f": "y if x == 0 else (1.0 if x > 0 else 0.0)",
                   "i": "y if x == 0 else (1 if x > 0 else 0)", "b": "x or y"}, "promote",
                  _not_differentiable("heaviside"), _not_differentiable("heaviside"), ()),
}

_NONDIFF_BINARY = {
    "eq": ("compare", {"f": "x == y", "i": "x == y", "b": "x == y"}),
    "ne": ("compare", {"f": "x != y", "i": "x != y", "b": "x != y"}),
    "lt": ("compare", {"f": "x < y", "i": "x < y", "b": "x < y"}),
    "le": ("compare", {"f": "x <= y", "i": "x <= y", "b": "x <= y"}),
    "gt": ("compare", {"f": "x > y", "i": "x > y", "b": "x > y"}),
    "ge": ("compare", {"f": "x >= y", "i": "x >= y", "b": "x >= y"}),
    "logical_and": ("logical", {"b": "x and y"}),
    "logical_or": ("logical", {"b": "x or y"}),
    "logical_xor": ("logical", {"b": "x != y"}),
    "bitwise_and": ("int", {"i": "x & y", "b": "x and y"}),
    "bitwise_or": ("int", {"i": "x | y", "b": "x or y"}),
    "bitwise_xor": ("int", {"i": "x ^ y", "b": "x != y"}),
    "bitwise_left_shift": ("int", {"i": "x << y"}),
    "bitwise_right_shift": ("int", {"i": "x >> y"}),
}

_NONDIFF_UNARY = {
    "logical_not": ("logical", {"b": "not x"}),
    "bitwise_not": ("int", {"i": "~x", "b": "not x"}),
    "isnan": ("compare", {"f": "x != x", "i": "False", "b": "False"}),
    "isinf": ("compare", {"f": "math.isinf(x)", "i": "False", "b": "False"}),
    "isfinite": ("compare", {"f": "math.isfinite(x)", "i": "True", "b": "True"}),
    "isposinf": ("compare", {"f": "x == math.inf", "i": "False", "b": "False"}),
    "isneginf": ("compare", {"f": "x == -math.inf", "i": "False", "b": "False"}),
    # the sign bit (so -0.0 and -nan count as negative)
    "signbit": ("compare", {"f": "math.copysign(1.0, x) < 0.0", "i": "x < 0", "b": "False"}),
}


def _pow_grad_base(g, x, y):
    if isinstance(y, Tensor):
        return where(y == 0, 0.0, g * y * pow(x, y - 1))
    if y == 0:
        return g * 0
    return g * y * pow(x, y - 1)


def _pow_grad_exp(g, x, o):
    if isinstance(x, Tensor):  # d(x^y)/dy = x^y log x, taken as 0 where x == 0 and y >= 0
        return where(x == 0, 0.0, g * o * log(x))
    return g * o * math.log(x) if x > 0 else g * 0


def _minmax_grad(g, mine, other, is_max):
    wins = gt(mine, other) if is_max else lt(mine, other)
    tie = eq(mine, other)
    return where(wins, g, 0.0) + where(tie, g * 0.5, 0.0)


_SAVES = {"": (), "x": (0,), "o": ("out",)}
for _name, (_e, _grad, _saves) in {**_UNARY_FLOAT, **_UNARY_SAME}.items():
    _define(_name, _e, "float" if _name in _UNARY_FLOAT else "promote", (_grad,), _SAVES[_saves])
for _name, (_e, _rule, _gx, _gy, _saves) in _BINARY.items():
    _define(_name, _e, _rule, (_gx, _gy), _saves)
OPS["mul"].read_by = {0: (1,), 1: (0,)}
OPS["div"].read_by = {0: (1,)}
for _name, (_rule, _e) in {**_NONDIFF_BINARY, **_NONDIFF_UNARY}.items():
    _define(_name, _e, _rule)

# relu's gradient as one kernel (PyTorch's threshold_backward): ``g * (out > 0)`` took three
# (compare, bool-to-float cast, multiply). Operands: relu's output, then the incoming gradient;
# its own gradient reaches only the incoming gradient (the mask is constant almost everywhere).
_RELU_BACKWARD = Elementwise(
    "relu_backward", {"f": "0.0 if x <= 0 else y"}, "promote",
    (None, lambda gg, o, g, out: fast_binary(_RELU_BACKWARD, o, gg)), {0},
    "ReluBackwardBackward0")
_RELU_BACKWARD.read_by = {0: (1,)}

_define("clamp", {"f": "clamp(x, lo, hi)", "i": "clamp(x, lo, hi)"}, "promote",
        (lambda g, x, o, lo, hi: where(logical_and(x >= lo, x <= hi), g, 0.0),), (0,),
        params=("lo", "hi"))
_define("nan_to_num", {"f": "nan_to_num(x, nan, posinf, neginf)", "i": "x", "b": "x"},
        "promote", (lambda g, x, o, nan, posinf, neginf: where(isfinite(x), g, 0.0),), (0,),
        params=("nan", "posinf", "neginf"))
_define("lerp", "x + z * (y - x) if abs(z) < 0.5 else y - (y - x) * (1 - z)", "float",
        (lambda g, x, y, w, o: g * (1 - w), lambda g, x, y, w, o: g * w,
         lambda g, x, y, w, o: g * (y - x)), (0, 1, 2))
_define("where", {"f": "y if x else z", "i": "y if x else z", "b": "y if x else z"}, "where",
        (None, lambda g, c, x, y, o: where(c, g, 0.0), lambda g, c, x, y, o: where(c, 0.0, g)),
        (0,))
_define("round", {"f": "round_half_even(x)", "i": "x", "b": "x"}, "promote",
        (lambda g, x, o: g * 0,), ())

# --- public functions ----------------------------------------------------------------------

_g = globals()
# table ops that torch gives no in-place form
_NO_INPLACE = ("logaddexp", "logaddexp2", "fmax", "fmin", "isposinf", "isneginf", "signbit")
for _name, _op in OPS.items():
    if _name in ("clamp", "nan_to_num", "lerp", "where", "round", "heaviside"):
        continue
    _arity = 1 if _name in _UNARY_FLOAT or _name in _UNARY_SAME or _name in _NONDIFF_UNARY else 2
    _f, _f_ = (_unary_fn if _arity == 1 else _binary_fn)(_op)
    _g[_name] = _f
    register(_name, _f, "elementwise", inplace=None if _name in _NO_INPLACE else _f_)


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion."""
    if alpha != 1:
        other = mul(_tensor(other, "add"), alpha) if isinstance(other, Tensor) else other * alpha
    return fast_binary(OPS["add"], _tensor(input, "add"), other)


def add_(self, other, *, alpha=1) -> Tensor:
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return inplace(OPS["add"], self, (self, other))


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other`` with broadcasting and type promotion."""
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return fast_binary(OPS["sub"], _tensor(input, "sub"), other)


def sub_(self, other, *, alpha=1) -> Tensor:
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return inplace(OPS["sub"], self, (self, other))


def div(input, other, *, rounding_mode=None) -> Tensor:
    """True division; ``rounding_mode`` 'floor' or 'trunc' rounds the quotient."""
    input = _tensor(input, "div")
    if rounding_mode is None:
        return fast_binary(OPS["div"], input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        q = compute(OPS["div"], (input, other))
        q = trunc(q)
        rt = result_type(input, other)
        return q if q.dtype is rt else q.to(rt)
    raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")


def div_(self, other, *, rounding_mode=None) -> Tensor:
    if rounding_mode is not None:
        res = div(self, other, rounding_mode=rounding_mode)
        return rebase_inplace(self, lambda old: div(old, other, rounding_mode=rounding_mode)) \
            if res.requires_grad else self.copy_(res)
    return inplace(OPS["div"], self, (self, other))


for _n, _f, _f_ in (("add", add, add_), ("sub", sub, sub_), ("div", div, div_)):
    register(_n, _f, "elementwise", inplace=_f_)


def _clamp_bounds(x, min, max, name):
    if min is None and max is None:
        raise RuntimeError(f"{name}: At least one of 'min' or 'max' must not be None")
    return min, max


def clamp(input, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` (either bound may be None or a tensor)."""
    input = _tensor(input, "clamp")
    min, max = _clamp_bounds(input, min, max, "clamp")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor_bounds(input, min, max)
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    if not input.dtype.is_floating_point:
        if isinstance(lo, float) or isinstance(hi, float):
            if (min is not None and isinstance(min, float)) or (max is not None and
                                                                isinstance(max, float)):
                return clamp(input.to(dtypes.get_default_dtype()), min, max)
        info = np.iinfo(np.int64)
        lo = info.min if min is None else min
        hi = info.max if max is None else max
    return compute(OPS["clamp"], (input,), {"lo": lo, "hi": hi})


def _clamp_tensor_bounds(input, min, max) -> Tensor:
    """``clamp`` with a tensor bound: maximum / minimum give the values (NaN in any operand
    propagates), and one node gives torch's gradients, which send a tie to ``input`` and a
    crossed pair of bounds (min > max) to ``max`` (``maximum``'s would split a tie)."""
    with grad_mode.no_grad():
        out = input
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
    lo = min if isinstance(min, Tensor) else None
    hi = max if isinstance(max, Tensor) else None
    if grad_mode.GRAD_ENABLED[0] and any(t is not None and t._requires_grad
                                         for t in (input, lo, hi)):
        node = _ClampNode()
        node.save(input, lo, hi)
        node.bounds = (min, max)
        node.meta = [(tuple(t.shape), t.dtype) if t is not None else None
                     for t in (input, lo, hi)]
        record(node, (input, lo, hi), (out,))
    return out


def _clamp_back(node, g):
    x, lo_t, hi_t = node.saved_tensors
    lo, hi = (t if t is not None else b for t, b in zip((lo_t, hi_t), node.bounds))
    if lo is not None and hi is not None:
        grads = (where(logical_and(x >= lo, x <= hi), g, 0.0),
                 where(logical_and(x < lo, lo < hi), g, 0.0),
                 where(logical_or(x > hi, hi < lo), g, 0.0))
    elif lo is not None:
        grads = (where(x >= lo, g, 0.0), where(x < lo, g, 0.0), None)
    else:
        grads = (where(x <= hi, g, 0.0), None, where(x > hi, g, 0.0))
    result = []
    for gi, meta, edge in zip(grads, node.meta, node.next_functions):
        if gi is None or meta is None or edge is None:
            result.append(None)
            continue
        shape, dt = meta
        gi = sum_to(gi, shape) if tuple(gi.shape) != shape else gi
        result.append(gi if gi.dtype is dt else gi.to(dt))
    return tuple(result)


_ClampNode = node_class("ClampBackward1", _clamp_back)


def clamp_(self, min=None, max=None) -> Tensor:
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return self.copy_(clamp(self, min, max)) if not self.requires_grad else \
            rebase_inplace(self, lambda old: clamp(old, min, max))
    _clamp_bounds(self, min, max, "clamp_")
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    if not self.dtype.is_floating_point:
        info = np.iinfo(np.int64)
        lo = info.min if min is None else min
        hi = info.max if max is None else max
    return inplace(OPS["clamp"], self, (self,), {"lo": lo, "hi": hi})


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (default: dtype limits)."""
    input = _tensor(input, "nan_to_num")
    fin = np.finfo(input.dtype.np) if input.dtype.is_floating_point else None
    posinf = (fin.max if fin is not None else 0) if posinf is None else posinf
    neginf = (fin.min if fin is not None else 0) if neginf is None else neginf
    return compute(OPS["nan_to_num"], (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None) -> Tensor:
    return self.copy_(nan_to_num(self, nan, posinf, neginf)) if not self.requires_grad else \
        rebase_inplace(self, lambda old: nan_to_num(old, nan, posinf, neginf))


def lerp(input, end, weight) -> Tensor:
    """``input + weight * (end - input)``."""
    return compute(OPS["lerp"], (_tensor(input, "lerp"), end, weight))


def lerp_(self, end, weight) -> Tensor:
    return inplace(OPS["lerp"], self, (self, end, weight))


def where(condition, input=None, other=None) -> Tensor:
    """Pick ``input`` where ``condition`` holds, else ``other``; ``where(c)`` is ``nonzero``."""
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    condition = _tensor(condition, "where")
    if condition.dtype is not bool_:
        raise RuntimeError(f"where: expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.name}")
    return compute(OPS["where"], (condition, input, other))


def _where_method(self, condition, other) -> Tensor:
    """``x.where(condition, y)`` is ``where(condition, x, y)``: as in torch, the tensor is the value
    kept where ``condition`` holds (not the condition).

    Example:
        >>> dg.tensor([1.0, 2.0]).where(dg.tensor([True, False]), 0.0).tolist()
        [1.0, 0.0]
    """
    return where(condition, self, other)


def round(input, *, decimals: int = 0) -> Tensor:
    """Round half to even (as torch.round); ``decimals`` rounds to that many places."""
    input = _tensor(input, "round")
    if decimals:
        scale = 10.0 ** decimals
        return compute(OPS["round"], (input * scale,)) / scale
    return compute(OPS["round"], (input,))


def round_(self, *, decimals: int = 0) -> Tensor:
    return self.copy_(round(self, decimals=decimals)) if not self.requires_grad else \
        rebase_inplace(self, lambda old: round(old, decimals=decimals))


def float_power(input, exponent) -> Tensor:
    """``pow`` computed in float64."""
    input = _tensor(input, "float_power").to(dtypes.float64)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dtypes.float64)
    return pow(input, exponent)


def square(input) -> Tensor:
    """``input * input`` (a bool tensor squares to int64, as torch's ``pow(input, 2)``)."""
    input = _tensor(input, "square")
    if input.dtype is bool_:
        input = input.to(dtypes.int64)
    return mul(input, input)


def square_(self) -> Tensor:
    return _assign("square", self, square)


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input`` (``other`` may be a Python scalar)."""
    input = _tensor(input, "rsub")
    return compute(OPS["sub"], (other, input if alpha == 1 else mul(input, alpha)))


register("clamp", clamp, "elementwise", inplace=clamp_, aliases=("clip",))
register("nan_to_num", nan_to_num, "elementwise", inplace=nan_to_num_)
register("lerp", lerp, "elementwise", inplace=lerp_)
register("where", where, "elementwise", method=False)
tensor_method("where", _where_method)
register("round", round, "elementwise", inplace=round_)
register("float_power", float_power, "elementwise")
register("square", square, "elementwise")
register("rsub", rsub, "elementwise")
for _alias, _target in (("multiply", "mul"), ("subtract", "sub"), ("divide", "div"),
                        ("true_divide", "div"), ("negative", "neg"), ("absolute", "abs"),
                        ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                        ("less_equal", "le"), ("not_equal", "ne"), ("arcsin", "asin"),
                        ("arccos", "acos"), ("arctan", "atan"), ("arctan2", "atan2"),
                        ("fix", "trunc")):
    _info = REGISTRY[_target]
    register(_alias, _info.fn, "alias", inplace=getattr(Tensor, _target + "_", None))
    _g[_alias] = _info.fn

# --- more of torch's pointwise functions ------------------------------------------------------
# Compositions of the ops above where torch's definition is one (ldexp, addcmul, isclose...);
# NumPy on the host buffer where no scalar expression fits both targets and speed is not the
# point (nextafter, gcd, lcm, frexp: a host round trip on CUDA).

def _assign(name: str, self: Tensor, fn) -> Tensor:
    """``self`` <- ``fn(self)`` for an in-place form composed of other ops: torch's cast and shape
    checks, then a plain copy, or under autograd ``self`` becomes the result in the graph."""
    res = fn(self)
    _check_inplace(name, self, res.dtype, tuple(res.shape), ())
    if res.requires_grad:
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError(f"{name}_: a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        return rebase_inplace(self, fn)
    return self.copy_(res)


def heaviside(input, values) -> Tensor:
    """0 where ``input < 0``, 1 where ``input > 0``, ``values`` where it is 0 (NaN counts as
    below 0). ``input`` and ``values`` must have one dtype, as in torch.

    Example:
        >>> import dynagrad as dg
        >>> dg.heaviside(dg.tensor([-1.0, 0.0, 2.0]), dg.tensor(0.5)).tolist()
        [0.0, 0.5, 1.0]
    """
    input, values = _tensor(input, "heaviside"), _tensor(values, "heaviside")
    _same_dtype_heaviside(input, values)
    return compute(OPS["heaviside"], (input, values))


def heaviside_(self, values) -> Tensor:
    values = _tensor(values, "heaviside_")
    _same_dtype_heaviside(self, values)
    return inplace(OPS["heaviside"], self, (self, values))


def _same_dtype_heaviside(input, values) -> None:
    if input.dtype is not values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                           f"(got {describe(input)} and {describe(values)})")


def _host_pointwise(name: str, operands: tuple, fn, category: str):
    """``fn`` (a NumPy function) on the operands' host buffers, broadcast, in their promoted
    dtype: ``category`` "f" (float operands only) or "i" (integers, not bool). Returns the host
    result(s), a tensor on the device to put them on, and the promoted dtype."""
    tensors = [o for o in operands if isinstance(o, Tensor)]
    common_device(name, tensors)
    rt = result_type(*operands)
    ok = rt.is_floating_point if category == "f" else (rt.category == 1 and rt is not bool_)
    if not ok:
        kind = "floating point" if category == "f" else "integer"
        raise TypeError(f"{name}: only {kind} tensors are supported (got "
                        + ", ".join(describe(o) for o in operands) + ")")
    broadcast_shapes(name, *(t.shape for t in tensors))  # (its error names the shapes)
    arrays = [host(o._data).astype(rt.np, copy=False) if isinstance(o, Tensor) else rt.np.type(o)
              for o in operands]
    with np.errstate(all="ignore"):
        res = fn(*arrays)
    # (C order: a ufunc's result follows its inputs' layout, and the result is a new tensor)
    res = tuple(np.asarray(r, order="C") for r in res) if isinstance(res, tuple) else \
        np.asarray(res, order="C")
    return res, tensors[0], rt


def _host_result(arr: np.ndarray, ref: Tensor, dt) -> Tensor:
    """The host array ``arr`` as a ``dt`` tensor on ``ref``'s device."""
    out = _wrap(arr.astype(dt.np, copy=False), dt)
    return out if ref.is_cpu else out.to(ref.device)


def _host_binary(name: str, np_fn, category: str):
    """The function and in-place form of a binary op computed by ``np_fn`` on the host."""
    def fn(input, other) -> Tensor:
        res, ref, rt = _host_pointwise(name, (_tensor(input, name), other), np_fn, category)
        return _host_result(res, ref, rt)

    def fn_(self, other) -> Tensor:
        return _assign(name, self, lambda t: fn(t, other))
    fn.__name__, fn_.__name__ = name, name + "_"
    return fn, fn_


nextafter, nextafter_ = _host_binary("nextafter", np.nextafter, "f")
nextafter.__doc__ = """The next float after ``input`` towards ``other``.

    Example:
        >>> import dynagrad as dg
        >>> dg.nextafter(dg.tensor([1.0], dtype=dg.float64), dg.tensor([2.0])).item() - 1.0
        2.220446049250313e-16
    """
gcd, gcd_ = _host_binary("gcd", np.gcd, "i")
gcd.__doc__ = """Greatest common divisor of integer tensors (non-negative; ``gcd(0, 0) = 0``).

    Example:
        >>> import dynagrad as dg
        >>> dg.gcd(dg.tensor([4, -6, 0]), dg.tensor([6, 4, 0])).tolist()
        [2, 2, 0]
    """
lcm, lcm_ = _host_binary("lcm", np.lcm, "i")
lcm.__doc__ = """Least common multiple of integer tensors (non-negative; 0 if either is 0).

    Example:
        >>> import dynagrad as dg
        >>> dg.lcm(dg.tensor([4, -6, 0]), dg.tensor([6, 4, 3])).tolist()
        [12, 12, 0]
    """

_frexp_result = namedtuple("frexp", ["mantissa", "exponent"])


def _frexp_back(node, g):
    return (g * exp2(-node.exponent.to(g.dtype)),)


_FrexpNode = node_class("FrexpBackward0", _frexp_back)


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``0.5 <= |mantissa| <
    1`` (0, inf and NaN keep their value with exponent 0); the exponent is int32.

    Example:
        >>> import dynagrad as dg
        >>> dg.frexp(dg.tensor([8.0, -3.0]))
        frexp(mantissa=tensor([ 0.5000, -0.7500]), exponent=tensor([4, 2], dtype=dynagrad.int32))
    """
    input = _tensor(input, "frexp")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes (got "
                           f"{describe(input)})")
    (m, e), _, _ = _host_pointwise("frexp", (input,), np.frexp, "f")
    mantissa = _host_result(m, input, input.dtype)
    exponent = _host_result(e, input, dtypes.int32)
    if input._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = _FrexpNode()
        node.exponent = exponent
        record(node, (input,), (mantissa,))
    return _frexp_result(mantissa, exponent)


def ldexp(input, other) -> Tensor:
    """``input * 2**other`` (a float result, as torch).

    Example:
        >>> import dynagrad as dg
        >>> dg.ldexp(dg.tensor([1.0, 3.0]), dg.tensor([2, -1])).tolist()
        [4.0, 1.5]
    """
    return mul(_tensor(input, "ldexp"), exp2(_tensor(other, "ldexp")))


def ldexp_(self, other) -> Tensor:
    return _assign("ldexp", self, lambda t: ldexp(t, other))


def float_power_(self, exponent) -> Tensor:
    if self.dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.name} but the "
                           f"operation's result requires dtype float64")
    return _assign("float_power", self, lambda t: float_power(t, exponent))


def positive(input) -> Tensor:
    """``input`` itself (unary plus); refused for bool tensors, as in torch."""
    input = _tensor(input, "positive")
    if input.dtype is bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def clamp_min(input, min) -> Tensor:
    """``clamp(input, min=min)``."""
    return clamp(input, min=min)


def clamp_min_(self, min) -> Tensor:
    return _assign("clamp_min", self, lambda t: clamp(t, min=min))


def clamp_max(input, max) -> Tensor:
    """``clamp(input, max=max)``."""
    return clamp(input, max=max)


def clamp_max_(self, max) -> Tensor:
    return _assign("clamp_max", self, lambda t: clamp(t, max=max))


def _scaled(value, rt):
    """``value`` (addcmul's and addcdiv's scale) in the result's dtype: torch casts it, so an
    integer result truncates a float value."""
    if isinstance(value, Tensor):
        value = value.item()
    return value if rt.is_floating_point else (bool(value) if rt is bool_ else int(value))


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2`` with broadcasting.

    Example:
        >>> import dynagrad as dg
        >>> t1, t2 = dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0])
        >>> dg.addcmul(dg.ones(2), t1, t2, value=0.5).tolist()
        [2.5, 5.0]
    """
    input = _tensor(input, "addcmul")
    value = _scaled(value, result_type(input, tensor1, tensor2))
    prod = mul(tensor1, tensor2)
    return add(input, prod if value == 1 else mul(prod, value))


def addcmul_(self, tensor1, tensor2, *, value=1) -> Tensor:
    return _assign("addcmul", self, lambda t: addcmul(t, tensor1, tensor2, value=value))


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2`` with broadcasting (true division; two integer
    tensors are refused, as in torch).

    Example:
        >>> import dynagrad as dg
        >>> t1, t2 = dg.tensor([1.0, 2.0]), dg.tensor([4.0, 4.0])
        >>> dg.addcdiv(dg.ones(2), t1, t2, value=2).tolist()
        [1.5, 2.0]
    """
    input = _tensor(input, "addcdiv")
    if all(not t.dtype.is_floating_point for t in (_tensor(tensor1, "addcdiv"),
                                                    _tensor(tensor2, "addcdiv"))):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as (input "
                           "+ value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                           "inputs and as (input + value * tensor1 / tensor2) for float inputs. "
                           "The future addcdiv behavior is just the latter implementation: (input "
                           "+ value * tensor1 / tensor2), for all dtypes.")
    value = _scaled(value, result_type(input, tensor1, tensor2))
    quot = div(tensor1, tensor2)
    return add(input, quot if value == 1 else mul(quot, value))


def addcdiv_(self, tensor1, tensor2, *, value=1) -> Tensor:
    return _assign("addcdiv", self, lambda t: addcdiv(t, tensor1, tensor2, value=value))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` (or the two are equal, infinities
    included; NaNs only with ``equal_nan``). Both must have one dtype, as in torch.

    Example:
        >>> import dynagrad as dg
        >>> dg.isclose(dg.tensor([1.0, 2.0]), dg.tensor([1.0 + 1e-7, 2.1])).tolist()
        [True, False]
    """
    input, other = _tensor(input, "isclose"), _tensor(other, "isclose")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"isclose: {input.dtype.name} did not match {other.dtype.name} (both "
                           f"tensors must have the same dtype)")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = eq(input, other)
    if equal_nan and input.dtype.is_floating_point:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    if not input.dtype.is_floating_point:  # (integers and bools compare as floats, as torch)
        input = input.to(dtypes.get_default_dtype())
        other = other.to(input.dtype)
    with grad_mode.no_grad():
        error = abs(sub(input, other))
        within = logical_and(isfinite(error), le(error, add(abs(mul(other, rtol)), atol)))
    return logical_or(close, within)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool).

    Example:
        >>> import dynagrad as dg
        >>> dg.allclose(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.0 + 1e-6]))
        True
    """
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> bool:
    """Whether both tensors have one shape and equal elements (a Python bool; NaN != NaN).

    Example:
        >>> import dynagrad as dg
        >>> dg.equal(dg.tensor([1.0, 2.0]), dg.tensor([1, 2]))
        True
    """
    input, other = _tensor(input, "equal"), _tensor(other, "equal")
    common_device("equal", (input, other))
    if tuple(input.shape) != tuple(other.shape):
        return False
    with grad_mode.no_grad():
        return bool(eq(input, other).all())


for _name, _f, _f_ in (("heaviside", heaviside, heaviside_), ("nextafter", nextafter, nextafter_),
                       ("gcd", gcd, gcd_), ("lcm", lcm, lcm_), ("frexp", frexp, None),
                       ("ldexp", ldexp, ldexp_), ("positive", positive, None),
                       ("clamp_min", clamp_min, clamp_min_), ("clamp_max", clamp_max, clamp_max_),
                       ("addcmul", addcmul, addcmul_), ("addcdiv", addcdiv, addcdiv_),
                       ("isclose", isclose, None), ("allclose", allclose, None),
                       ("equal", equal, None), ("float_power", float_power, float_power_),
                       ("square", square, square_)):
    register(_name, _f, "elementwise", inplace=_f_)
for _alias, _target in (("arccosh", "acosh"), ("arcsinh", "asinh"), ("arctanh", "atanh")):
    register(_alias, REGISTRY[_target].fn, "alias", inplace=getattr(Tensor, _target + "_"))
    _g[_alias] = REGISTRY[_target].fn


# --- activations ----------------------------------------------------------------------------
# torch.nn.functional's pointwise activations, each a pair of rows: the forward kernel and one
# fused kernel for the input gradient (``grad * f'(x)``), so a backward step is one kernel, not
# a chain of small ops. The gradient kernel is itself an op (``<name>_backward``) whose
# derivative is written with dynagrad ops, so double backward works. Their public functions,
# with PyTorch's parameters and checks, are ``ops.nn.activation``'s.
#
# name: (forward, an expression of ``x``; gradient, of ``x`` and the output gradient ``g``;
#        second(gg, x, g, p), the gradient of ``g * f'(x)`` with respect to ``x`` in dynagrad
#        ops, None when ``f`` is piecewise linear (``f'' = 0``); the kernels' scalar parameters)

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_ARG = "(0.7978845608028654 * (x + 0.044715 * x * x * x))"
# softplus(x) as in torch's mish. Expressions call scalarlib's vectorizable float32 forms
# (fexp, flog1p, ftanh, ...), each at most once: two inlined copies of one in a kernel trip a
# Numba IR warning, so gradients that need one twice have a scalarlib function of their own.
_SP = "(x if x > 20.0 else flog1p(fexp(x)))"


def _only_where(cond, value):
    return where(cond, value, 0.0)


def _gelu_second(gg, x, g, p):
    phi = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return gg * g * phi * (2.0 - x * x)


def _gelu_tanh_second(gg, x, g, p):
    t = ((x + x * x * x * 0.044715) * 0.7978845608028654).tanh()
    du = (x * x * 0.134145 + 1.0) * 0.7978845608028654
    ddu = x * (0.7978845608028654 * 6.0 * 0.044715)
    return gg * g * (1.0 - t * t) * (du - x * t * du * du + x * ddu * 0.5)


def _silu_second(gg, x, g, p):
    s = x.sigmoid()
    return gg * g * s * (1.0 - s) * (2.0 + x * (1.0 - 2.0 * s))


def _mish_second(gg, x, g, p):
    s = x.sigmoid()
    t = compute(OPS["softplus"], (x,), {"beta": 1.0, "threshold": 20.0}).tanh()
    return gg * g * (1.0 - t * t) * s * (2.0 + x * (1.0 - s) - 2.0 * x * s * t)


def _softplus_second(gg, x, g, p):
    beta, th = p["beta"], p["threshold"]
    s = (x * beta).sigmoid()
    return _only_where(x * beta <= th, gg * g * s * (1.0 - s) * beta)


def _elu_second(gg, x, g, p):
    a, sc, isc = p["alpha"], p["scale"], p["input_scale"]
    return _only_where(x <= 0, gg * g * (x * isc).exp() * (a * sc * isc * isc))


def _hardswish_second(gg, x, g, p):
    return _only_where(logical_and(x > -3.0, x < 3.0), gg * g / 3.0)


def _softsign_second(gg, x, g, p):
    d = x.abs() + 1.0
    return gg * g * x.sign() * -2.0 / (d * d * d)


def _logsigmoid_second(gg, x, g, p):
    s = x.sigmoid()
    return -(gg * g * s * (1.0 - s))


_ACTIVATIONS = {
    "gelu": ("fgelu(x)", "fgelu_grad(x, g)", _gelu_second, ()),
    "gelu_tanh": (f"0.5 * x * (1.0 + ftanh({_TANH_ARG}))", "fgelu_tanh_grad(x, g)",
                  _gelu_tanh_second, ()),
    "silu": ("x * fsigmoid(x)", "fsilu_grad(x, g)", _silu_second, ()),
    "mish": (f"x * ftanh({_SP})", "fmish_grad(x, g)", _mish_second, ()),
    "softplus": ("x if x * beta > threshold else flog1p(fexp(x * beta)) / beta",
                 "g if x * beta > threshold else g * fsigmoid(x * beta)", _softplus_second,
                 ("beta", "threshold")),
    "elu": ("x * scale if x > 0 else alpha * scale * fexpm1(x * input_scale)",
            "g * scale if x > 0 else g * alpha * scale * input_scale * fexp(x * input_scale)",
            _elu_second, ("alpha", "scale", "input_scale")),
    "leaky_relu": ("x if x > 0 else x * negative_slope", "g if x > 0 else g * negative_slope",
                   None, ("negative_slope",)),
    "hardtanh": ("min_val if x < min_val else (max_val if x > max_val else x)",
                 "g if (x > min_val and x < max_val) else 0.0", None, ("min_val", "max_val")),
    "hardsigmoid": ("0.0 if x <= -3.0 else (1.0 if x >= 3.0 else x / 6.0 + 0.5)",
                    "g / 6.0 if (x > -3.0 and x < 3.0) else 0.0", None, ()),
    "hardswish": ("0.0 if x <= -3.0 else (x if x >= 3.0 else x * (x + 3.0) / 6.0)",
                  "0.0 if x <= -3.0 else (g * (x / 3.0 + 0.5) if x < 3.0 else g)",
                  _hardswish_second, ()),
    "softsign": ("x / (1.0 + abs(x))", "g / ((1.0 + abs(x)) * (1.0 + abs(x)))",
                 _softsign_second, ()),
    "softshrink": ("x - lambd if x > lambd else (x + lambd if x < -lambd else 0.0 * x)",
                   "g if (x > lambd or x < -lambd) else 0.0", None, ("lambd",)),
    "hardshrink": ("x if (x > lambd or x < -lambd) else 0.0 * x",
                   "g if (x > lambd or x < -lambd) else 0.0", None, ("lambd",)),
    "threshold": ("value if x <= threshold else x", "0.0 if x <= threshold else g", None,
                  ("threshold", "value")),
    "logsigmoid": ("min(x, 0.0) - flog1p(fexp(-abs(x)))", "g * (1.0 - fsigmoid(x))",
                   _logsigmoid_second, ()),
}


def _define_activation(name, fwd, bwd, second, params):
    """``OPS[name]`` and its fused gradient ``OPS[name + "_backward"]`` (operands ``x``, ``g``;
    the kernel names its operands x, y in order)."""
    def grad(g, x, out, **p):  # the fused kernel: ``g * f'(x)``
        if not p and g.dtype is x.dtype:
            return fast_binary(backward, x, g)
        return compute(backward, (x, g), p)

    def grad_x(gg, x, g, out, **p):
        return x * 0.0 if second is None else second(gg, x, g, p)

    def grad_g(gg, x, g, out, **p):
        return grad(gg, x, out, **p)

    backward = _define(name + "_backward", {"f": re.sub(r"\bg\b", "y", bwd)}, "promote",
                       (grad_x, grad_g), (0, 1), params)
    _define(name, {"f": fwd}, "promote", (grad,), (0,), params)


for _name, _row in _ACTIVATIONS.items():
    _define_activation(_name, *_row)
