"""In-place forms of view ops (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_) and of
tril, triu, square: the tensor itself changes, as torch's; versions bump; autograd follows."""
import numpy as np
import pytest
import torch

import dynagrad as dg

CALLS = [("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (1, 0)), ("swapdims_", (0, -1)),
         ("squeeze_", ()), ("squeeze_", (1,)), ("unsqueeze_", (0,)), ("unsqueeze_", (-1,)),
         ("tril_", ()), ("tril_", (-1,)), ("triu_", (1,)), ("square_", ())]


@pytest.mark.parametrize("name,args", CALLS)
def test_inplace_method_matches_torch(name, args):
    shape = (3, 1) if name == "squeeze_" else (3, 4)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 5
    ours, theirs = dg.tensor(x), torch.tensor(x)
    version = ours._version
    assert getattr(ours, name)(*args) is ours
    getattr(theirs, name)(*args)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours._version == version + 1


@pytest.mark.parametrize("name,args", CALLS)
def test_inplace_method_gradients_match_torch(name, args):
    shape = (3, 1) if name == "squeeze_" else (3, 4)
    x = np.random.default_rng(0).uniform(-2, 2, shape)
    leaf, tleaf = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(leaf, name)(*args)
    ours, theirs = leaf * 1.0, tleaf * 1.0
    getattr(ours, name)(*args)
    getattr(theirs, name)(*args)
    w = np.random.default_rng(1).normal(size=tuple(theirs.shape))
    (ours * dg.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy())


def test_inplace_views_keep_the_memory_and_refuse_like_torch():
    x = dg.zeros(2, 3)
    alias = x.view(6)
    x.t_()[0, 1] = 5.0  # (the same memory: element [1, 0] of the old layout)
    assert alias.tolist() == [0.0, 0.0, 0.0, 5.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        dg.ones(2, 3, 4).t_()
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        dg.ones(3).tril_()
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.tensor([True, False]).square_()
    assert dg.tensor([True]).square().dtype is dg.int64  # (as torch: pow(bool, 2) is int64)
    with dg.no_grad():  # without grad mode a leaf may change in place, as in torch
        leaf = dg.ones(2, 3, requires_grad=True)
        assert leaf.t_().shape == (3, 2)
