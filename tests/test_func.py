"""vmap, cond and while_loop: values and gradients against a Python loop and torch, and errors."""
import numpy as np
import pytest
import torch

import dynagrad as dg


def test_vmap_matches_a_loop_and_torch():
    a = np.random.default_rng(0).normal(size=(4, 3))
    b = np.random.default_rng(1).normal(size=(3, 4))
    got = dg.vmap(dg.dot, in_dims=(0, 1))(dg.tensor(a), dg.tensor(b))
    want = torch.vmap(torch.dot, in_dims=(0, 1))(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got.numpy(), np.einsum("ij,ji->i", a, b), rtol=1e-12)


def test_vmap_unmapped_args_out_dims_and_tuples():
    x = np.arange(6.0).reshape(2, 3)
    y = np.array([1.0, 2.0, 3.0])

    def f(row, v, scale=1.0):
        return row * v * scale, (row + v).sum()

    got = dg.vmap(f, in_dims=(0, None), out_dims=(1, 0))(dg.tensor(x), dg.tensor(y), scale=2.0)
    want = torch.vmap(f, in_dims=(0, None), out_dims=(1, 0))(torch.tensor(x), torch.tensor(y),
                                                             scale=2.0)
    assert got[0].shape == (3, 2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_vmap_nested_tuple_argument_and_negative_dim():
    x = np.arange(12.0).reshape(3, 4)
    got = dg.vmap(lambda pair: pair[0] - pair[1], in_dims=((-1, None),))(
        (dg.tensor(x), dg.tensor(1.0)))
    np.testing.assert_allclose(got.numpy(), x.T - 1.0)


def test_vmap_gradients_flow_to_the_inputs():
    x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    dg.vmap(lambda r: (r * r).sum())(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_vmap_errors():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        dg.vmap(dg.add)(dg.ones(2), dg.ones(3))
    with pytest.raises(ValueError, match="at least one input must be a Tensor"):
        dg.vmap(lambda a: a, in_dims=None)(dg.ones(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        dg.vmap(lambda a: 1.0)(dg.ones(2))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        dg.vmap(dg.add, in_dims=(0,))(dg.ones(2), dg.ones(2))
    with pytest.raises(ValueError, match="We cannot vmap over dim 2"):
        dg.vmap(dg.neg, in_dims=2)(dg.ones(2, 2))


def test_func_namespace_has_vmap():
    assert dg.func.vmap is dg.vmap


def test_cond_takes_one_branch_with_gradients():
    x = dg.tensor([1.0, -2.0], requires_grad=True)
    out = dg.cond(x.sum() > 0, lambda t: t * 2, lambda t: t * t, (x,))
    np.testing.assert_allclose(out.detach().numpy(), [1.0, 4.0])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0])
    assert dg.cond(1.5, lambda: dg.ones(1), lambda: dg.zeros(1)).item() == 1.0


def test_cond_rejects_a_predicate_of_several_elements():
    with pytest.raises(RuntimeError, match="single-element tensor"):
        dg.cond(dg.tensor([True, False]), lambda: 0, lambda: 1)


def test_while_loop_matches_torch():
    x = np.array([0.5, -1.0])
    got = dg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), (dg.tensor(0),
                                                                           dg.tensor(x)))
    want = torch.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2),
                            (torch.tensor(0), torch.tensor(x)))
    assert got[0].item() == want[0].item() == 3
    np.testing.assert_allclose(got[1].numpy(), want[1].numpy())


def test_while_loop_body_must_keep_its_carried_values():
    with pytest.raises(RuntimeError, match="same number of outputs"):
        dg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1,), (dg.tensor(0), dg.ones(2)))
    with pytest.raises(RuntimeError, match="shape and dtype"):
        dg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v.sum()),
                      (dg.tensor(0), dg.ones(2)))


def test_get_device():
    assert dg.get_device(dg.ones(2)) == -1 == torch.get_device(torch.ones(2))
