"""Function transforms: ``autograd.functional`` and ``dynagrad.func`` against torch on the same
functions and float64 inputs, against finite differences, nested, and their errors."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import dynagrad as dg
import dynagrad.autograd.functional as F

RNG = np.random.default_rng(0)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))


def D(*arrays):
    return tuple(dg.tensor(a) for a in arrays)


def T(*arrays):
    return tuple(torch.tensor(a) for a in arrays)


def same(got, want, tol=1e-10):
    """Nested results equal (torch sometimes nests with lists where it means tuples)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w, tol)
    elif isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            same(got[k], want[k], tol)
    else:
        assert isinstance(got, dg.Tensor), type(got)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def two_out(x, y):  # works on both libraries: methods only
    return (x.sin() * y).sum(-1), x.exp()


def scalar(x, y):
    return (x.sin() * y).sum() * x.sum()


def finite_jacobian(f, x, eps=1e-6):
    """Central differences of ``f`` (NumPy in, NumPy out) at ``x``: out.shape + x.shape."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(f(x)) + x.shape)


# --- autograd.functional --------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_tuple_inputs_and_outputs_match_torch(strategy):
    got = F.jacobian(two_out, D(A, B), vectorize=True, strategy=strategy)
    same(got, TF.jacobian(two_out, T(A, B), vectorize=True, strategy=strategy))


def test_jacobian_nesting_follows_the_arguments():
    x = dg.tensor(A)
    j = F.jacobian(lambda t: t.exp(), x)
    assert isinstance(j, dg.Tensor)
    same(j, TF.jacobian(lambda t: t.exp(), torch.tensor(A)))
    same(F.jacobian(lambda t: (t.exp(), t * 2), x),
         TF.jacobian(lambda t: (t.exp(), t * 2), torch.tensor(A)))
    same(F.jacobian(lambda t, u: t * u, D(A, A)), TF.jacobian(lambda t, u: t * u, T(A, A)))


def test_jacobian_against_finite_differences():
    f = lambda t: (t.sin() * t.sum()).exp()
    want = finite_jacobian(lambda v: np.exp(np.sin(v) * v.sum()), A)
    np.testing.assert_allclose(F.jacobian(f, dg.tensor(A)).numpy(), want, rtol=1e-6, atol=1e-8)


def test_hessian_matches_torch_and_finite_differences():
    same(F.hessian(scalar, D(A, B)), TF.hessian(scalar, T(A, B)))
    f = lambda t: (t ** 3).sum() * t.sum()
    got = F.hessian(f, dg.tensor(A))
    same(got, TF.hessian(f, torch.tensor(A)))
    grad_np = lambda v: 3 * v ** 2 * v.sum() + (v ** 3).sum()
    np.testing.assert_allclose(got.numpy(), finite_jacobian(grad_np, A), rtol=1e-6)
    same(F.hessian(scalar, D(A, B), vectorize=True, outer_jacobian_strategy="forward-mode"),
         TF.hessian(scalar, T(A, B), vectorize=True, outer_jacobian_strategy="forward-mode"))


def test_vector_products_match_torch():
    same(F.vjp(two_out, D(A, B), D(A[:2], A)), TF.vjp(two_out, T(A, B), T(A[:2], A)))
    same(F.jvp(two_out, D(A, B), D(A, B)), TF.jvp(two_out, T(A, B), T(A, B)))
    same(F.hvp(scalar, D(A, B), D(A, B)), TF.hvp(scalar, T(A, B), T(A, B)))
    same(F.vhp(scalar, D(A, B), D(A, B)), TF.vhp(scalar, T(A, B), T(A, B)))
    # v may be left out for a single-element output (vjp) or input (jvp)
    same(F.vjp(lambda t: t.sum(), dg.tensor(A)), TF.vjp(lambda t: t.sum(), torch.tensor(A)))
    same(F.jvp(lambda t: t * 3, dg.tensor([2.0])), TF.jvp(lambda t: t * 3, torch.tensor([2.0])))


def test_create_graph_gives_differentiable_results_and_leaves_inputs_alone():
    x = dg.tensor(A, requires_grad=True)
    xt = torch.tensor(A, requires_grad=True)
    h = F.hessian(lambda t: (t ** 3).sum(), x, create_graph=True)
    assert h.requires_grad
    h.sum().backward()
    TF.hessian(lambda t: (t ** 3).sum(), xt, create_graph=True).sum().backward()
    same(x.grad, xt.grad)
    y = dg.tensor(A, requires_grad=True)
    _, g = F.vjp(lambda t: t ** 2, y, dg.ones(3))
    assert not g.requires_grad and y.grad is None


def test_unused_inputs_get_zeros_unless_strict():
    f = lambda t, u: t * 2
    same(F.vjp(f, D(A, A), dg.ones(3)), TF.vjp(f, T(A, A), torch.ones(3)))
    same(F.jacobian(f, D(A, A)), TF.jacobian(f, T(A, A)))
    for fn, args in ((F.vjp, (f, D(A, A), dg.ones(3))), (F.jacobian, (f, D(A, A)))):
        with pytest.raises(RuntimeError, match="independent of input 1"):
            fn(*args, strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        F.jacobian(lambda t: dg.ones(2), dg.tensor(A), strict=True)


def test_functional_errors_match_torch():
    x = dg.tensor(A)
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function "
                                           "returns a single Tensor with a single element"):
        F.vjp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be torch.Size\(\[3\]\) but "
                                           r"got torch.Size\(\[2\]\)"):
        F.vjp(lambda t: t * 2, x, dg.ones(2))
    with pytest.raises(RuntimeError, match="input to the user-provided function is a single "
                                           "Tensor with a single element"):
        F.jvp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hessian(lambda t: (t.sum(),), x)
    with pytest.raises(TypeError, match="outputs of the user-provided function given to jacobian"):
        F.jacobian(lambda t: 3, x)
    with pytest.raises(TypeError, match="inputs given to jacobian must be either a Tensor"):
        F.jacobian(lambda t: t, 3)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda t: t, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and "):
        F.jacobian(lambda t: t, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(AssertionError, match="Expected strategy"):
        F.jacobian(lambda t: t, x, strategy="sideways")
