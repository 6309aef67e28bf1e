"""Decompositions, solvers and matrix functions (``dg.linalg`` and the torch-level names): the
records of tests/opinfos/decompositions.py (forward against float64 NumPy/SciPy, finite-difference
gradients in float64, torch parity), then errors, ``_ex`` infos and named results against torch.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynagrad as dg
from harness import check_op
from opinfo import family, params
from opinfos.decompositions import LINALG_RECORDS


@pytest.mark.parametrize("info,dtype", params(family("decompositions")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


@pytest.mark.parametrize("info,dtype", params(LINALG_RECORDS))
def test_linalg(info, dtype):
    check_op(info, "cpu", dtype)


def test_cholesky_solve_gradients_match_torch_on_the_triangle():
    # L's other triangle is never read: our gradient there is 0 (as finite differences say),
    # torch's is not; on the triangle that is read they agree
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, 3))
    low = np.linalg.cholesky(a @ a.T + 3 * np.eye(3))
    b = rng.uniform(-1, 1, (3, 2))
    for upper in (False, True):
        f = low.T.copy() if upper else low
        dl, tl = dg.tensor(f, requires_grad=True), torch.tensor(f, requires_grad=True)
        db, tb = dg.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
        (dg.cholesky_solve(db, dl, upper) * dg.tensor(b)).sum().backward()
        (torch.cholesky_solve(tb, tl, upper) * torch.tensor(b)).sum().backward()
        tri = np.triu if upper else np.tril
        np.testing.assert_allclose(dl.grad.numpy(), tri(tl.grad.numpy()), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(db.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
        di, ti = dg.tensor(f, requires_grad=True), torch.tensor(f, requires_grad=True)
        dg.cholesky_inverse(di, upper).sum().backward()
        torch.cholesky_inverse(ti, upper).sum().backward()
        np.testing.assert_allclose(di.grad.numpy(), tri(ti.grad.numpy()), rtol=1e-10,
                                   atol=1e-12)
