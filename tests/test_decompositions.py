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
from opinfos.decompositions import LINALG_RECORDS, ROTATING


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


# --- errors, infos and named results against torch ------------------------------------------------

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
INDEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])
BATCH_SINGULAR = np.stack([np.eye(2), SINGULAR])
BATCH_INDEFINITE = np.stack([np.eye(2), INDEFINITE])


def _error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 (the type is what is compared)
        return exc
    raise AssertionError("no error raised")


ERRORS = {  # name -> (dynagrad call, torch call), both on the same arrays
    "inv_singular": lambda m, x: m.linalg.inv(x(SINGULAR)),
    "inv_batch_singular": lambda m, x: m.linalg.inv(x(BATCH_SINGULAR)),
    "solve_singular": lambda m, x: m.linalg.solve(x(SINGULAR), x(np.ones(2))),
    "solve_batch_singular": lambda m, x: m.linalg.solve(x(BATCH_SINGULAR), x(np.ones(2))),
    "cholesky_indefinite": lambda m, x: m.linalg.cholesky(x(INDEFINITE)),
    "cholesky_batch_indefinite": lambda m, x: m.linalg.cholesky(x(BATCH_INDEFINITE)),
    "lu_factor_singular": lambda m, x: m.linalg.lu_factor(x(SINGULAR)),
    "inv_ex_check_errors": lambda m, x: m.linalg.inv_ex(x(SINGULAR), check_errors=True),
    "cholesky_ex_check_errors": lambda m, x: m.linalg.cholesky_ex(x(INDEFINITE),
                                                                  check_errors=True),
    "inv_not_square": lambda m, x: m.linalg.inv(x(np.ones((2, 3)))),
    "inv_vector": lambda m, x: m.linalg.inv(x(np.ones(3))),
    "inv_int": lambda m, x: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
    "det_int": lambda m, x: m.linalg.det(m.ones(2, 2, dtype=m.int64)),
    "solve_shapes": lambda m, x: m.linalg.solve(x(np.eye(2)), x(np.ones(3))),
    "svd_vector": lambda m, x: m.linalg.svd(x(np.ones(3))),
    "eigh_not_square": lambda m, x: m.linalg.eigh(x(np.ones((2, 3)))),
    "cholesky_not_square": lambda m, x: m.linalg.cholesky_ex(x(np.ones((2, 3)))),
    "qr_vector": lambda m, x: m.linalg.qr(x(np.ones(3))),
    "qr_mode": lambda m, x: m.linalg.qr(x(np.ones((3, 3))), mode="x"),
    "lu_no_pivot": lambda m, x: m.linalg.lu_factor(x(np.eye(2)), pivot=False),
    "vector_norm_int": lambda m, x: m.linalg.vector_norm(m.ones(2, dtype=m.int64)),
    "matrix_norm_vector": lambda m, x: m.linalg.matrix_norm(x(np.ones(2))),
    "multi_dot_one": lambda m, x: m.linalg.multi_dot([x(np.ones(3))]),
    "cross_length": lambda m, x: m.linalg.cross(x(np.ones(2)), x(np.ones(2))),
    "cdist_columns": lambda m, x: m.cdist(x(np.ones((2, 3))), x(np.ones((2, 4)))),
    "inner_shapes": lambda m, x: m.inner(x(np.ones((2, 3))), x(np.ones(2))),
    "torch_lstsq_removed": lambda m, x: m.lstsq(x(np.eye(2)), x(np.eye(2))),
    "torch_matrix_rank_removed": lambda m, x: m.matrix_rank(x(np.eye(2))),
    "tensor_lstsq_removed": lambda m, x: x(np.eye(2)).lstsq(x(np.eye(2))),
    "torch_solve_removed": lambda m, x: m.solve(x(np.eye(2)), x(np.eye(2))),
    "tensor_solve_removed": lambda m, x: x(np.eye(2)).solve(x(np.eye(2))),
}


ERRORS.update({  # (further messages)
    "solve_ex_check_errors": lambda m, x: m.linalg.solve_ex(x(SINGULAR), x(np.ones(2)),
                                                            check_errors=True),
    "solve_dtypes": lambda m, x: m.linalg.solve(x(SINGULAR), x(np.ones(2)).float()),
    "lstsq_rows": lambda m, x: m.linalg.lstsq(x(np.eye(2)), x(np.ones((3, 1)))),
    "matrix_power_not_square": lambda m, x: m.linalg.matrix_power(x(np.ones((2, 3))), 2),
    "eigh_uplo": lambda m, x: m.linalg.eigh(x(np.eye(2)), UPLO="X"),
    "eig_not_square": lambda m, x: m.linalg.eig(x(np.ones((2, 3)))),
    "eigvals_vector": lambda m, x: m.linalg.eigvals(x(np.ones(3))),
    "eig_int": lambda m, x: m.linalg.eig(m.ones(2, 2, dtype=m.int64)),
    "eig_half": lambda m, x: m.linalg.eigvals(m.ones(2, 2, dtype=m.float16)),
    "eig_nan": lambda m, x: m.linalg.eig(x(np.full((2, 2), np.nan))),
    "tensorinv_shapes": lambda m, x: m.linalg.tensorinv(x(np.ones((2, 3))), 1),
    "matrix_norm_ord": lambda m, x: m.linalg.matrix_norm(x(np.eye(2)), 3),
    "norm_3d_with_ord": lambda m, x: m.linalg.norm(x(np.ones((2, 2, 2))), 2),
    "cdist_negative_p": lambda m, x: m.cdist(x(np.ones((2, 2))), x(np.ones((2, 2))), p=-1),
    "cov_3d": lambda m, x: m.cov(x(np.ones((2, 2, 2)))),
    "vdot_2d": lambda m, x: m.vdot(x(np.ones((2, 2))), x(np.ones(2))),
    "pdist_1d": lambda m, x: m.pdist(x(np.ones(3))),
    "solve_triangular_shapes": lambda m, x: m.linalg.solve_triangular(
        x(np.eye(2)), x(np.ones((3, 1))), upper=True),
})


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    ours = _error_of(lambda: ERRORS[name](dg, lambda a: dg.tensor(a)))
    theirs = _error_of(lambda: ERRORS[name](torch, lambda a: torch.tensor(a)))
    if isinstance(theirs, torch.linalg.LinAlgError):
        assert isinstance(ours, dg.linalg.LinAlgError), repr(ours)
    assert isinstance(ours, RuntimeError) and isinstance(theirs, RuntimeError)
    assert str(ours) == str(theirs)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(dg.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="singular"):
        dg.linalg.inv(dg.tensor(SINGULAR))


@pytest.mark.parametrize("name", ["inv_ex", "cholesky_ex", "solve_ex", "lu_factor_ex"])
def test_ex_variants_return_torch_infos_instead_of_raising(name):
    torch = pytest.importorskip("torch")
    bad = BATCH_INDEFINITE if name == "cholesky_ex" else BATCH_SINGULAR
    args = (bad, np.ones((2, 2))) if name == "solve_ex" else (bad,)
    ours = getattr(dg.linalg, name)(*(dg.tensor(a) for a in args))
    theirs = getattr(torch.linalg, name)(*(torch.tensor(a) for a in args))
    assert ours.info.dtype is dg.int32
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    if name in ("cholesky_ex", "lu_factor_ex"):  # the partial factors are LAPACK's
        first = ours[0].numpy()
        np.testing.assert_allclose(first, theirs[0].numpy(), rtol=1e-12)
    if name == "lu_factor_ex":
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())


def test_named_results_have_torch_fields():
    a = dg.tensor(np.array([[4.0, 1.0], [1.0, 3.0]]))
    b = dg.tensor(np.ones((2, 1)))
    l_ = dg.linalg
    assert l_.cholesky_ex(a).L.shape == (2, 2) and l_.cholesky_ex(a).info.item() == 0
    assert l_.inv_ex(a).inverse.shape == (2, 2)
    assert l_.solve_ex(a, b).result.shape == (2, 1)
    assert l_.qr(a).Q is not None and l_.qr(a).R.shape == (2, 2)
    assert (l_.svd(a).U.shape, l_.svd(a).S.shape, l_.svd(a).Vh.shape) == ((2, 2), (2,), (2, 2))
    assert dg.svd(a).V.shape == (2, 2)
    sd = l_.slogdet(a)
    assert sd.sign.item() == 1.0 and sd.logabsdet.item() == pytest.approx(np.log(11.0))
    eig = l_.eigh(a)
    assert eig.eigenvalues.shape == (2,) and eig.eigenvectors.shape == (2, 2)
    ls = l_.lstsq(a, b)
    assert ls.solution.shape == (2, 1) and ls.rank.dtype is dg.int64
    assert ls.residuals.shape == (0,) and ls.singular_values.shape == (0,)
    f = l_.lu_factor(a)
    assert f.LU.shape == (2, 2) and f.pivots.dtype is dg.int32
    p = l_.lu(a)
    assert (p.P.shape, p.L.shape, p.U.shape) == ((2, 2), (2, 2), (2, 2))
    ld = l_.ldl_factor(a)
    assert ld.LD.shape == (2, 2) and ld.pivots.dtype is dg.int32
    ts = dg.triangular_solve(b, a)
    assert ts.solution.shape == (2, 1) and ts.cloned_coefficient.shape == (2, 2)
    assert set(l_.common_notes) >= {"experimental_warning", "sync_note", "sync_note_ex",
                                    "sync_note_has_ex"}


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_outputs_per_driver_match_torch(driver):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (2, 4, 2)), rng.uniform(-1, 1, (2, 4, 3))
    ours = dg.linalg.lstsq(dg.tensor(a), dg.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape), (driver, o.shape, t.shape)
        assert o.dtype.name == str(t.dtype).removeprefix("torch.")
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_repeated_values_give_torch_gradients():
    # the singular vectors of a matrix with repeated singular values (and the eigenvectors with
    # repeated eigenvalues) are not unique: their gradient is not finite, as in torch; the values'
    # own gradient stays finite
    torch = pytest.importorskip("torch")
    eye = np.eye(3)
    for fn in (lambda m, x: m.linalg.svd(x)[0].sum() + m.linalg.svd(x)[2].sum(),
               lambda m, x: m.linalg.eigh(x)[1].sum(),
               lambda m, x: m.linalg.svdvals(x).sum(),
               lambda m, x: m.linalg.eigvalsh(x).sum()):
        x, tx = dg.tensor(eye, requires_grad=True), torch.tensor(eye, requires_grad=True)
        fn(dg, x).backward()
        fn(torch, tx).backward()
        assert np.isfinite(x.grad.numpy()).all() == np.isfinite(tx.grad.numpy()).all()
        if np.isfinite(tx.grad.numpy()).all():
            np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_qr_gradient_errors_match_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).uniform(-1, 1, (3, 2))
    def differentiate(m, mode, out):
        x = m.tensor(a, requires_grad=True)
        return _error_of(lambda: m.linalg.qr(x, mode=mode)[out].sum().backward())
    for mode, out in (("complete", 0), ("r", 1)):
        assert str(differentiate(dg, mode, out)) == str(differentiate(torch, mode, out))


def test_fused_products_keep_torch_dtype_rules():
    torch = pytest.importorskip("torch")
    ints = np.arange(4).reshape(2, 2)
    ours = dg.addmm(dg.tensor(ints), dg.tensor(ints), dg.tensor(ints), beta=3, alpha=2)
    theirs = torch.addmm(*(torch.tensor(ints),) * 3, beta=3, alpha=2)
    assert ours.dtype is dg.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = dg.tensor(np.full((2, 2), np.nan))
    x.addmm_(dg.eye(2, dtype=dg.float64), dg.eye(2, dtype=dg.float64), beta=0)
    np.testing.assert_array_equal(x.numpy(), np.eye(2))


def test_fused_in_place_products_follow_autograd_rules():
    torch = pytest.importorskip("torch")
    leaf = dg.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.addmm_(dg.eye(2), dg.eye(2))
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3, 2))
    x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = dg.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    out = (dg.ones(2, 2, dtype=dg.float64) * 1).addmm_(x, y, beta=0.5, alpha=2)
    tout = (torch.ones(2, 2, dtype=torch.float64) * 1).addmm_(tx, ty, beta=0.5, alpha=2)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


def test_double_backward_through_inverse_and_solve():
    # the gradient formulas are ops: a Hessian-vector product matches torch's
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (3, 3)) + 2 * np.eye(3)
    b = rng.uniform(-1, 1, (3, 2))
    x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (g,) = dg.autograd.grad(dg.linalg.solve(x, dg.tensor(b)).pow(2).sum()
                            + dg.linalg.det(x), x, create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.solve(tx, torch.tensor(b)).pow(2).sum()
                                + torch.linalg.det(tx), tx, create_graph=True)
    (h,) = dg.autograd.grad((g * g).sum(), x)
    (th,) = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-9, atol=1e-10)


# --- more calls against torch: values and gradients ---------------------------------------------

_RNG = np.random.default_rng(0)
_A = _RNG.uniform(-1, 1, (2, 3, 4))
_S = _RNG.uniform(-1, 1, (3, 3)) + 2 * np.eye(3)
_INF = float("inf")

def _svd_gauge(m, a):
    u, s, vh = m.linalg.svd(a, False)
    return u @ vh, s


PARITY = {  # name -> (function of the module and the tensors, arrays)
    "matrix_norm_1_dims_0_2": (lambda m, x: m.linalg.matrix_norm(x, 1, (0, 2)), (_A,)),
    "matrix_norm_inf_keepdim": (lambda m, x: m.linalg.matrix_norm(x, _INF, (2, 1), True), (_A,)),
    "matrix_norm_nuc_keepdim": (lambda m, x: m.linalg.matrix_norm(x, "nuc", (0, 2), True), (_A,)),
    "norm_inf_2d": (lambda m, x: m.linalg.norm(x[0], _INF), (_A,)),
    "vector_norm_0d": (lambda m, x: m.linalg.vector_norm(x[0, 0, 0]), (_A,)),
    "vector_norm_dtype": (lambda m, x: m.linalg.vector_norm(x, dtype=m.float64), (_A,)),
    "cond_batched": (lambda m, x: m.linalg.cond(x[:, :, :3]), (_A,)),
    "pinv_atol": (lambda m, x: m.linalg.pinv(x, atol=0.5), (_A,)),
    "pinv_rtol": (lambda m, x: m.linalg.pinv(x, rtol=0.5), (_A,)),
    "pinv_hermitian": (lambda m, x: m.linalg.pinv(x @ x.mT, hermitian=True), (_A,)),
    "matrix_rank_atol": (lambda m, x: m.linalg.matrix_rank(x, atol=0.5), (_A,)),
    "solve_broadcast": (lambda m, a, b: m.linalg.solve(a, b), (_S, _RNG.uniform(-1, 1, (2, 3, 2)))),
    "solve_batched_vectors": (lambda m, a, b: m.linalg.solve(a, b),
                              (np.stack([_S, _S.T]), _RNG.uniform(-1, 1, (2, 3)))),
    "det_rank_one": (lambda m, a: m.linalg.det(a), (np.ones((3, 3)),)),
    "inv_empty_batch": (lambda m, a: m.linalg.inv(a), (np.zeros((0, 2, 2)),)),
    "slogdet_negative": (lambda m, a: m.linalg.slogdet(a), (-_S,)),
    "qr_batched_wide": (lambda m, a: m.linalg.qr(a)[1], (_RNG.uniform(-1, 1, (2, 2, 3)),)),
    "lu_wide": (lambda m, a: m.linalg.lu(a), (_RNG.uniform(-1, 1, (2, 3)),)),
    "lu_tall": (lambda m, a: m.linalg.lu(a), (_RNG.uniform(-1, 1, (4, 2)),)),
    "matrix_power_0_batched": (lambda m, a: m.linalg.matrix_power(a, 0), (_A[:, :, :3],)),
    "tensordot_tensor_dims": (lambda m, a, b: m.tensordot(a, b, dims=m.tensor([[1], [0]])),
                              (_A[0], _A[1].T)),
    "cross_default_dim": (lambda m, a, b: m.cross(a, b), (_A[0], _A[1])),
    "cdist_zero_distances": (lambda m, a: m.cdist(a, a), (_A[0],)),
    "kron_0d": (lambda m, a, b: m.kron(a, b), (np.array(2.0), _A[0, 0])),
    "addbmm_beta0_nan": (lambda m, a, b, c: m.addbmm(a, b, c, beta=0),
                         (np.full((3, 3), np.nan), _A, np.swapaxes(_A, 1, 2))),
    "baddbmm_broadcast": (lambda m, a, b, c: m.baddbmm(a, b, c, alpha=2),
                          (_A[0, 0, :3], _A, np.swapaxes(_A, 1, 2))),
    "lstsq_vector": (lambda m, a, b: m.linalg.lstsq(a, b).solution, (_A[0].T, _A[1, 0])),
    "lstsq_wide": (lambda m, a, b: m.linalg.lstsq(a, b).solution, (_A[0, :2], _A[1, :2])),
    "svd_wide_gauge": (lambda m, a: _svd_gauge(m, a), (_A,)),
    "matrix_exp_batched": (lambda m, a: m.linalg.matrix_exp(a), (_A[:, :, :3],)),
    "torch_svd_without_uv": (lambda m, a: m.svd(a, compute_uv=False), (_A[0].T,)),
    "torch_lu_infos": (lambda m, a: m.lu(a, get_infos=True), (SINGULAR,)),
    "logdet_singular": (lambda m, a: m.logdet(a), (SINGULAR,)),
    "inner_0d": (lambda m, a, b: m.inner(a, b), (np.array(2.0), _A[0, 0])),
}


@pytest.mark.parametrize("name", sorted(PARITY))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    fn, arrays = PARITY[name]
    ours_in = [dg.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours, theirs = fn(dg, *ours_in), fn(torch, *theirs_in)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, t in zip(ours, theirs, strict=True):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.dtype.name == str(t.dtype).removeprefix("torch.")
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-9,
                                   atol=1e-10)
    weights = [np.random.default_rng(1).uniform(0.5, 1.5, tuple(t.shape)) for t in theirs]
    if any(t.requires_grad for t in theirs):
        sum(((o * dg.tensor(w)).sum() for o, w in zip(ours, weights) if o.requires_grad),
            start=dg.zeros(())).backward()
        sum((t * torch.tensor(w)).sum() for t, w in zip(theirs, weights)
            if t.requires_grad).backward()
        for x, tx in zip(ours_in, theirs_in):
            want = np.zeros(tx.shape) if tx.grad is None else tx.grad.numpy()
            got = np.zeros(tuple(x.shape)) if x.grad is None else x.grad.numpy()
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix():
    # rank n - 1: no inverse, but the gradient (the cofactors) is finite and nonzero; finite
    # differences agree (torch returns zeros here)
    a = dg.tensor(np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]), requires_grad=True)
    assert dg.autograd.gradcheck(dg.linalg.det, (a,))
    dg.linalg.det(a).backward()
    cof = np.array([[4.0, 4, -4], [-2, -2, 2], [0, 0, 0]])
    np.testing.assert_allclose(a.grad.numpy(), cof, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eig_values_and_vectors(dtype):
    # eigenvalues as sets against NumPy, A v = w v, unit-norm vectors whose largest component is
    # real, complex dtypes as torch's (complex64 for float32), batched
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.uniform(-1, 1, (2, 3, 3)), ROTATING[None]]).astype(dtype)
    w, v = dg.linalg.eig(dg.tensor(a))
    want_dtype = {"float32": "complex64", "float64": "complex128"}[dtype]
    assert w.dtype.name == v.dtype.name == want_dtype
    assert dg.linalg.eigvals(dg.tensor(a)).dtype.name == want_dtype
    assert str(torch.linalg.eig(torch.tensor(a))[0].dtype) == f"torch.{want_dtype}"
    tol = 1e-5 if dtype == "float32" else 1e-12
    w, v = w.numpy(), v.numpy()
    ref = np.linalg.eigvals(a.astype(np.float64))
    key = lambda z: np.sort_complex(np.round(z, 4))
    for k in range(a.shape[0]):
        np.testing.assert_allclose(key(w[k]), key(ref[k]), atol=1e-4)
        np.testing.assert_allclose(a[k] @ v[k], v[k] * w[k], atol=tol * 10)
        np.testing.assert_allclose(np.linalg.norm(v[k], axis=0), 1, rtol=tol)
        big = np.abs(v[k]).argmax(axis=0)
        np.testing.assert_allclose(v[k][big, range(3)].imag, 0, atol=tol)
    np.testing.assert_allclose(dg.linalg.eigvals(dg.tensor(a)).numpy(), w, rtol=tol, atol=tol)


def test_eig_gradients_match_torch():
    # phase-invariant losses (|w|, |v|^2, Re w) of real and complex input; a loss that depends on
    # an eigenvector's phase is refused with torch's message
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    losses = (lambda m, w, v: w.abs().sum() + (v.abs() ** 2 * m.arange(3.0)).sum(),
              lambda m, w, v: (w.real * w.imag).sum(),
              lambda m, w, v: (w.real ** 2).sum() + v.abs().sum())
    inputs = (ROTATING, rng.uniform(-1, 1, (2, 3, 3)),
              rng.uniform(-1, 1, (3, 3)) + 1j * rng.uniform(-1, 1, (3, 3)))
    for a in inputs:
        for loss in losses:
            x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            loss(dg, *dg.linalg.eig(x)).backward()
            loss(torch, *torch.linalg.eig(tx)).backward()
            assert x.grad.dtype.name == str(tx.grad.dtype).removeprefix("torch.")
            np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-10)
    def phase(m):
        x = m.tensor(ROTATING, requires_grad=True)
        return _error_of(lambda: m.linalg.eig(x)[1].imag.sum().backward())
    ours, theirs = phase(dg), phase(torch)
    assert type(ours) is type(theirs) and str(ours) == str(theirs)


@pytest.mark.parametrize("ord", [2, 3, 1, float("inf"), 0.5, -1])
def test_vector_norm_gradient_through_its_dtype_cast_matches_torch(ord):
    # dtype=float64 on float32 input: the norm is float64, the gradient reaching x is rounded
    # to float32 at the cast (torch's rule); values within float32 precision of torch's
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for dim in (None, 1):
        x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        ours = dg.linalg.vector_norm(x, ord, dim, dtype=dg.float64)
        theirs = torch.linalg.vector_norm(tx, ord, dim, dtype=torch.float64)
        assert ours.dtype is dg.float64
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
        ours.sum().backward()
        theirs.sum().backward()
        assert x.grad.dtype is dg.float32 and tx.grad.dtype is torch.float32
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)
