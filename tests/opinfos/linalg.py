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
]
