"""Autograd semantics: leaves and grad_fn, backward/grad options, grad modes, hooks, custom
Functions, version counters, higher-order gradients, gradcheck, and the engine's memory and depth.

Parity tests compare with PyTorch when it is installed (``torch`` fixture)."""
import gc
import weakref

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def leaf(values, dtype=dg.float32):
    return dg.tensor(values, dtype=dtype, requires_grad=True)


def vals(t):
    return t.detach().tolist()


# --- leaves, grad_fn, requires_grad ---------------------------------------------------------

def test_leaf_and_nonleaf_metadata():
    x = leaf([1.0, 2.0])
    y = x * 2
    assert x.is_leaf and x.requires_grad and x.grad_fn is None and x.grad is None
    assert not y.is_leaf and y.requires_grad and y.grad_fn.name() == "MulBackward0"
    c = dg.tensor([1.0])
    assert c.is_leaf and not c.requires_grad and not (c * 2).requires_grad and (c * 2).is_leaf


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="floating point"):
        dg.tensor([1, 2], requires_grad=True)
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    c = dg.tensor([1.0, 2.0])
    assert c.requires_grad_() is c and c.requires_grad
    c.requires_grad_(False)
    assert not c.requires_grad


def test_detach_shares_storage_and_version_but_not_history():
    x = leaf([1.0, 2.0])
    y = x * 3
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    d.requires_grad_()
    assert d.requires_grad and y.grad_fn is not None
    d2 = y.detach()
    with dg.no_grad():
        d2.add_(1.0)
    assert vals(y) == [4.0, 7.0]
    assert y._version == d2._version == 1


def test_detach_inplace_method():
    y = leaf([1.0]) * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


# --- backward -------------------------------------------------------------------------------

def test_backward_scalar_accumulates_into_leaves():
    x = leaf([1.0, 2.0, 3.0])
    w = leaf([4.0, 5.0, 6.0])
    (x * w).sum().backward()
    assert vals(x.grad) == [4.0, 5.0, 6.0]
    assert vals(w.grad) == [1.0, 2.0, 3.0]
    assert x.grad.dtype is dg.float32 and not x.grad.requires_grad


def test_backward_nonscalar_needs_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(gradient=dg.tensor([1.0, 10.0]))
    assert vals(x.grad) == [2.0, 20.0]


def test_backward_gradient_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape.*\(3,\).*\(2,\)"):
        (x * 2).backward(dg.ones(3))


def test_backward_of_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        dg.tensor([1.0]).sum().backward()


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward_and_accumulates():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.backward(dg.tensor([1.0, 10.0]), retain_graph=True)
    y.backward(dg.tensor([1.0, 1.0]))
    assert vals(x.grad) == [6.0, 33.0]


def test_gradient_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert vals(x.grad) == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert vals(x.grad) == [3.0, 3.0]


def test_grads_of_shared_leaves_do_not_alias():
    a, b = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    (a + b).sum().backward()
    assert a.grad is not b.grad
    a.grad.add_(5.0)
    assert vals(a.grad) == [6.0, 6.0] and vals(b.grad) == [1.0, 1.0]


def test_grads_do_not_alias_with_create_graph():
    a, b = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    (a * a + b).sum().backward(create_graph=True)
    assert a.grad._data is not b.grad._data
    with dg.no_grad():
        b.grad.add_(5.0)
    assert vals(a.grad) == [2.0, 4.0] and vals(b.grad) == [6.0, 6.0]


def test_stored_grad_does_not_alias_user_gradient():
    x = leaf([1.0, 2.0])
    g = dg.ones(2)
    x.backward(g)
    x.grad.add_(1.0)
    assert vals(g) == [1.0, 1.0]


def test_same_tensor_used_twice_sums_gradients():
    a = leaf([1.0, 2.0])
    s = a * 1
    (s + s * s).sum().backward()
    assert vals(a.grad) == [3.0, 5.0]


def test_backward_inputs_restricts_accumulation():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert vals(a.grad) == [2.0] and b.grad is None
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * b).sum().backward(inputs=[])


def test_backward_inputs_nonleaf_gets_grad(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        (y * y).sum().backward(inputs=[y])
        return y.grad.tolist(), x.grad
    assert run(dg) == run(torch) == ([4.0, 8.0], None)


def test_backward_through_dtype_cast():
    x = leaf([1.0, 2.0])
    (x.double() * x.double()).sum().backward()
    assert x.grad.dtype is dg.float32 and vals(x.grad) == [2.0, 4.0]


# --- autograd.grad --------------------------------------------------------------------------

def test_grad_returns_without_touching_dot_grad():
    x = leaf([1.0, 2.0])
    (gx,) = dg.autograd.grad((x * x).sum(), x)
    assert vals(gx) == [2.0, 4.0] and x.grad is None and not gx.requires_grad


def test_grad_outputs_and_multiple_outputs():
    x = leaf([1.0, 2.0])
    (g,) = dg.autograd.grad(x * x, x, grad_outputs=dg.tensor([1.0, 0.5]))
    assert vals(g) == [2.0, 2.0]
    (g,) = dg.autograd.grad([x.sum(), (x * x).sum()], [x])
    assert vals(g) == [3.0, 5.0]


def test_root_gradient_of_another_dtype_is_cast(torch):
    # PyTorch casts a root gradient to its output's dtype: every node downstream sees its own
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x + x
        y.backward(lib.tensor([1.0, 0.5], dtype=lib.float64))
        return x.grad.dtype is lib.float32 or x.grad.dtype == lib.float32, x.grad.tolist()
    assert run(dg) == run(torch) == (True, [3.0, 2.5])


def test_grad_allow_unused():
    x, unused = leaf(2.0), leaf(1.0)
    with pytest.raises(RuntimeError, match=r"input 1.*allow_unused=True"):
        dg.autograd.grad(x * 2, [x, unused])
    gx, gu = dg.autograd.grad(x * 2, [x, unused], allow_unused=True)
    assert gx.item() == 2.0 and gu is None
    gx, gu = dg.autograd.grad(x * 2, [x, unused], materialize_grads=True)
    assert gu.item() == 0.0


def test_grad_frees_graph_unless_retained():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    dg.autograd.grad(y, x, retain_graph=True)
    (g,) = dg.autograd.grad(y, x)
    assert vals(g) == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_grad_input_not_requiring_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        dg.autograd.grad(leaf([1.0]).sum(), dg.tensor([1.0]))


def test_grad_of_leaf_wrt_itself():
    x = leaf([1.0, 2.0])
    (g,) = dg.autograd.grad(x, x, grad_outputs=dg.tensor([3.0, 4.0]))
    assert vals(g) == [3.0, 4.0]


# --- higher order ---------------------------------------------------------------------------

def test_second_and_third_derivative_of_cube():
    x = leaf(3.0)
    (g1,) = dg.autograd.grad(x ** 3, x, create_graph=True)
    assert g1.requires_grad and g1.item() == 27.0
    (g2,) = dg.autograd.grad(g1, x, create_graph=True)
    (g3,) = dg.autograd.grad(g2, x)
    assert (g2.item(), g3.item()) == (18.0, 6.0)


def test_backward_create_graph_gives_differentiable_grad():
    x = leaf(3.0)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.item() == 27.0 and g.requires_grad and not g.is_leaf
    x.grad = None
    g.backward()
    assert x.grad.item() == 18.0


def test_create_graph_mixed_partials():
    x, y = leaf(2.0, dg.float64), leaf(5.0, dg.float64)
    (gx,) = dg.autograd.grad(x * x * y, x, create_graph=True)   # 2xy
    gxx, gxy = dg.autograd.grad(gx, [x, y])
    assert (gx.item(), gxx.item(), gxy.item()) == (20.0, 10.0, 4.0)


# --- gradcheck ------------------------------------------------------------------------------

def x64(*values):
    return dg.tensor(list(values), dtype=dg.float64, requires_grad=True)


@pytest.mark.parametrize("fn", [dg.tanh, dg.sigmoid, lambda t: t * t * t])
def test_gradcheck_and_gradgradcheck_unary(fn):
    x = x64(0.3, -1.2, 2.0)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradgradcheck_binary_mul():
    assert gradgradcheck(dg.mul, (x64(0.5, -2.0), x64(3.0, 1.5)))


class _Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class _WrongSquare(_Square):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * g


class _DetachedSquare(_Square):
    """Right first derivative, but its backward is not differentiable (second order is wrong)."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x.detach() * g


def test_gradcheck_detects_wrong_backward():
    x = x64(1.0, 2.0)
    assert gradcheck(_Square.apply, (x,))
    assert gradcheck(_WrongSquare.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(_WrongSquare.apply, (x,))


def test_gradgradcheck_detects_non_differentiable_backward():
    x = x64(1.0, 2.0)
    assert gradcheck(_DetachedSquare.apply, (x,))
    assert gradgradcheck(_Square.apply, (x,))
    assert gradgradcheck(_DetachedSquare.apply, (x,), raise_exception=False) is False


# --- grad modes -----------------------------------------------------------------------------

def test_no_grad_and_enable_grad_context_managers():
    x = leaf([1.0])
    with dg.no_grad():
        y = x * 2
        assert not dg.is_grad_enabled()
        with dg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.is_leaf and z.requires_grad and dg.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with dg.no_grad():
            raise ValueError
    assert dg.is_grad_enabled()


@pytest.mark.parametrize("make", [lambda f: dg.no_grad()(f), lambda f: dg.no_grad(f),
                                  lambda f: dg.inference_mode()(f), lambda f: dg.inference_mode(f),
                                  lambda f: dg.set_grad_enabled(False)(f)])
def test_grad_off_decorators(make):
    x = leaf([1.0])

    @make
    def double(t):
        """Doc."""
        return t * 2
    assert dg.is_grad_enabled()
    assert not double(x).requires_grad
    assert dg.is_grad_enabled() and double.__doc__ == "Doc."


def test_enable_grad_decorator_inside_no_grad():
    x = leaf([1.0])

    @dg.enable_grad()
    def double(t):
        return t * 2
    with dg.no_grad():
        assert double(x).requires_grad
        assert not dg.is_grad_enabled()


def test_set_grad_enabled_as_function_and_context():
    x = leaf([1.0])
    dg.set_grad_enabled(False)
    try:
        assert not dg.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        dg.set_grad_enabled(True)
    with dg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert dg.is_grad_enabled()
    with dg.no_grad(), dg.set_grad_enabled(True):
        assert (x * 2).requires_grad


def test_inference_mode_flags(torch):
    def flags(lib):
        out = []
        with lib.inference_mode():
            out.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            with lib.inference_mode(False):
                out.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        with lib.no_grad(), lib.inference_mode(False):
            out.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        out.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        return out
    assert flags(dg) == flags(torch) == [(False, True), (True, False), (True, False),
                                         (True, False)]


def test_inplace_on_leaf_allowed_under_no_grad():
    w = leaf([1.0, 2.0])
    with dg.no_grad():
        w.sub_(0.5)
    assert vals(w) == [0.5, 1.5] and w.requires_grad and w.is_leaf


# --- in-place and version counter -----------------------------------------------------------

def test_inplace_on_leaf_requiring_grad_raises():
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.uniform_()


def test_inplace_on_nonleaf_rebases_history():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.add_(1.0)
    assert y.grad_fn.name() == "AddBackward0" and vals(y) == [3.0, 5.0]
    (y * y).sum().backward()
    assert vals(x.grad) == [12.0, 20.0]


def test_version_counter_counts_inplace_ops():
    t = dg.zeros(2)
    assert t._version == 0
    t.add_(1.0)
    t.mul_(2.0)
    assert t._version == 2
    view = t[0:1]
    view.add_(1.0)
    assert t._version == 3 == view._version


def test_modified_saved_output_raises_naming_op_and_versions():
    x = leaf([1.0, 2.0])
    y = x.exp()          # exp saves its output
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*ExpBackward0.*"
                                           r"version 1; expected version 0"):
        y.sum().backward()


def test_modified_saved_input_raises():
    x = leaf([1.0, 2.0])
    h = x * 2
    r = h.sin()          # sin saves its input
    with dg.no_grad():
        h.mul_(3.0)
    with pytest.raises(RuntimeError, match=r"SinBackward0.*version 1; expected version 0"):
        r.sum().backward()


def test_modifying_through_detach_is_detected():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.detach().mul_(2.0)
    with pytest.raises(RuntimeError, match="inplace operation"):
        y.sum().backward()


def test_modifying_unsaved_tensor_is_fine():
    x = leaf([1.0, 2.0])
    h = x * 2
    out = (h + 3).sum()   # add saves nothing
    with dg.no_grad():
        h.add_(100.0)
    out.backward()
    assert vals(x.grad) == [2.0, 2.0]


# --- hooks and retain_grad ------------------------------------------------------------------

def test_leaf_hook_modifies_grad_and_can_be_removed():
    x = leaf([1.0, 2.0])
    calls = []
    h1 = x.register_hook(lambda g: calls.append(1) or g * 2)
    x.register_hook(lambda g: calls.append(2) or g + 1)
    (x * 1).sum().backward()
    assert vals(x.grad) == [3.0, 3.0] and calls == [1, 2]
    h1.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert vals(x.grad) == [2.0, 2.0]


def test_nonleaf_hook_changes_upstream_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(vals(g)) or g * 10)
    (y * y).sum().backward()
    assert seen == [[4.0, 8.0]] and vals(x.grad) == [80.0, 160.0]


def test_nonleaf_hook_removed():
    x = leaf([1.0, 2.0])
    y = x * 1
    y.register_hook(lambda g: g * 0).remove()
    y.sum().backward()
    assert vals(x.grad) == [1.0, 1.0]


def test_hook_returning_none_keeps_grad():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: None)
    (x * 4).sum().backward()
    assert vals(x.grad) == [4.0, 4.0]


@pytest.mark.parametrize("hook, match", [
    (lambda g: g.double(), "has changed the type of value"),
    (lambda g: g[:1], "has changed the size of value"),
    (lambda g: 2.0, "returned a float"),
])
@pytest.mark.parametrize("on_leaf", [True, False])
def test_hook_may_not_change_gradient_type_or_size(torch, hook, match, on_leaf):
    # as PyTorch (which raises the same "has changed the type/size" errors): the nodes that
    # receive the hooked gradient rely on its dtype and shape
    x = leaf([1.0, 2.0])
    y = x * 3
    (x if on_leaf else y).register_hook(hook)
    with pytest.raises(RuntimeError, match=match):
        (y * y).sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * 3
    if match != "returned a float":
        (tx if on_leaf else ty).register_hook(hook)
        with pytest.raises(RuntimeError, match=match):
            (ty * ty).sum().backward()


def test_hook_and_retain_grad_need_requires_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        dg.tensor([1.0]).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        dg.tensor([1.0]).retain_grad()


def test_retain_grad_keeps_nonleaf_grad_and_accumulates():
    x = leaf([1.0, 2.0])
    y = x * 1
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * 2).sum().backward(retain_graph=True)
    assert vals(y.grad) == [2.0, 2.0]
    (y * 2).sum().backward()
    assert vals(y.grad) == [4.0, 4.0]
    z = x * 3
    z.sum().backward()
    assert z.grad is None


@pytest.mark.parametrize("retain_first", [True, False])
def test_retain_grad_sees_hooked_gradient(torch, retain_first):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        if retain_first:
            b.retain_grad()
        b.register_hook(lambda g: g + 1)
        if not retain_first:
            b.retain_grad()
        (b * b).sum().backward()
        return b.grad.tolist(), a.grad.tolist()
    assert run(dg) == run(torch) == ([5.0, 9.0], [10.0, 18.0])


def test_node_post_hook():
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        (vals(grad_inputs[0]), vals(grad_outputs[0]))))
    y.sum().backward()
    assert seen == [([2.0, 2.0], [1.0, 1.0])]


# --- custom Functions -----------------------------------------------------------------------

class _ScaledSquare(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        return x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g * ctx.k, None


def test_custom_function_forward_backward_and_name():
    x = leaf([1.0, 2.0])
    y = _ScaledSquare.apply(x, 3.0)
    assert vals(y) == [3.0, 12.0]
    assert y.grad_fn.name() == "_ScaledSquareBackward"
    assert type(y.grad_fn).__name__ == "_ScaledSquareBackward"
    assert repr(y) == "tensor([ 3., 12.], grad_fn=<_ScaledSquareBackward>)"
    assert y.grad_fn.seen_needs == (True, False)
    y.sum().backward()
    assert vals(x.grad) == [6.0, 12.0]


def test_custom_function_needs_input_grad():
    seen = []

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return None, None, None
    Mul.apply(leaf([1.0]), dg.tensor([1.0]), 2.0)
    Mul.apply(dg.tensor([1.0]), leaf([1.0]), 2.0)
    assert seen == [(True, False, False), (False, True, False)]


def test_custom_function_saved_tensors_freed_after_backward():
    x = leaf([1.0, 2.0])
    y = _Square.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="already been freed"):
        y.grad_fn.saved_tensors


def test_custom_function_saved_tensor_version_check():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = _Square.apply(h)
    with dg.no_grad():
        h.mul_(3.0)
    with pytest.raises(RuntimeError, match=r"_SquareBackward.*version 1; expected version 0"):
        y.sum().backward()


def test_custom_function_not_recorded_without_grad():
    x = leaf([1.0])
    with dg.no_grad():
        y = _Square.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    assert not _Square.apply(dg.tensor([2.0])).requires_grad


def test_custom_function_double_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g
    x = leaf(2.0)
    (g1,) = dg.autograd.grad(Cube.apply(x), x, create_graph=True)
    (g2,) = dg.autograd.grad(g1, x)
    assert (g1.item(), g2.item()) == (12.0, 12.0)


def test_custom_function_mark_non_differentiable_and_int_outputs(torch):
    def run(lib, mark):
        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = lib.tensor([1, 0])
                if mark:
                    ctx.mark_non_differentiable(idx)
                return x * 1, idx

            @staticmethod
            def backward(ctx, g, g_idx):
                assert g_idx.tolist() == [0, 0]
                return g * 2
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out, idx = Split.apply(x)
        out.sum().backward()
        return out.requires_grad, idx.requires_grad, idx.grad_fn is None, x.grad.tolist()
    for mark in (True, False):
        assert run(dg, mark) == run(torch, mark) == (True, False, True, [2.0, 2.0])


def test_custom_function_mark_non_differentiable_float_output():
    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            aux = x * 0
            ctx.mark_non_differentiable(aux)
            return x * 2, aux

        @staticmethod
        def backward(ctx, g, g_aux):
            return g * 2
    out, aux = Pair.apply(leaf([1.0]))
    assert out.requires_grad and not aux.requires_grad and aux.is_leaf


def test_custom_function_mark_dirty():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5
    a = leaf([1.0, 2.0])
    b = a * 1
    c = AddOne.apply(b)
    assert c is b and vals(c) == [2.0, 3.0] and c.grad_fn.name() == "AddOneBackward"
    c.sum().backward()
    assert vals(a.grad) == [5.0, 5.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOne.apply(leaf([1.0]))


def test_custom_function_returning_input_gives_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3
    x = leaf([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf
    y.sum().backward()
    assert vals(x.grad) == [3.0, 3.0]


def test_custom_function_materialize_grads():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(None if g1 is None else vals(g1))
            return (g2 if g1 is None else g1 + g2), None
    for materialize in (True, False):
        x = leaf([1.0, 2.0])
        _, b = Two.apply(x, materialize)
        b.sum().backward()
        assert vals(x.grad) == [1.0, 1.0]
    assert seen == [[0.0, 0.0], None]


@pytest.mark.parametrize("bad, match", [
    (lambda g: (g, g), "incorrect number of gradients"),
    (lambda g: dg.ones(5), r"invalid gradient at index 0 - got \[5\]"),
    (lambda g: 3.0, "returned a float as gradient 0"),
])
def test_custom_function_bad_backward_results(bad, match):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return bad(g)
    with pytest.raises((RuntimeError, TypeError), match=match):
        Bad.apply(leaf([1.0, 2.0])).sum().backward()


def test_custom_function_gradient_is_cast_to_the_input_dtype(torch):
    # PyTorch casts what backward returns to each input's dtype; so does dynagrad
    def run(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return (g * 2).double()
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        seen = []
        y.register_hook(lambda g: seen.append(str(g.dtype).split(".")[-1]))
        Twice.apply(y).sum().backward()
        return seen, str(x.grad.dtype).split(".")[-1], x.grad.tolist()
    assert run(dg) == run(torch) == (["float32"], "float32", [4.0, 8.0])


def test_custom_function_too_few_gradients():
    class TwoIn(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(RuntimeError, match=r"expected 2, got 1"):
        TwoIn.apply(leaf([1.0]), leaf([2.0])).sum().backward()


# --- the engine: depth and memory -----------------------------------------------------------

def test_ten_thousand_op_chain_backpropagates():
    x = leaf([1.0], dg.float64)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 10_000, rel=1e-9)


def test_saved_intermediate_is_freed_after_backward():
    x = leaf([1.0, 2.0])
    m = x * 2
    ref = weakref.ref(m)
    y = (m * m).sum()           # the product saves m for backward
    del m
    gc.collect()
    assert ref() is not None
    y.backward()
    gc.collect()
    assert ref() is None
    assert vals(x.grad) == [8.0, 16.0]


def test_saved_intermediate_kept_with_retain_graph():
    x = leaf([1.0, 2.0])
    m = x * 2
    ref = weakref.ref(m)
    y = (m * m).sum()
    del m
    y.backward(retain_graph=True)
    gc.collect()
    assert ref() is not None
    y.backward()
    gc.collect()
    assert ref() is None
    assert vals(x.grad) == [16.0, 32.0]


def test_graph_is_freed_with_its_output():
    x = leaf([1.0, 2.0])
    m = x * 2
    ref = weakref.ref(m)
    y = (m * m).sum()
    del m, y
    gc.collect()
    assert ref() is None


# --- parity with PyTorch on a small composite -----------------------------------------------

def test_composite_gradients_match_torch(torch):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal((4,))

    def run(lib):
        a = lib.tensor(a_np, requires_grad=True)
        b = lib.tensor(b_np, requires_grad=True)
        y = (lib.tanh(a * b) + a.exp() * 0.5 - b / (1.0 + a * a)).sum()
        y.backward()
        return a.grad.numpy(), b.grad.numpy()
    for mine, ref in zip(run(dg), run(torch)):
        np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)


def test_second_derivative_through_saved_output():
    # exp's backward reads its saved output: double backward must flow through it
    x = leaf([0.5, -1.0], dg.float64)
    (g1,) = dg.autograd.grad(dg.exp(x).sum(), x, create_graph=True)
    assert g1.requires_grad
    (g2,) = dg.autograd.grad(g1.sum(), x)
    np.testing.assert_allclose(g2.numpy(), np.exp([0.5, -1.0]), rtol=1e-12)


def test_detach_does_not_keep_source_alive():
    x = dg.tensor([1.0, 2.0])
    d = x.detach()
    ref = weakref.ref(x)
    del x
    assert ref() is None and d.tolist() == [1.0, 2.0]


def test_inference_mode_false_decorator(torch):
    def run(lib):
        @lib.inference_mode(False)
        def flags():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()
        with lib.no_grad():
            return flags()
    assert run(dg) == run(torch) == (True, False)


def test_assigning_grad_is_checked():
    x = leaf([1.0, 2.0])
    x.grad = dg.tensor([5.0, 6.0])
    (x * 1).sum().backward()
    assert vals(x.grad) == [6.0, 7.0]
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = dg.zeros(3)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = dg.zeros(2, dtype=dg.float64)
    with pytest.raises(TypeError, match="Tensor or None"):
        x.grad = [1.0, 2.0]
    x.grad = None
    assert x.grad is None


def test_fresh_gradients_become_grad_without_copy_but_never_alias():
    a = dg.rand(3, requires_grad=True)
    seen = []
    a.register_hook(lambda g: seen.append(g))  # a hook may keep the gradient it saw
    (a * 2).sum().backward()
    (a * 2).sum().backward()
    assert seen[0].tolist() == [2.0, 2.0, 2.0] and a.grad.tolist() == [4.0, 4.0, 4.0]
    user_grad = dg.ones(3)
    b = dg.rand(3, requires_grad=True)
    (b + 0).backward(user_grad)  # identity backward hands the user's tensor on
    b.grad.mul_(3)
    assert user_grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode",
                                  "set_grad_enabled", "bare_no_grad", "bare_inference_mode"])
def test_grad_mode_decorators_bind_self_and_wrap_generators(name, torch):
    """Decorated methods bind ``self``; decorated generators run each step in the mode while
    the caller keeps its own mode between steps (checked against torch)."""
    def run(lib):
        # built lazily: set_grad_enabled(False) switches grad mode off as soon as it is made
        make = {"no_grad": lambda: lib.no_grad(), "enable_grad": lambda: lib.enable_grad(),
                "inference_mode": lambda: lib.inference_mode(),
                "set_grad_enabled": lambda: lib.set_grad_enabled(False),
                "bare_no_grad": lambda: lib.no_grad,
                "bare_inference_mode": lambda: lib.inference_mode}[name]()

        class M:
            scale = 3.0

            @make
            def gen(self, t):
                return (t * self.scale).requires_grad, lib.is_grad_enabled()

            @make
            def steps(self, n):
                got = yield lib.is_grad_enabled()
                for _ in range(n):
                    got = yield (got, lib.is_grad_enabled())
                return "done"

        x = lib.ones(2, requires_grad=True)
        out = [M().gen(x)]
        with lib.no_grad():
            out.append(M().gen(x))
        g = M().steps(2)
        out.append(next(g))
        out.append(lib.is_grad_enabled())
        out.append(g.send("a"))
        out.append(g.send("b"))
        with pytest.raises(StopIteration) as stop:
            next(g)
        out.append(stop.value.value)
        out.append(lib.is_grad_enabled())
        return out
    assert run(dg) == run(torch)
    assert dg.is_grad_enabled() and torch.is_grad_enabled()
