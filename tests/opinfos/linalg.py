"""Records of the linear-algebra ops: matmul and its fixed-rank forms, outer products, einsum.

Products run in float32, float64 and int64, on contiguous operands and on operands whose last two
dims are transposed views; gradients by finite differences in float64 on both layouts and with one
operand alone requiring grad, and torch's. einsum runs its equations in float32 and float64 on
transposed views and in the list form.
"""
from __future__ import annotations

import numpy as np

import dynagrad as dg
from opinfo import OpInfo, Sample, alias, sampler, signed, uniform

TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}
LAYOUTS = ("C", "mT")


def data(shape, seed=0):
    return uniform(shape, seed, -1.5, 1.5)


def product(name, ref, cases, cuda):
    """A product of two operands: ``cases`` their shapes, ``cuda`` the CUDA samples' shapes."""
    def forward(dtype):
        return [Sample(tuple(_forward_data(s, k, dtype) for k, s in enumerate(shapes)),
                       layout=lay) for shapes in cases for lay in LAYOUTS]
    grad = [s for shapes in cases for s in _grad_samples(shapes)]
    cuda = [Sample(tuple(signed(s, k) for k, s in enumerate(shapes))) for shapes in cuda]
    return OpInfo(name, "linalg", sampler(forward, grad, cuda), ref,
                  {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}, tol=TOL)


def _forward_data(shape, seed, dtype):
    a = data(shape, seed)
    return np.round(a * 3) if dtype is dg.int64 else a


def _grad_samples(shapes):
    """Both operands requiring grad, contiguous and transposed; then only the second one."""
    xs = tuple(data(s, k + 5) for k, s in enumerate(shapes))
    fixed_first = (dg.tensor(data(shapes[0], 0), dtype=dg.float64), data(shapes[1], 1))
    return [Sample(xs, layout=lay) for lay in LAYOUTS] + [Sample(fixed_first)]


MATMULS = [((3, 4), (4, 2)), ((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)), ((2, 3, 4), (4, 2)),
           ((3, 4), (2, 4, 2)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)),
           ((1, 4), (4, 1))]

EINSUM = [
    ("ij,jk->ik", (3, 4), (4, 2)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    ("ij->ji", (3, 4)),
    ("ij->", (3, 4)),
    ("ij->j", (3, 4)),
    ("i,i->", (4,), (4,)),
    ("i,j->ij", (3,), (2,)),
    ("ij,ij->ij", (3, 4), (3, 4)),
    ("ij,jk", (3, 4), (4, 2)),
    ("ba", (3, 4)),
    ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 2)),
    ("...j,j", (2, 3, 4), (4,)),
    ("...ij,...jk->...ik", (1, 3, 4), (2, 4, 2)),
    ("b...,b->...", (2, 3, 4), (2,)),
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    ("ii->", (3, 3)),
    ("ii->i", (3, 3)),
    ("iij->j", (2, 2, 3)),
    ("ij,jj->i", (2, 3), (3, 3)),
    ("ijk,k->", (2, 3, 4), (4,)),
    ("ij,kj->ikj", (2, 3), (4, 3)),
    (" i j , j k -> i k ", (3, 4), (4, 2)),
]


def _np_einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], list):
        operands = operands[0]
    return np.einsum(equation.replace(" ", ""), *operands)


def _einsum():
    """Operands as separate arguments on transposed views, and as one list."""
    forward, grad = [], []
    for eq, *shapes in EINSUM:
        arrays = [data(s, k) for k, s in enumerate(shapes)]
        forward += [Sample((eq, *arrays), layout="mT"), Sample((eq, arrays))]
        grad += [Sample((eq, *(data(s, k + seed) for k, s in enumerate(shapes))))
                 for seed in (2, 9)]
    a, b = signed((2, 3)), signed((3, 2), 1)
    cuda = [Sample(("ij,jk->ik", a, b)), Sample(("ij->j", a)), Sample(("ij,ij->i", a, a))]
    return OpInfo("einsum", "linalg", sampler(forward, grad, cuda), _np_einsum,
                  {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}, tol=TOL)


_OUTER = product("outer", np.outer, [((3,), (2,)), ((1,), (4,))], [((2,), (3,))])


# --- fused products and the other products ----------------------------------------------------

def fused(name, ref, shapes, **kw):
    """``beta * input + alpha * product``: plain, scaled, input broadcast, and beta=0 with a NaN
    in the input (ignored, as torch); in-place variants on every sample."""
    def forward(dtype):
        ints = dtype is dg.int64
        args = tuple(_forward_data(s, k, dtype) for k, s in enumerate(shapes))
        nan_input = np.full(shapes[0], np.nan)
        out = [Sample(args), Sample(args, {"beta": 2, "alpha": 3} if ints else
                                    {"beta": 0.5, "alpha": -2.0}, layout="mT")]
        if not ints:
            out.append(Sample((nan_input,) + args[1:], {"beta": 0}))
        return out + [Sample(args, {"alpha": 2}, method=True)]
    grad = [Sample(tuple(data(s, k + 5) for k, s in enumerate(shapes)),
                   {"beta": 0.5, "alpha": 1.5})]
    cuda = [Sample(tuple(signed(s, k) for k, s in enumerate(shapes)), {"beta": 0.5})]
    return OpInfo(name, "linalg", sampler(forward, grad, cuda), ref,
                  {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}, tol=TOL,
                  check_inplace=True, **kw)


def _fused_ref(product):
    def ref(input, a, b, beta=1, alpha=1):
        p = alpha * product(a, b)
        return p if beta == 0 else p + beta * input
    return ref


def simple(name, ref, forward, grad, cuda, dtypes=None, **kw):
    return OpInfo(name, "linalg", sampler(forward, grad, cuda), ref,
                  dtypes or {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}, tol=TOL, **kw)


def _cdist_ref(a, b, p=2.0):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(np.float64)
    if p == np.inf:
        return d.max(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


def _pdist_ref(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    return _cdist_ref(x[i][:, None], x[j][:, None], p)[:, 0, 0]


def _dist_ref(a, b, p=2):
    diff = np.broadcast_to(a - b, np.broadcast_shapes(a.shape, b.shape))
    return _cdist_ref(diff.reshape(1, -1), np.zeros((1, diff.size)), p)[0, 0]


def _cov_ref(x, correction=1, fweights=None, aweights=None):
    return np.cov(x, ddof=correction, fweights=fweights, aweights=aweights)


def _tensordot_ref(a, b, dims=2):
    return np.tensordot(a, b, dims if isinstance(dims, int) else tuple(dims))


def _cross_ref(a, b, dim=None):
    if dim is None:
        dim = next(d for d, n in enumerate(np.broadcast_shapes(a.shape, b.shape)) if n == 3)
    return np.cross(a, b, axis=dim)


_W = np.array([1, 2, 1], dtype=np.int64)
_AW = np.array([0.5, 1.0, 2.0])

PRODUCTS = [
    fused("addmm", _fused_ref(np.matmul), [(3, 2), (3, 4), (4, 2)]),
    fused("addbmm", _fused_ref(lambda a, b: np.matmul(a, b).sum(0)), [(3, 2), (2, 3, 4), (2, 4, 2)]),
    fused("baddbmm", _fused_ref(np.matmul), [(2, 3, 2), (2, 3, 4), (2, 4, 2)]),
    fused("addmv", _fused_ref(np.matmul), [(3,), (3, 4), (4,)]),
    fused("addr", _fused_ref(np.outer), [(3, 2), (3,), (2,)]),
    simple("inner", np.inner, lambda d: [Sample((data((2, 3)), data((4, 3), 1))),
                                         Sample((data((3,)), data((3,), 1))),
                                         Sample((data(()), data((2, 3), 1)), method=True)],
           [Sample((data((2, 3), 2), data((3,), 3)))], [Sample((signed((2, 3)), signed((3,), 1)))]),
    simple("vdot", np.vdot, lambda d: [Sample((data((3,)), data((3,), 1)), method=True)],
           [Sample((data((3,), 2), data((3,), 3)))], [Sample((signed((3,)), signed((3,), 1)))]),
    simple("tensordot", _tensordot_ref,
           lambda d: [Sample((data((2, 3, 4)), data((3, 4, 2), 1))),
                      Sample((data((2, 3)), data((3, 4), 1)), {"dims": 1}),
                      Sample((data((2, 3, 4)), data((4, 2, 3), 1)), {"dims": ([1, 2], [2, 0])}),
                      Sample((data((2, 3)), data((4, 5), 1)), {"dims": 0})],
           [Sample((data((2, 3, 4), 2), data((4, 2, 3), 3)), {"dims": ([1, 2], [2, 0])})],
           [Sample((signed((2, 3)), signed((3, 2), 1)), {"dims": 1})]),
    simple("kron", np.kron, lambda d: [Sample((data((2, 3)), data((3, 2), 1))),
                                       Sample((data((2,)), data((2, 3), 1))),
                                       Sample((data((2, 1, 2)), data((2, 2), 1)), method=True)],
           [Sample((data((2, 2), 2), data((2, 3), 3)))], [Sample((signed((2, 2)), signed((2,), 1)))]),
    simple("cross", _cross_ref, lambda d: [Sample((data((2, 3)), data((2, 3), 1))),
                                           Sample((data((3, 2)), data((3, 2), 1)), {"dim": 0}),
                                           Sample((data((2, 3)), data((1, 3), 1)), {"dim": -1},
                                                  method=True)],
           [Sample((data((2, 3), 2), data((2, 3), 3)), {"dim": 1})],
           [Sample((signed((2, 3)), signed((2, 3), 1)), {"dim": 1})]),
    simple("cdist", _cdist_ref, lambda d: [Sample((data((3, 2)), data((4, 2), 1)), {"p": p})
                                           for p in (0.0, 1.0, 2.0, 3.0, np.inf)] + [
        Sample((data((2, 3, 2)), data((2, 4, 2), 1)))],
           [Sample((data((3, 2), 2), data((4, 2), 3)), {"p": p}) for p in (1.0, 2.0, np.inf)],
           [Sample((signed((2, 2)), signed((3, 2), 1)))]),
    simple("dist", _dist_ref,
           lambda d: [Sample((data((2, 3)), data((3,), 1)), {"p": p}, method=p == 1)
                      for p in (2, 1, 0, np.inf)],
           [Sample((data((2, 3), 2), data((2, 3), 3)))], [Sample((signed((2, 3)), signed((3,), 1)))]),
    simple("pdist", _pdist_ref, lambda d: [Sample((data((4, 2)),), {"p": p})
                                           for p in (2.0, 1.0, 0.0, np.inf)],
           [Sample((data((4, 2), 2),))], [Sample((signed((3, 2)),))]),
    simple("cov", _cov_ref, lambda d: [Sample((data((2, 3)),)), Sample((data((3,)),)),
                                       Sample((data((2, 3)),), {"correction": 0}),
                                       Sample((data((2, 3)), ), {"fweights": _W, "aweights": _AW}),
                                       Sample((data((2, 3)), ), {"aweights": _AW}, method=True)],
           [Sample((data((2, 3), 2),), {"aweights": _AW}), Sample((data((2, 3), 2),))],
           [Sample((signed((2, 3)),))]),
    simple("corrcoef", np.corrcoef, lambda d: [Sample((data((2, 4)),)),
                                               Sample((data((3, 3)),), method=True)],
           [Sample((data((2, 4), 2),))], [Sample((signed((2, 3)),))]),
]

RECORDS = [
    product("matmul", np.matmul, MATMULS, [((2, 3), (2, 3, 4)), ((2, 3), (3,)), ((3,), (3, 2))]),
    product("mm", np.matmul, [((3, 4), (4, 2)), ((1, 1), (1, 3))], [((2, 3), (3, 2))]),
    product("bmm", np.matmul, [((2, 3, 4), (2, 4, 2)), ((1, 1, 2), (1, 2, 3))],
            [((2, 2, 3), (2, 3, 2))]),
    product("mv", np.matmul, [((3, 4), (4,))], [((2, 3), (3,))]),
    product("dot", np.dot, [((4,), (4,)), ((1,), (1,))], [((3,), (3,))]),
    _OUTER,
    alias("ger", _OUTER),
    _einsum(),
    *PRODUCTS,
]
