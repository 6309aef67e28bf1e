"""Every registered op on CUDA: the same call on the CPU and on the GPU gives the same values and
the same gradients.

One table line per op (``CASES``): a function of tensors and the NumPy inputs it takes. The CPU run
is the reference (its own correctness is tested against float64 NumPy and finite differences in
tests/test_*.py). A meta-test fails when a registered op has no line here, so a new op cannot
skip its CUDA path. Shapes are tiny: without a GPU this runs on Numba's simulator.
"""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad.ops.registry import REGISTRY

RNG = np.random.default_rng(0)


def f(*shape, lo=-0.9, hi=0.9):
    """float32 samples kept away from 0 (so sign-sensitive ops see clear values)."""
    x = RNG.uniform(lo, hi, size=shape)
    return (np.sign(x) * (0.2 + np.abs(x))).astype(np.float32)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, size=shape).astype(np.float32)


def i(*shape, lo=-3, hi=4):
    return RNG.integers(lo, hi, size=shape).astype(np.int64)


def b(*shape):
    return RNG.random(shape) < 0.5


UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal",
         "neg", "abs", "sign", "floor", "ceil", "trunc", "round", "frac", "relu", "square",
         "isnan", "isinf", "isfinite", "logical_not", "nan_to_num", "negative", "absolute",
         "arcsin", "arccos", "arctan", "fix"]
BINARY = ["add", "sub", "mul", "div", "remainder", "fmod", "pow", "maximum", "minimum",
          "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
          "multiply", "subtract", "divide", "true_divide", "greater", "greater_equal", "less",
          "less_equal", "not_equal", "arctan2", "float_power", "rsub"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift"]


def _op(name):
    return getattr(dg, name)


# name -> (function of tensors, [numpy inputs])
CASES = {}
for _n in UNARY:
    CASES[_n] = (_op(_n), [f(2, 3)])
for _n in BINARY:  # the second operand broadcasts
    CASES[_n] = (_op(_n), [pos(2, 3) if _n in ("pow", "float_power") else f(2, 3), f(3)])
for _n in BITWISE:
    CASES[_n] = (_op(_n), [i(2, 3, lo=0), i(3, lo=0, hi=3)])
CASES.update({
    "floor_divide": (dg.floor_divide, [i(2, 3), i(3, lo=1)]),
    "bitwise_not": (dg.bitwise_not, [i(2, 3)]),
    "clamp": (lambda x: dg.clamp(x, -0.5, 0.5), [f(2, 3)]),
    "clip": (lambda x: dg.clip(x, min=-0.5), [f(2, 3)]),
    "lerp": (lambda x, y: dg.lerp(x, y, 0.3), [f(2, 3), f(2, 3)]),
    "where": (dg.where, [b(2, 3), f(2, 3), f(3)]),
    # reductions
    "sum": (lambda x: (x.sum(), x.sum(1), x.sum((0, 2), keepdim=True)), [f(2, 3, 4)]),
    "mean": (lambda x: (x.mean(), x.mean(0)), [f(2, 3)]),
    "prod": (lambda x: (x.prod(), x.prod(1)), [f(2, 3)]),
    "amax": (lambda x: (x.amax(), x.amax(1)), [f(2, 3)]),
    "amin": (lambda x: (x.amin(), x.amin(0)), [f(2, 3)]),
    "argmax": (lambda x: (x.argmax(), x.argmax(1)), [f(2, 3)]),
    "argmin": (lambda x: (x.argmin(), x.argmin(0)), [f(2, 3)]),
    "max": (lambda x: (x.max(), *x.max(1)), [f(2, 3)]),
    "min": (lambda x: (x.min(), *x.min(0)), [f(2, 3)]),
    "all": (lambda x: (x.all(), x.all(1)), [b(2, 3)]),
    "any": (lambda x: (x.any(), x.any(0)), [b(2, 3)]),
    "var": (lambda x: (x.var(), x.var(1)), [f(2, 3)]),
    "std": (lambda x: (x.std(), x.std(0, correction=0)), [f(2, 3)]),
    "logsumexp": (lambda x: dg.logsumexp(x, 1), [f(2, 3)]),
    "norm": (lambda x: (x.norm(), x.norm(1, dim=1)), [f(2, 3)]),
    "cumsum": (lambda x: x.cumsum(1), [f(2, 3)]),
    "cumprod": (lambda x: x.cumprod(0), [f(2, 3)]),
    # movement
    "view": (lambda x: x.view(3, 2) * 1, [f(2, 3)]),
    "reshape": (lambda x: x.t().reshape(6), [f(2, 3)]),
    "view_as": (lambda x, y: x.view_as(y), [f(2, 3), f(3, 2)]),
    "reshape_as": (lambda x, y: x.reshape_as(y), [f(2, 3), f(6)]),
    "flatten": (lambda x: x.flatten(), [f(2, 3, 2)]),
    "unflatten": (lambda x: x.unflatten(1, (2, 2)), [f(2, 4)]),
    "transpose": (lambda x: x.transpose(0, 1) + 0, [f(2, 3)]),
    "swapaxes": (lambda x: dg.swapaxes(x, 0, 1) + 0, [f(2, 3)]),
    "t": (lambda x: x.t() + 0, [f(2, 3)]),
    "permute": (lambda x: x.permute(2, 0, 1) + 0, [f(2, 3, 2)]),
    "movedim": (lambda x: dg.movedim(x, 0, 2) + 0, [f(2, 3, 2)]),
    "expand": (lambda x: x.expand(2, 3) + 0, [f(1, 3)]),
    "expand_as": (lambda x, y: x.expand_as(y) + 0, [f(3), f(2, 3)]),
    "broadcast_to": (lambda x: dg.broadcast_to(x, (2, 3)) + 0, [f(3)]),
    "squeeze": (lambda x: x.squeeze(), [f(2, 1, 3)]),
    "unsqueeze": (lambda x: x.unsqueeze(1), [f(2, 3)]),
    "narrow": (lambda x: x.narrow(1, 1, 2) + 0, [f(2, 3)]),
    "select": (lambda x: x.select(1, 2) + 0, [f(2, 3)]),
    "diagonal": (lambda x: x.diagonal() + 0, [f(3, 3)]),
    "clone": (lambda x: x.clone(), [f(2, 3)]),
    "contiguous": (lambda x: x.t().contiguous(), [f(2, 3)]),
    "cat": (lambda x, y: dg.cat([x, y], 1), [f(2, 3), f(2, 1)]),
    "concat": (lambda x, y: dg.concat([x, y]), [f(2, 3), f(1, 3)]),
    "concatenate": (lambda x, y: dg.concatenate([x, y]), [f(2, 3), f(1, 3)]),
    "stack": (lambda x, y: dg.stack([x, y], 1), [f(2, 3), f(2, 3)]),
    "hstack": (lambda x, y: dg.hstack([x, y]), [f(2, 3), f(2, 3)]),
    "vstack": (lambda x, y: dg.vstack([x, y]), [f(2, 3), f(2, 3)]),
    "split": (lambda x: tuple(p + 0 for p in x.split(2, 1)), [f(2, 5)]),
    "chunk": (lambda x: tuple(p + 0 for p in x.chunk(2, 0)), [f(4, 3)]),
    "unbind": (lambda x: tuple(p + 0 for p in x.unbind(1)), [f(2, 3)]),
    "repeat": (lambda x: x.repeat(2, 1, 2), [f(2, 3)]),
    "tile": (lambda x: x.tile(2), [f(2, 3)]),
    "flip": (lambda x: x.flip(1), [f(2, 3)]),
    "roll": (lambda x: x.roll(1, 1), [f(2, 3)]),
    "tril": (lambda x: x.tril(), [f(3, 3)]),
    "triu": (lambda x: x.triu(1), [f(3, 3)]),
    "pad": (lambda x: (dg.nn.functional.pad(x, (1, 2)),
                       dg.nn.functional.pad(x, (1, 1), mode="reflect")), [f(2, 3)]),
    # indexing
    "gather": (lambda x: x.gather(1, dg.tensor([[0, 2], [1, 1]], device=x.device)), [f(2, 3)]),
    "scatter": (lambda x, s: x.scatter(1, dg.tensor([[2, 0]], device=x.device), s),
                [f(2, 3), f(1, 2)]),
    "scatter_add": (lambda x, s: x.scatter_add(0, dg.tensor([[1, 1, 0]], device=x.device), s),
                    [f(2, 3), f(1, 3)]),
    "index_select": (lambda x: x.index_select(1, dg.tensor([2, 0, 2], device=x.device)),
                     [f(2, 3)]),
    "index_add": (lambda x, s: x.index_add(0, dg.tensor([1, 1], device=x.device), s),
                  [f(2, 3), f(2, 3)]),
    "index_put": (lambda x, v: dg.index_put(x, (dg.tensor([0, 1, 1], device=x.device),
                                                dg.tensor([2, 0, 0], device=x.device)), v,
                                            accumulate=True), [f(2, 3), f(3)]),
    "masked_fill": (lambda x, m: x.masked_fill(m, 0.5), [f(2, 3), b(2, 3)]),
    "masked_select": (lambda x, m: x.masked_select(m), [f(2, 3), np.array([True, False, True])]),
    "nonzero": (lambda x: (x.nonzero(), *x.nonzero(as_tuple=True)), [i(2, 3, lo=0, hi=2)]),
    "argwhere": (lambda x: dg.argwhere(x), [i(2, 3, lo=0, hi=2)]),
    "sort": (lambda x: tuple(x.sort(1, descending=True)), [f(2, 4)]),
    "argsort": (lambda x: x.argsort(0), [f(3, 2)]),
    "topk": (lambda x: tuple(x.topk(2, 1)), [f(2, 4)]),
    # linear algebra
    "matmul": (lambda a, b_, v: (a @ b_, a @ v, v @ b_.transpose(1, 2)[0].t()),
               [f(2, 3), f(2, 3, 4), f(3)]),
    "mm": (dg.mm, [f(2, 3), f(3, 2)]),
    "bmm": (dg.bmm, [f(2, 2, 3), f(2, 3, 2)]),
    "mv": (dg.mv, [f(2, 3), f(3)]),
    "dot": (dg.dot, [f(3), f(3)]),
    "outer": (dg.outer, [f(2), f(3)]),
    "ger": (dg.ger, [f(2), f(3)]),
    "einsum": (lambda a, b_: (dg.einsum("ij,jk->ik", a, b_), dg.einsum("ij->j", a),
                              dg.einsum("ij,ij->i", a, a)), [f(2, 3), f(3, 2)]),
})


def _run(fn, arrays, device):
    """Outputs of ``fn`` and the gradients of every float input, on ``device``."""
    ts = [dg.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
    outs = fn(*ts)
    outs = outs if isinstance(outs, tuple) else (outs,)
    floats = [o for o in outs if o.requires_grad]
    if floats:
        w_rng = np.random.default_rng(1)
        loss = sum((o * dg.tensor(w_rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32),
                                  device=device)).sum() for o in floats)
        loss.backward()
    return outs, [t.grad for t in ts]


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_on_cuda_matches_cpu(name, cuda, same):
    fn, arrays = CASES[name]
    want, want_grads = _run(fn, arrays, "cpu")
    got, got_grads = _run(fn, arrays, cuda)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            same(g, w)


def test_every_registered_op_has_a_cuda_line():
    missing = sorted(set(REGISTRY) - set(CASES))
    assert not missing, f"ops with no CUDA test line: {missing}"


KEYS = {  # advanced keys: index and mask tensors on the device, as training code writes them
    "rows": lambda t, d: t[dg.tensor([0, 2, -1], device=d)],
    "pairs": lambda t, d: t[dg.tensor([[0, 1], [3, 3]], device=d), dg.tensor([2, 0], device=d)],
    "mask": lambda t, d: t[t > 0],
    "leading_mask": lambda t, d: t[(t > 0).all(2)],
    "mask_ellipsis": lambda t, d: t[dg.tensor([1, 0, 1, 0], device=d).bool(), ...],
    "rows_slice": lambda t, d: t[dg.tensor([1, 2], device=d), :],
    "rows_then_partial_slice": lambda t, d: t[dg.tensor([1], device=d), 1:],
    "inner_dim": lambda t, d: t[:, dg.tensor([0, 2], device=d)],
    "cpu_index": lambda t, d: t[dg.tensor([3, 0])],
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_advanced_indexing_on_cuda_matches_cpu(name, cuda, same):
    x = f(4, 3, 2)
    want, want_grads = _run(lambda t: KEYS[name](t, "cpu"), [x], "cpu")
    got, got_grads = _run(lambda t: KEYS[name](t, cuda), [x], cuda)
    same(got[0], want[0])
    same(got_grads[0], want_grads[0])


@pytest.mark.parametrize("value", [f(3, 2) > 0, i(2, 3, lo=0, hi=2), np.float32(2.0),
                                   np.float32(0.0), np.zeros((2, 0), np.float32)],
                         ids=["mask", "ints", "scalar", "zero", "empty"])
def test_nonzero_on_cuda_matches_cpu(value, cuda, same):
    x = dg.tensor(value)
    same(x.cuda().nonzero(), x.nonzero())
    for got, want in zip(x.cuda().nonzero(as_tuple=True), x.nonzero(as_tuple=True)):
        same(got, want)


def test_out_of_range_device_index_is_refused(cuda):
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 4"):
        dg.zeros(4, 2, device=cuda)[dg.tensor([1, 5], device=cuda)]


WRITES = {  # x[key] = value with device keys, as masking code writes them
    "rows_scalar": lambda t, d: t.__setitem__(dg.tensor([0, 2], device=d), 5.0),
    "mask_zero": lambda t, d: t.__setitem__(t > 0, 0.0),
    "pairs_values": lambda t, d: t.__setitem__(
        (dg.tensor([1, 3], device=d), dg.tensor([2, 0], device=d)), dg.tensor([7.0, 8.0], device=d)),
    "mask_rows": lambda t, d: t.__setitem__(dg.tensor([True, False, True, False], device=d),
                                            dg.tensor([1.0, 2.0, 3.0], device=d)),
    "accumulate": lambda t, d: t.copy_(dg.index_put(t, (dg.tensor([0, 0, 2], device=d),),
                                                    dg.tensor([1.0, 2.0, 3.0], device=d),
                                                    accumulate=True)),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_index_writes_on_cuda_match_cpu(name, cuda, same):
    x = f(4, 3)
    want, got = dg.tensor(x), dg.tensor(x, device=cuda)
    WRITES[name](want, "cpu")
    WRITES[name](got, cuda)
    same(got, want)


def test_index_write_gradients_on_cuda_match_cpu(cuda, same):
    grads, data = {}, f(4, 3)
    for dev in ("cpu", cuda):
        x = dg.tensor(data, device=dev, requires_grad=True)
        v = dg.tensor([2.0, 3.0, 4.0], device=dev, requires_grad=True)
        y = x * 1
        y[dg.tensor([1, 2], device=dev)] = v
        (y * y).sum().backward()
        grads[str(dev)] = (x.grad, v.grad)
    for got, want in zip(grads["cuda:0"], grads["cpu"]):
        same(got, want)


def test_remembered_index_range_goes_stale_on_write(cuda):
    x = dg.zeros(4, 2, device=cuda)
    idx = dg.tensor([0, 3], device=cuda)
    x.index_select(0, idx)          # checked once; the range is remembered
    idx[1] = 7                      # an in-place write: the remembered range no longer holds
    with pytest.raises(IndexError, match="index 7 is out of range for dimension 0 with size 4"):
        x.index_select(0, idx)
