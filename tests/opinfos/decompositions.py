"""Records of the decompositions, solvers and matrix functions: the registered torch-level ops
(``RECORDS``: det, inverse, cholesky_solve, lu_unpack...) and the ``dg.linalg`` functions
(``LINALG_RECORDS``, checked by tests/test_decompositions.py; they are not registered ops).

Inputs are well conditioned: square matrices are diagonally dominant, SPD inputs are built as
``a a^T + n I``, singular values and eigenvalues are distinct. Forward results are compared with
float64 NumPy/SciPy, gradients by finite differences in float64 and with torch. The gradients of
svd and eigh are checked on gauge-invariant functions of the vectors (``U * U``, ``U @ Vh``), as
torch's own tests do: a singular vector's sign is arbitrary.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

import dynagrad as dg
from opinfo import OpInfo, Sample, sampler, uniform

try:
    import torch
except ImportError:
    torch = None

TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}
TORCH_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-9)}
GRAD_TOL = {"float64": (1e-8, 1e-8)}
FLOATS = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}


def mat(shape, seed=0):
    """Diagonally dominant square matrices (well conditioned), or plain data when not square."""
    a = uniform(shape, seed, -1.0, 1.0)
    if shape[-1] == shape[-2]:
        a = a + 2.0 * np.eye(shape[-1])
    return a


def spd(shape, seed=0):
    a = uniform(shape, seed, -1.0, 1.0)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def data(shape, seed=0):
    return uniform(shape, seed, -1.0, 1.0)


def record(name, ref, forward, grad=(), cuda=(), dtypes=None, **kwargs):
    kwargs.setdefault("tol", TOL)
    kwargs.setdefault("torch_tol", TORCH_TOL)
    kwargs.setdefault("grad_tol", GRAD_TOL)
    return OpInfo(name, "decompositions", sampler(forward, grad, cuda), ref, dtypes or FLOATS,
                  **kwargs)


def both(fn):
    """``fn(lib)`` for dynagrad and for torch: a composite test function written once."""
    return fn(dg), (fn(torch) if torch is not None else None)


def linalg(name, ref, forward, grad=(), cuda=(), **kwargs):
    """A record of ``dg.linalg.<name>`` compared with ``torch.linalg.<name>``."""
    kwargs.setdefault("op", getattr(dg.linalg, name))
    kwargs.setdefault("torch", f"linalg.{name}")
    return record(f"linalg.{name}", ref, forward, grad, cuda, **kwargs)


def composite(name, fn, ref, forward, grad=(), cuda=(), **kwargs):
    """A record of a function of dg.linalg ops (gauge-invariant, or making its input SPD)."""
    ours, theirs = both(fn)
    return record(name, ref, forward, grad, cuda, op=ours, torch=theirs, **kwargs)


# --- float64 references --------------------------------------------------------------------------

def _each(fn, a, *rest):
    """``fn`` on each matrix of a batch (outputs stacked)."""
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [fn(x, *rest) for x in flat]
    if isinstance(outs[0], tuple):
        return tuple(np.stack([o[k] for o in outs]).reshape(a.shape[:-2] + np.shape(outs[0][k]))
                     for k in range(len(outs[0])))
    return np.stack(outs).reshape(a.shape[:-2] + np.shape(outs[0]))


def _lu_factor_ref(a):
    def one(x):
        lu, piv = scipy.linalg.lu_factor(x)
        return lu, (piv + 1).astype(np.int32)
    return _each(one, a)


def _lu_ref(a):
    return _each(lambda x: scipy.linalg.lu(x), a)


def _swap(x):
    return np.swapaxes(x, -1, -2)


def _chol_spd(a):
    n = a.shape[-1]
    return np.linalg.cholesky(a @ _swap(a) + 3 * np.eye(n))


def _sym(a):
    return a + _swap(a)


def _svd_gauge_ref(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u @ vh, s, u * u, vh * vh


def _svd_gauge(lib):
    def fn(a):
        u, s, vh = lib.linalg.svd(a, full_matrices=False)
        return u @ vh, s, u * u, vh * vh
    return fn


def _eigh_gauge_ref(a):
    w, v = np.linalg.eigh(_sym(a))
    return w, v * v


def _eigh_gauge(lib):
    def fn(a):
        w, v = lib.linalg.eigh(a + a.mT)
        return w, v * v
    return fn


def _eig_phase_free_ref(a):
    w, v = np.linalg.eig(a)
    return w.real, w.imag, np.abs(v)


def _eig_phase_free(lib):
    """Real functions of eig's outputs that do not depend on an eigenvector's phase."""
    def fn(a):
        w, v = lib.linalg.eig(a)
        return w.real, w.imag, v.abs()
    return fn


def _eigvals_parts(lib):
    def fn(a):
        w = lib.linalg.eigvals(a)
        return w.real, w.imag
    return fn


# a real matrix with a complex pair of eigenvalues and a real one
ROTATING = np.array([[0.0, -2.0, 1.0], [1.0, 0.0, 0.5], [0.3, 0.2, 1.0]])


def _chol_of_spd(lib, upper=False):
    def fn(a):
        eye = lib.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        return lib.linalg.cholesky(a @ a.mT + 3 * eye, upper=upper)
    return fn


def _eigvalsh_of_sym(lib):
    return lambda a: lib.linalg.eigvalsh(a + a.mT)


def _solve_ref(a, b, left=True):
    if not left:
        return _swap(_solve_ref(_swap(a), _swap(b)))
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _tri_ref(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - np.diag(np.diagonal(t)) + np.eye(t.shape[-1]) if t.ndim == 2 else \
            t * (1 - np.eye(t.shape[-1])) + np.eye(t.shape[-1])
    return np.linalg.solve(t, b) if left else _swap(np.linalg.solve(_swap(t), _swap(b)))


def _pinv_ref(a, **kwargs):
    return np.linalg.pinv(a)


def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False):
    a = np.moveaxis(a, dim, (-2, -1))
    out = np.linalg.norm(a, ord, axis=(-2, -1))
    if keepdim:
        for d in sorted(d % (a.ndim) for d in dim):
            out = np.expand_dims(out, d)
    return out


def _vector_norm_ref(x, ord=2, dim=None, keepdim=False):
    a = np.abs(x)
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    if ord == np.inf:
        return a.max(axis=axis, keepdims=keepdim)
    if ord == -np.inf:
        return a.min(axis=axis, keepdims=keepdim)
    if ord == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdim).astype(np.float64)
    return (a ** ord).sum(axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _householder_ref(a, tau):
    def one(x, t):
        q = np.eye(x.shape[0])
        for i in range(t.shape[0]):
            v = np.concatenate([np.zeros(i), [1.0], x[i + 1:, i]])
            q = q @ (np.eye(x.shape[0]) - t[i] * np.outer(v, v))
        return q[:, :x.shape[1]]
    if a.ndim == 2:
        return one(a, tau)
    return np.stack([one(x, t) for x, t in zip(a, tau)])


def _lstsq_ref(a, b):
    x = np.linalg.pinv(a) @ b
    return x


def _cross_ref(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


def _vander_ref(x, N=None):
    n = x.shape[-1] if N is None else N
    return x[..., None] ** np.arange(n)


LU_SOLVE_KW = [{}, {"adjoint": True}, {"left": False}, {"left": False, "adjoint": True}]


def _lu_solve_samples(seed):
    return [Sample((mat((3, 3), seed), data((3, 2) if kw.get("left", True) else (2, 3), seed + 1)),
                   kw) for kw in LU_SOLVE_KW]


def _lu_solve(lib):
    return lambda a, b, **kw: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, **kw)


def _lu_solve_ref(a, b, left=True, adjoint=False):
    a = _swap(a) if adjoint else a
    return np.linalg.solve(a, b) if left else _swap(np.linalg.solve(_swap(a), _swap(b)))


def _ldl_solve(lib):
    return lambda a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a), b)


# --- the dg.linalg records -----------------------------------------------------------------------

SQUARES = [(3, 3), (2, 3, 3), (1, 1)]


def _square_forward(dtype):
    return [Sample((mat(s, k),), layout=lay) for k, s in enumerate(SQUARES) for lay in ("C", "mT")]


SQUARE_GRAD = [Sample((mat((3, 3), 7),)), Sample((mat((2, 2, 2), 8),), layout="mT")]
SQUARE_CUDA = [Sample((mat((2, 2), 3),))]
RECT = [(3, 3), (4, 2), (2, 4), (2, 3, 2)]


def _rect_forward(dtype):
    return [Sample((data(s, k),)) for k, s in enumerate(RECT)]


RECT_GRAD = [Sample((data(s, k + 10),)) for k, s in enumerate(RECT)]
RECT_CUDA = [Sample((data((3, 2), 3),))]

_SOLVES = [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (3, 1)), ((2, 3, 3), (2, 3)),
           ((3, 3), (2, 3, 2))]


def _solve_samples(seed=0):
    return [Sample((mat(sa, seed), data(sb, seed + 1))) for sa, sb in _SOLVES]


def _tri_samples(seed=0):
    out = []
    for upper in (True, False):
        for left in (True, False):
            a = mat((3, 3), seed)
            b = data((3, 2) if left else (2, 3), seed + 1)
            out.append(Sample((a, b), {"upper": upper, "left": left}))
    out.append(Sample((mat((2, 3, 3), seed), data((3, 1), seed + 2)),
                      {"upper": False, "unitriangular": True}))
    return out


_NORM_X = data((2, 3, 4), 4)

LINALG_RECORDS = [
    linalg("inv", np.linalg.inv, _square_forward, SQUARE_GRAD, SQUARE_CUDA, gradgrad=True),
    linalg("inv_ex", lambda a: (np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)),
           _square_forward, SQUARE_GRAD, SQUARE_CUDA,
           out_dtype=lambda d: (d, dg.int32)),
    linalg("det", np.linalg.det, _square_forward, SQUARE_GRAD, SQUARE_CUDA, gradgrad=True),
    linalg("slogdet", lambda a: tuple(np.linalg.slogdet(a)), lambda d: _square_forward(d) + [
        Sample((-mat((3, 3), 5),))], SQUARE_GRAD, SQUARE_CUDA),
    linalg("solve", _solve_ref, lambda d: _solve_samples() + [
        Sample((mat((3, 3)), data((2, 3))), {"left": False})],
        _solve_samples(3)[:3] + [Sample((mat((3, 3), 4), data((2, 3), 5)), {"left": False})],
        [Sample((mat((2, 2)), data((2, 1), 1)))], gradgrad=True),
    linalg("solve_ex", lambda a, b: (_solve_ref(a, b), np.zeros(a.shape[:-2], np.int32)),
           lambda d: _solve_samples()[:2], _solve_samples(3)[:1],
           [Sample((mat((2, 2)), data((2, 1), 1)))], out_dtype=lambda d: (d, dg.int32)),
    linalg("solve_triangular", _tri_ref, lambda d: _tri_samples(), _tri_samples(4),
           [Sample((mat((2, 2)), data((2, 1), 1)), {"upper": True})], gradgrad=True),
    # cholesky reads the lower triangle only: gradients go through a a^T + 3 I (symmetric in a)
    linalg("cholesky", lambda a, upper=False: _swap(np.linalg.cholesky(a)) if upper else
           np.linalg.cholesky(a),
           lambda d: [Sample((spd(s, k),)) for k, s in enumerate(SQUARES)] + [
               Sample((spd((3, 3), 4),), {"upper": True})],
           [Sample((spd((3, 3), 5),), gradcheck=False)], [Sample((spd((2, 2), 1),))]),
    composite("linalg.cholesky(a a^T + 3I)", lambda lib: _chol_of_spd(lib), _chol_spd,
              lambda d: [Sample((data((3, 3)),))],
              [Sample((data((3, 3), 2),)), Sample((data((2, 2, 2), 3),))],
              [Sample((data((2, 2), 1),))], gradgrad=True),
    composite("linalg.cholesky(a a^T + 3I, upper)", lambda lib: _chol_of_spd(lib, True),
              lambda a: _swap(_chol_spd(a)), lambda d: [Sample((data((3, 3)),))],
              [Sample((data((3, 3), 2),))], [Sample((data((2, 2), 1),))]),
    linalg("cholesky_ex", lambda a: (np.linalg.cholesky(a), np.zeros(a.shape[:-2], np.int32)),
           lambda d: [Sample((spd((2, 3, 3)),))], (), [Sample((spd((2, 2), 1),))],
           out_dtype=lambda d: (d, dg.int32)),
    linalg("qr", lambda a, mode="reduced": tuple(np.linalg.qr(a, mode=mode)),
           lambda d: _rect_forward(d) + [Sample((data((4, 2)),), {"mode": "complete"}),
                                         Sample((data((2, 4)),), {"mode": "complete"})],
           RECT_GRAD[1:3] + [Sample((data((2, 2), 3),), {"mode": "complete"})], RECT_CUDA,
           gradgrad=True),
    linalg("svd", lambda a, full_matrices=True: tuple(np.linalg.svd(a, full_matrices)),
           lambda d: _rect_forward(d) + [Sample((data((4, 2)),), {"full_matrices": False})],
           (), RECT_CUDA, torch_outputs=(1,)),
    composite("linalg.svd (gauge-invariant)", _svd_gauge, _svd_gauge_ref,
              lambda d: _rect_forward(d), RECT_GRAD, RECT_CUDA),
    linalg("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), _rect_forward, RECT_GRAD,
           RECT_CUDA),
    linalg("eigh", lambda a, UPLO="L": tuple(np.linalg.eigh(a, UPLO)),
           lambda d: [Sample((data((3, 3)),)), Sample((data((2, 3, 3), 1),), {"UPLO": "U"})],
           (), [Sample((_sym(data((2, 2))),))], torch_outputs=(0,)),
    composite("linalg.eigh (gauge-invariant)", _eigh_gauge, _eigh_gauge_ref,
              lambda d: [Sample((data((3, 3)),))],
              [Sample((data((3, 3), 2),)), Sample((data((2, 2, 2), 3),))],
              [Sample((data((2, 2), 1),))], gradgrad=True),
    linalg("eigvalsh", lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO),
           lambda d: [Sample((data((3, 3)),)), Sample((data((2, 3, 3), 1),), {"UPLO": "U"})],
           (), [Sample((_sym(data((2, 2))),))]),
    composite("linalg.eigvalsh(a + a^T)", _eigvalsh_of_sym, lambda a: np.linalg.eigvalsh(_sym(a)),
              lambda d: [Sample((data((3, 3)),))], [Sample((data((3, 3), 2),))],
              [Sample((data((2, 2), 1),))]),
    composite("linalg.eig (phase-invariant)", _eig_phase_free, _eig_phase_free_ref,
              lambda d: [Sample((ROTATING,)), Sample((data((2, 3, 3), 1),))],
              [Sample((ROTATING,))], [Sample((ROTATING[:2, :2],))], gradgrad=True),
    composite("linalg.eigvals (real, imag)", _eigvals_parts,
              lambda a: (np.linalg.eigvals(a).real, np.linalg.eigvals(a).imag),
              lambda d: [Sample((ROTATING,)), Sample((data((2, 3, 3), 1),))],
              [Sample((ROTATING,))], [Sample((ROTATING[:2, :2],))]),
    linalg("pinv", _pinv_ref, lambda d: _rect_forward(d) + [
        Sample((spd((3, 3)),), {"hermitian": True})], RECT_GRAD, RECT_CUDA),
    linalg("lstsq", lambda a, b, driver=None: _lstsq_ref(a, b),
           lambda d: [Sample((data((4, 2)), data((4, 3), 1))),
                      Sample((data((2, 4, 2)), data((2, 4, 1), 1)))],
           [Sample((data((4, 2), 2), data((4, 3), 3)))],
           [Sample((data((3, 2)), data((3, 1), 1)))], torch_outputs=(0,),
           op=lambda a, b: dg.linalg.lstsq(a, b).solution,
           torch=(lambda a, b: torch.linalg.lstsq(a, b).solution) if torch else None),
    linalg("lu_factor", _lu_factor_ref, lambda d: [Sample((mat((3, 3)),)),
                                                  Sample((mat((2, 3, 3), 1),))],
           [Sample((mat((3, 3), 2),))], SQUARE_CUDA, out_dtype=lambda d: (d, dg.int32)),
    linalg("lu_factor_ex", lambda a: _lu_factor_ref(a) + (np.zeros(a.shape[:-2], np.int32),),
           lambda d: [Sample((mat((2, 3, 3), 1),))], (), SQUARE_CUDA,
           out_dtype=lambda d: (d, dg.int32, dg.int32)),
    linalg("lu", _lu_ref, lambda d: [Sample((mat((3, 3)),)), Sample((data((4, 2)),)),
                                     Sample((data((2, 4)),)), Sample((mat((2, 3, 3)),))],
           [Sample((mat((3, 3), 2),))], SQUARE_CUDA, gradgrad=True),
    composite("linalg.lu_solve(*lu_factor(a), b)", _lu_solve, _lu_solve_ref,
              lambda d: _lu_solve_samples(0) + [Sample((mat((2, 3, 3)), data((2, 3, 1), 1)))],
              _lu_solve_samples(2)[1:3],
              [Sample((mat((2, 2)), data((2, 1), 1)))]),
    composite("linalg.ldl_solve(*ldl_factor(a), b)", _ldl_solve,
              lambda a, b: np.linalg.solve(a, b),
              lambda d: [Sample((_sym(data((3, 3))), data((3, 2), 1))),
                         Sample((_sym(data((2, 3, 3))), data((2, 3, 1), 1)))], (),
              [Sample((_sym(data((2, 2))), data((2, 1), 1)))], differentiable=False),
    linalg("ldl_factor", None, lambda d: [Sample((_sym(data((3, 3))),)),
                                          Sample((_sym(data((2, 3, 3))),))], (),
           [Sample((_sym(data((2, 2))),))], differentiable=False),
    linalg("ldl_factor_ex", None, lambda d: [Sample((_sym(data((3, 3))),))], (),
           [Sample((_sym(data((2, 2))),))], differentiable=False),
    linalg("matrix_exp", lambda a: np.stack([scipy.linalg.expm(x) for x in a.reshape(
        (-1,) + a.shape[-2:])]).reshape(a.shape),
           lambda d: [Sample((data(s, k),)) for k, s in enumerate(SQUARES)],
           [Sample((data((2, 2, 2), 5),))], [Sample((data((2, 2)),))], gradgrad=True),
    linalg("matrix_power", lambda a, n: np.linalg.matrix_power(a, n),
           lambda d: [Sample((mat((3, 3)), n)) for n in (0, 1, 2, 5, -1, -2)] + [
               Sample((mat((2, 2, 2)), 3))],
           [Sample((mat((3, 3), 1), n)) for n in (3, -2)], [Sample((mat((2, 2)), 2))]),
    linalg("matrix_rank", lambda a, **k: np.linalg.matrix_rank(a),
           # (a rank-2 product rounded to float32 has rank 3 at float64's tolerance)
           lambda d: [Sample((data((3, 4)),))] + (
               [Sample((data((3, 2)) @ data((2, 4), 1),))] if d is dg.float64 else []) + [
               Sample((np.zeros((2, 2)),)), Sample((spd((3, 3)),), {"hermitian": True})], (),
           [Sample((data((2, 2)),))], differentiable=False),
    linalg("matrix_norm", _matrix_norm_ref,
           lambda d: [Sample((data((3, 4)), o)) for o in ("fro", "nuc", 2, -2, 1, -1, np.inf,
                                                         -np.inf)] + [
               Sample((_NORM_X, "fro", (0, 2), True)), Sample((_NORM_X, 2, (2, 0))),
               Sample((_NORM_X, 1, (0, 1), True))],
           [Sample((data((3, 4), 2), o)) for o in ("fro", "nuc", 2, -2, 1, np.inf)],
           [Sample((data((2, 3)), "fro")), Sample((data((2, 3)), "nuc"))]),
    linalg("vector_norm", _vector_norm_ref,
           lambda d: [Sample((_NORM_X, o)) for o in (2, 1, 0, 3, 0.5, -1, np.inf, -np.inf)] + [
               Sample((_NORM_X, 2, (0, 2), True)), Sample((_NORM_X, 1, 1))],
           [Sample((data((2, 3), 2), o)) for o in (2, 1, 3, np.inf)] + [
               Sample((data((2, 3), 3), 2, 1, True))],
           [Sample((data((2, 3)),))]),
    linalg("norm", lambda x, ord=None, dim=None: np.linalg.norm(x, ord, dim),
           lambda d: [Sample((data((3, 4)),)), Sample((data((3, 4)), "nuc")),
                      Sample((data((4,)), 3)), Sample((_NORM_X, None, (1, 2))),
                      Sample((_NORM_X, 1, 0))],
           [Sample((data((3, 4), 2),)), Sample((data((3, 4), 2), "fro"))],
           [Sample((data((2, 3)),))]),
    linalg("cond", lambda a, p=None: np.linalg.cond(a, p),
           lambda d: [Sample((mat((3, 3)), p)) for p in (None, 2, -2, "fro", "nuc", 1, np.inf)]
           + [Sample((data((3, 4)),))],
           # (torch's own gradient of cond(A, 1) fails: its inverse is modified in place)
           [Sample((mat((3, 3), 2),)), Sample((mat((3, 3), 2), 1), torch=False)],
           [Sample((mat((2, 2)),))]),
    linalg("multi_dot", lambda ts: np.linalg.multi_dot(ts),
           lambda d: [Sample(([data((3,)), data((3, 4), 1), data((4, 2), 2)],)),
                      Sample(([data((2, 3)), data((3, 4), 1), data((4,), 2)],))],
           [Sample(([data((2, 3), 3), data((3, 2), 4)],))],
           [Sample(([data((2, 3)), data((3, 2), 1)],))]),
    linalg("tensorinv", lambda a, ind=2: np.linalg.tensorinv(a, ind),
           lambda d: [Sample((mat((4, 4)).reshape(4, 2, 2), 1)),
                      Sample((mat((4, 4)).reshape(2, 2, 2, 2),))],
           [Sample((mat((4, 4), 1).reshape(4, 2, 2), 1))],
           [Sample((mat((4, 4)).reshape(4, 2, 2), 1))]),
    linalg("tensorsolve", lambda a, b, dims=None: np.linalg.tensorsolve(a, b, dims),
           lambda d: [Sample((mat((4, 4)).reshape(2, 2, 4), data((2, 2), 1))),
                      Sample((mat((4, 4)).reshape(4, 2, 2).transpose(1, 2, 0), data((4,), 1)),
                             {"dims": (0, 1)})],
           [Sample((mat((4, 4), 2).reshape(2, 2, 4), data((2, 2), 3)))],
           [Sample((mat((4, 4)).reshape(2, 2, 4), data((2, 2), 1)))]),
    linalg("vander", _vander_ref,
           lambda d: [Sample((data((3,)),)), Sample((data((2, 3)),), {"N": 4})],
           [Sample((data((3,), 1),))], [Sample((data((3,)),))]),
    linalg("vecdot", lambda x, y, dim=-1: (x * y).sum(dim),
           lambda d: [Sample((data((2, 3)), data((3,), 1))),
                      Sample((data((2, 3)), data((2, 3), 1)), {"dim": 0})],
           [Sample((data((2, 3), 2), data((3,), 3)))], [Sample((data((2, 3)), data((3,), 1)))]),
    linalg("householder_product", _householder_ref,
           lambda d: [Sample((data((4, 3)), data((2,), 1))), Sample((data((3, 3)), data((3,), 1))),
                      Sample((data((2, 3, 2)), data((2, 2), 1)))],
           [Sample((data((4, 3), 2), data((2,), 3)))], [Sample((data((3, 2)), data((2,), 1)))]),
    linalg("diagonal", lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2),
           lambda d: [Sample((_NORM_X,)), Sample((_NORM_X,), {"offset": 1, "dim1": 0})],
           [Sample((data((3, 3), 1),))], [Sample((data((2, 3)),))]),
    linalg("cross", _cross_ref,
           lambda d: [Sample((data((2, 3)), data((2, 3), 1))),
                      Sample((data((3, 2)), data((3, 1), 1)), {"dim": 0})],
           [Sample((data((2, 3), 2), data((2, 3), 3)))],
           [Sample((data((2, 3)), data((2, 3), 1)))]),
    linalg("matmul", np.matmul, lambda d: [Sample((data((2, 3)), data((3, 2), 1)))],
           [Sample((data((2, 3), 2), data((3, 2), 3)))],
           [Sample((data((2, 3)), data((3, 2), 1)))]),
]


# --- the registered torch-level ops --------------------------------------------------------------

def _op(name, ref, forward, grad=(), cuda=(), **kwargs):
    return record(name, ref, forward, grad, cuda, **kwargs)


def _chol_solve_ref(b, l, upper=False):
    a = _swap(l) @ l if upper else l @ _swap(l)
    return np.linalg.solve(a, b)


def _chol_inverse_ref(l, upper=False):
    a = _swap(l) @ l if upper else l @ _swap(l)
    return np.linalg.inv(a)


def _torch_svd_gauge(lib):
    def fn(a, some=True):
        u, s, v = lib.svd(a, some=some)
        return u @ v.mT, s, u * u
    return fn


def _torch_svd_gauge_ref(a, some=True):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u @ vh, s, u * u


def _lowrank(lib, fn):
    def run(a, q):
        u, s, v = getattr(lib, fn)(a, q=q)
        return s, (u * s.unsqueeze(-2)) @ v.mT
    return run


def _lowrank_ref(a, q, center=False):
    if center:
        a = a - a.mean(-2, keepdims=True)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s[..., :q], (u[..., :, :q] * s[..., None, :q]) @ vh[..., :q, :]


def _tri(lib, upper=True, transpose=False):
    def fn(b, a):
        return lib.triangular_solve(b, a, upper=upper, transpose=transpose)
    return fn


def _lu_unpack(lib):
    return lambda a: lib.lu_unpack(*lib.linalg.lu_factor(a))


def _torch_lu_solve(lib):
    return lambda a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a))


def _torch_lu(lib):
    return lambda a: lib.lu(a)


_LOW_RANK = data((5, 2), 1) @ data((2, 4), 2)


def _with_method(dtype):
    """The square samples, and one call as a Tensor method."""
    return _square_forward(dtype) + [Sample((mat((3, 3), 9),), method=True)]

RECORDS = [
    _op("det", np.linalg.det, _with_method, SQUARE_GRAD, SQUARE_CUDA),
    _op("slogdet", lambda a: tuple(np.linalg.slogdet(a)), _with_method, SQUARE_GRAD,
        SQUARE_CUDA),
    _op("logdet", lambda a: np.log(np.linalg.det(a)),
        lambda d: _with_method(d) + [Sample((-mat((3, 3), 5),))], SQUARE_GRAD, SQUARE_CUDA),
    _op("inverse", np.linalg.inv, _with_method, SQUARE_GRAD, SQUARE_CUDA),
    _op("pinverse", lambda a, rcond=1e-15: np.linalg.pinv(a),
        lambda d: _rect_forward(d) + [Sample((data((3, 2)),), method=True)], RECT_GRAD[:2],
        RECT_CUDA),
    _op("matrix_exp", lambda a: np.stack([scipy.linalg.expm(x) for x in a.reshape(
        (-1,) + a.shape[-2:])]).reshape(a.shape),
        lambda d: [Sample((data((2, 3, 3)),)), Sample((data((2, 2)),), method=True)],
        [Sample((data((3, 3), 1),))], [Sample((data((2, 2)),))]),
    _op("matrix_power", np.linalg.matrix_power,
        lambda d: [Sample((mat((3, 3)), 3)), Sample((mat((3, 3)), -1), method=True)],
        [Sample((mat((3, 3), 1), 2))], [Sample((mat((2, 2)), 2))]),
    _op("cholesky", lambda a, upper=False: _swap(np.linalg.cholesky(a)) if upper else
        np.linalg.cholesky(a),
        lambda d: [Sample((spd((3, 3)),)), Sample((spd((2, 3, 3)), True), method=True)],
        [Sample((spd((3, 3), 1),), gradcheck=False)], [Sample((spd((2, 2)),))]),
    _op("cholesky_solve", _chol_solve_ref,
        lambda d: [Sample((data((3, 2)), np.linalg.cholesky(spd((3, 3), 1)))),
                   Sample((data((3, 2)), _swap(np.linalg.cholesky(spd((3, 3), 1))), True),
                          method=True)],
        # torch's gradient also fills the triangle of L that is never read (finite differences
        # there are 0): test_cholesky_solve_gradients_match_torch_on_the_triangle compares the rest
        [Sample((data((3, 2), 2), np.linalg.cholesky(spd((3, 3), 3))), torch=False)],
        [Sample((data((2, 1)), np.linalg.cholesky(spd((2, 2), 1))))]),
    _op("cholesky_inverse", _chol_inverse_ref,
        lambda d: [Sample((np.linalg.cholesky(spd((3, 3), 1)),)),
                   Sample((_swap(np.linalg.cholesky(spd((3, 3), 1))), True), method=True)],
        [Sample((np.linalg.cholesky(spd((3, 3), 3)),), torch=False)],  # (as cholesky_solve)
        [Sample((np.linalg.cholesky(spd((2, 2), 1)),))]),
    _op("qr", lambda a, some=True: tuple(np.linalg.qr(a, "reduced" if some else "complete")),
        lambda d: [Sample((data((4, 3)),)), Sample((data((2, 4)), False), method=True)],
        [Sample((data((4, 3), 1),))], RECT_CUDA),
    _op("svd", _torch_svd_gauge_ref, lambda d: [Sample((data((4, 3)),)),
                                                Sample((data((2, 3, 2)),))],
        [Sample((data((4, 3), 1),))], RECT_CUDA, op=_torch_svd_gauge(dg),
        torch=_torch_svd_gauge(torch) if torch else None),
    _op("lu", lambda a: _lu_factor_ref(a), lambda d: [Sample((mat((3, 3)),))],
        [Sample((mat((3, 3), 1),))], SQUARE_CUDA, out_dtype=lambda d: (d, dg.int32)),
    _op("lu_solve", lambda a, b: np.linalg.solve(a, b),
        lambda d: [Sample((mat((3, 3)), data((3, 2), 1)))],
        [Sample((mat((3, 3), 1), data((3, 2), 2)))], [Sample((mat((2, 2)), data((2, 1), 1)))],
        op=_torch_lu_solve(dg), torch=_torch_lu_solve(torch) if torch else None),
    _op("lu_unpack", _lu_ref, lambda d: [Sample((mat((3, 3)),)), Sample((mat((2, 3, 3)),))],
        [Sample((mat((3, 3), 1),))], SQUARE_CUDA, op=_lu_unpack(dg),
        torch=_lu_unpack(torch) if torch else None),
    _op("triangular_solve", lambda b, a, upper=True, transpose=False: (
        _tri_ref(_swap(a) if transpose else a, b, upper != transpose), a),
        lambda d: [Sample((data((3, 2)), mat((3, 3), 1)), kw) for kw in (
            {}, {"upper": False}, {"transpose": True})] + [
            Sample((data((3, 2)), mat((3, 3), 1)), method=True)],
        [Sample((data((3, 2), 2), mat((3, 3), 3)), {"upper": False})],
        [Sample((data((2, 1)), mat((2, 2), 1)))]),
    _op("nuclear_norm", lambda a: np.linalg.norm(a, "nuc", axis=(-2, -1)),
        lambda d: [Sample((data((3, 4)),))], [Sample((data((3, 4), 1),))],
        [Sample((data((2, 3)),))]),
    _op("vander", lambda x, N=None, increasing=False: np.vander(x, N, increasing),
        lambda d: [Sample((data((3,)),)), Sample((data((3,)), 4, True)), Sample((data((3,)), 1))],
        # (torch's own backward of torch.vander fails: a saved tensor is modified in place)
        [Sample((data((3,), 1),), torch=False)], [Sample((data((3,)),))]),
    _op("svd_lowrank", _lowrank_ref, lambda d: [Sample((_LOW_RANK, 2))],
        [Sample((_LOW_RANK, 2))], [Sample((data((3, 2)), 2))],
        op=_lowrank(dg, "svd_lowrank"), torch=_lowrank(torch, "svd_lowrank") if torch else None),
    _op("pca_lowrank", lambda a, q: _lowrank_ref(a, q, True), lambda d: [Sample((_LOW_RANK, 2))],
        [Sample((_LOW_RANK, 2))], [Sample((data((3, 2)), 2))],
        op=_lowrank(dg, "pca_lowrank"), torch=_lowrank(torch, "pca_lowrank") if torch else None),
    _op("chain_matmul", lambda *ts: np.linalg.multi_dot(ts),
        lambda d: [Sample((data((2, 3)), data((3, 4), 1), data((4, 2), 2)))],
        [Sample((data((2, 3), 3), data((3, 2), 4)))], [Sample((data((2, 3)), data((3, 2), 1)))]),
]
