"""square_ (and square of bool) as torch's: the tensor itself changes, its version bumps,
autograd follows, a bool tensor refuses. (The in-place view ops t_, squeeze_... and tril_ /
triu_ are the movement family's, tested with it.)"""
import numpy as np
import pytest
import torch

import dynagrad as dg


def test_square_inplace_matches_torch():
    for dt in ("float32", "int64"):
        x = np.arange(12).reshape(3, 4) - 5
        ours, theirs = dg.tensor(x, dtype=getattr(dg, dt)), torch.tensor(x, dtype=getattr(torch,
                                                                                         dt))
        version = ours._version
        assert ours.square_() is ours
        theirs.square_()
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours._version == version + 1


def test_square_inplace_gradients_match_torch():
    x = np.random.default_rng(0).uniform(-2, 2, (3, 4))
    leaf, tleaf = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.square_()
    ours, theirs = leaf * 1.0, tleaf * 1.0
    ours.square_()
    theirs.square_()
    w = np.random.default_rng(1).normal(size=(3, 4))
    (ours * dg.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy())


def test_square_of_bool_is_int64_and_refuses_in_place():
    assert dg.tensor([True]).square().dtype is dg.int64  # (as torch: pow(bool, 2) is int64)
    assert torch.tensor([True]).square().dtype is torch.int64
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.tensor([True, False]).square_()
