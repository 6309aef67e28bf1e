"""Higher-order derivatives of a function: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``,
``vhp`` (PyTorch's ``torch.autograd.functional``).

Each takes ``func`` and its ``inputs`` (a Tensor or a tuple of Tensors) and calls ``func`` on fresh
copies of them, so the caller's tensors and their ``.grad`` are never touched. Everything is built
on the reverse engine's ``grad``: a Jacobian is one vector-Jacobian product per output element;
forward-mode products use the double-vjp trick (``J v`` is the gradient, with respect to a dummy
cotangent ``u``, of ``u^T J v``), so no forward-mode engine is needed and every op that has a
backward has a forward derivative too. ``vectorize=True`` is accepted and computes the same values
with the same per-element loop.

The nesting of results follows PyTorch: a Tensor where the user gave a Tensor, a tuple where the
user gave a tuple; a Jacobian of tuple outputs and tuple inputs is ``J[i][j]`` = d output i /
d input j, shaped ``output_i.shape + input_j.shape``.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x * x, dg.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""
from __future__ import annotations

from ..tensor import Tensor
from . import grad_mode
from .engine import grad as _engine_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# --- argument handling ---------------------------------------------------------------------

def _as_tuple(x, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(whether ``x`` was a tuple, ``x`` as a tuple of Tensors); anything else is PyTorch's
    TypeError."""
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                                f"tuple of Tensors but the value at index {i} has type "
                                f"{type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the given {arg_name} has type {type(el)}.")
    return is_tuple, items


def _nest(res, to_unpack):
    """Undo ``_as_tuple`` on a result: ``to_unpack`` is one flag (a flat result) or two (a
    result indexed [output][input])."""
    if isinstance(to_unpack, bool):
        return res if to_unpack else res[0]
    outer, inner = to_unpack
    if not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors to call ``func`` on. With ``create_graph`` an input that requires grad
    becomes a view of itself, so the results stay differentiable with respect to the caller's
    tensor; otherwise a detached copy (no gradient leaks out)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(res, create_graph: bool):
    """Detach results unless the caller asked for a graph through them (nests like ``res``)."""
    if isinstance(res, tuple):
        return tuple(_finish(r, create_graph) for r in res)
    if res is None or create_graph:
        return res
    return res.detach()


def _check_v(v: tuple, refs: tuple, what: str) -> None:
    if len(v) != len(refs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got "
                           f"{len(v)}.")
    for el, ref in zip(v, refs):
        if tuple(el.shape) != tuple(ref.shape):
            raise RuntimeError(f"{what} has invalid size: should be {_size(ref)} but got "
                               f"{_size(el)}.")


def _size(t) -> str:
    return f"torch.Size({list(t.shape)})"


def _check_requires_grad(outputs: tuple, kind: str, strict: bool) -> None:
    """In strict mode every output must depend differentiably on the inputs."""
    if not strict:
        return
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            if kind == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to "
                                   f"input {i} is independent of the input. This is not allowed "
                                   "in strict mode. You should ensure that your function is "
                                   "thrice differentiable and that the hessian depends on the "
                                   "inputs.")
            if kind == "jacobian":
                raise RuntimeError(f"While computing the hessian, found that the jacobian of the "
                                   f"user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict "
                                   "mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs "
                                   "(this would be violated by a linear function for example).")
            if kind == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of "
                                   "the inputs of the user-provided function. This is not "
                                   "allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool,
          retain_graph: bool | None = None) -> tuple:
    """Engine ``grad`` over the outputs that require grad; ``None`` for an input the outputs do
    not reach (and for every input when no output requires grad)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    wanted = [k for k, t in enumerate(inputs) if t.requires_grad]
    if not pairs or not wanted:
        return (None,) * len(inputs)
    got = _engine_grad([o for o, _ in pairs], [inputs[k] for k in wanted],
                       [g for _, g in pairs], retain_graph=retain_graph,
                       create_graph=create_graph, allow_unused=True)
    res = [None] * len(inputs)
    for k, g in zip(wanted, got):
        res[k] = g
    return tuple(res)


def _fill_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros for the ``None`` gradients (an input that does not influence the output); strict
    mode rejects them, as PyTorch does."""
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is independent "
                                       f"of input {i}. This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent of "
                                       f"entry {i} in the grad_outputs when using the double "
                                       "backward trick to compute forward mode gradients. This is "
                                       "not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in strict "
                                       "mode.")
                raise RuntimeError(f"The hessian of the user-provided function is independent of "
                                   f"entry {i} in the grad_jacobian. This is not allowed in "
                                   "strict mode as it prevents from using the double backward "
                                   "trick to replace forward mode AD.")
            g = ref.new_zeros(tuple(ref.shape))
        res.append(g)
    return tuple(res)


def _call(func, inputs: tuple, fn_name: str) -> tuple[bool, tuple]:
    return _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)


# --- vector products ---------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    ``v`` has the outputs' shapes; it may be ``None`` when ``func`` returns one single-element
    Tensor. The product nests like ``inputs``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.autograd.functional import vjp
        >>> vjp(lambda x: x ** 2, dg.tensor([1.0, 3.0]), dg.ones(2))[1]
        tensor([2., 6.])
    """
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _prepare(v, create_graph, need_graph=False)
            _check_v(v, outputs, "v")
        else:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            v = (outputs[0].new_ones(tuple(outputs[0].shape)),)
        grads = _grad(outputs, inputs, v, create_graph)
        vjp_res = _fill_zeros(grads, inputs, strict, create_graph, "back")
    return (_nest(_finish(outputs, create_graph), is_outputs_tuple),
            _nest(_finish(vjp_res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``, by the double-vjp
    trick (the gradient of ``u^T J v`` with respect to a dummy cotangent ``u``).

    ``v`` has the inputs' shapes; it may be ``None`` when the input is one single-element
    Tensor. The product nests like the outputs.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.autograd.functional import jvp
        >>> jvp(lambda x: x ** 2, dg.tensor([1.0, 3.0]), dg.ones(2))[1]
        tensor([2., 6.])
    """
    with grad_mode.enable_grad():
        _, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _prepare(v, create_graph, need_graph=False)
            _check_v(v, inputs, "v")
        else:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = (inputs[0].new_ones(tuple(inputs[0].shape)),)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        jvp_res = _jvp_trick(outputs, inputs, v, create_graph, strict)
    return (_nest(_finish(outputs, create_graph), is_outputs_tuple),
            _nest(_finish(jvp_res, create_graph), is_outputs_tuple))


def _jvp_trick(outputs: tuple, inputs: tuple, v: tuple, create_graph: bool, strict: bool,
               dummies: tuple | None = None, grads: tuple | None = None) -> tuple:
    """``J v`` for each output: the first backward with dummy cotangents ``u`` (recorded), then
    the gradient of ``sum(grad_inputs * v)`` with respect to ``u``. ``dummies``/``grads`` reuse a
    first backward already run (one per Jacobian, many columns)."""
    if dummies is None:
        dummies = tuple(o.new_zeros(tuple(o.shape)).requires_grad_(True) for o in outputs)
        grads = _grad(outputs, inputs, dummies, create_graph=True, retain_graph=True)
    _check_requires_grad(tuple(g for g in grads if g is not None), "grad_inputs", strict)
    res = _grad(grads, dummies, v, create_graph=create_graph, retain_graph=True)
    return _fill_zeros(res, outputs, strict, create_graph, "back_trick")


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a ``func`` returning one single-element Tensor.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.autograd.functional import vhp
        >>> vhp(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0]), dg.ones(2))[1]
        tensor([ 6., 12.])
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a ``func`` returning one single-element Tensor (computed by
    the double-vjp trick; equal to ``vhp`` where the Hessian is symmetric).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.autograd.functional import hvp
        >>> hvp(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0]), dg.ones(2))[1]
        tensor([ 6., 12.])
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph: bool, strict: bool, fn_name: str):
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _prepare(inputs, create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", fn_name)
            v = _prepare(v, create_graph, need_graph=False)
            _check_v(v, inputs, "v")
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        else:
            v = (inputs[0].new_ones(tuple(inputs[0].shape)),)
        is_outputs_tuple, outputs = _call(func, inputs, fn_name)
        if is_outputs_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                               "contain a single element")
        _check_requires_grad(outputs, "outputs", strict)
        jac = _grad(outputs, inputs, (outputs[0].new_ones(tuple(outputs[0].shape)),),
                    create_graph=True)
        _check_requires_grad(tuple(j for j in jac if j is not None), "jacobian", strict)
        if fn_name == "vhp":
            grads = _grad(jac, inputs, v, create_graph=create_graph)
            res = _fill_zeros(grads, inputs, strict, create_graph, "double_back")
        else:
            dummies = tuple(t.new_zeros(tuple(t.shape)).requires_grad_(True) for t in inputs)
            first = _grad(jac, inputs, dummies, create_graph=True)
            second = _grad(first, dummies, v, create_graph=create_graph)
            res = _fill_zeros(second, inputs, strict, create_graph, "double_back_trick")
    return (_finish(outputs[0], create_graph), _nest(_finish(res, create_graph), is_inputs_tuple))


# --- full Jacobians ----------------------------------------------------------------------

def _stack(parts: list, shape: tuple, like: Tensor) -> Tensor:
    """``parts`` (each of ``shape``) stacked along a new leading dim, recorded when they carry
    a graph (index assignment is differentiable)."""
    out = like.new_zeros((len(parts),) + tuple(shape))
    for k, p in enumerate(parts):
        out[k] = p
    return out


def _jacobian_reverse(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """``J[i][j]`` by rows: one vector-Jacobian product per element of output i."""
    res = []
    for i, out in enumerate(outputs):
        flat = out.reshape(-1)
        rows = [[] for _ in inputs]
        for e in range(flat.numel()):
            grads = _grad((flat[e],), inputs, (None,), create_graph, retain_graph=True) \
                if out.requires_grad else (None,) * len(inputs)
            for j, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict and create_graph and not inp.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is "
                                           f"independent of input {j}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {j}. This is not allowed in "
                                           "strict mode.")
                    g = inp.new_zeros(tuple(inp.shape))
                rows[j].append(g)
        res.append(tuple(
            _stack(r, tuple(inp.shape), inp).reshape(tuple(out.shape) + tuple(inp.shape))
            for r, inp in zip(rows, inputs)))
    return tuple(res)


def _jacobian_forward(outputs: tuple, inputs: tuple, strict: bool) -> tuple:
    """``J[i][j]`` by columns: one Jacobian-vector product (double-vjp trick) per input element,
    sharing one recorded first backward."""
    dummies = tuple(o.new_zeros(tuple(o.shape)).requires_grad_(True) for o in outputs)
    grads = _grad(outputs, inputs, dummies, create_graph=True, retain_graph=True)
    res = [[None] * len(inputs) for _ in outputs]
    for j, inp in enumerate(inputs):
        cols = [[] for _ in outputs]
        for e in range(inp.numel()):
            onehot = inp.new_zeros((inp.numel(),))
            onehot[e] = 1
            v = tuple(onehot.reshape(tuple(t.shape)) if k == j else t.new_zeros(tuple(t.shape))
                      for k, t in enumerate(inputs))
            for i, c in enumerate(_jvp_trick(outputs, inputs, v, False, strict, dummies, grads)):
                cols[i].append(c)
        for i, out in enumerate(outputs):
            stacked = _stack(cols[i], tuple(out.shape), out)  # (inp.numel(), *out.shape)
            moved = stacked.movedim(0, -1) if out.ndim else stacked.reshape(-1)
            res[i][j] = moved.reshape(tuple(out.shape) + tuple(inp.shape))
    return tuple(tuple(r) for r in res)


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` of shape ``outputs[i].shape +
    inputs[j].shape``, nested like PyTorch's (a Tensor for one input and one output).

    ``strategy="reverse-mode"`` builds it by rows, ``"forward-mode"`` by columns (the
    double-vjp trick); both give the same values, as in PyTorch forward mode needs
    ``vectorize=True`` and excludes ``create_graph``. ``vectorize`` is otherwise accepted with no
    effect on the result.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.autograd.functional import jacobian
        >>> jacobian(lambda a, b: a * b, (dg.tensor([1.0]), dg.tensor([2.0])))
        (tensor([[2.]]), tensor([[1.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use '
                             '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together '
                                      '(yet). Please either set `create_graph=False` or '
                                      '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian")
        if strategy == "forward-mode":
            _check_requires_grad(outputs, "outputs", strict)
            res = _jacobian_forward(outputs, inputs, strict)
        else:
            _check_requires_grad(outputs, "outputs", strict)
            res = _jacobian_reverse(outputs, inputs, create_graph, strict)
    return _nest(_finish(res, create_graph), (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a ``func`` returning one single-element Tensor: ``H[i][j]`` of shape
    ``inputs[i].shape + inputs[j].shape`` (a Tensor for a single input): the Jacobian of the
    gradient, which is recorded (``create_graph``) for the outer Jacobian.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.autograd.functional import hessian
        >>> hessian(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac if isinstance(jac, tuple) else (jac,), "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _nest(res, (is_inputs_tuple, is_inputs_tuple))
