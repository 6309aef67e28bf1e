"""Shape and data-movement ops: forward vs NumPy, gradcheck, views share memory, torch parity, errors.

One table line per (op, input shapes, call): the call runs on dynagrad tensors and its NumPy twin on
float64 arrays, in float32/float64/int64, on contiguous inputs and on transposed views.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.autograd import gradcheck

TESTED_OPS = {"swapaxes", "concat", "concatenate", "view", "reshape", "view_as", "reshape_as",
              "flatten", "unflatten", "transpose",
              "t", "permute", "movedim", "expand", "expand_as", "broadcast_to", "squeeze",
              "unsqueeze", "narrow", "select", "diagonal", "clone", "contiguous", "cat", "stack",
              "hstack", "vstack", "split", "chunk", "unbind", "repeat", "tile", "flip", "roll",
              "tril", "triu", "pad"}

DTYPES = [dg.float32, dg.float64, dg.int64]


def data(shape, seed=0):
    return np.random.default_rng(seed).uniform(-3, 3, size=shape)


def make(arr, dtype, transposed=False, requires_grad=False):
    """``arr``'s values as a contiguous tensor, or as a transposed (non-contiguous) view."""
    if transposed and arr.ndim >= 2:
        t = dg.tensor(np.ascontiguousarray(arr.T), dtype=dtype).T
    else:
        t = dg.tensor(arr, dtype=dtype)
    return t.requires_grad_() if requires_grad else t


def check(actual, expected, dtype):
    """Movement ops are exact: same shape, dtype and values."""
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            check(a, e, dtype)
        return
    exp = np.asarray(expected)
    assert tuple(actual.shape) == exp.shape, (tuple(actual.shape), exp.shape)
    assert actual.dtype is dtype, (actual.dtype, dtype)
    np.testing.assert_array_equal(actual.detach().numpy(), exp.astype(dtype.np))


def _np_diag(a, offset=0, d1=0, d2=1):
    return np.diagonal(a, offset, d1, d2)


def _np_movedim(a, s, d):
    return np.moveaxis(a, s, d)


def _np_repeat(a, *reps):
    a = a.reshape((1,) * (len(reps) - a.ndim) + a.shape)
    return np.tile(a, reps)


def _np_split(a, size, axis=0):
    n = a.shape[axis]
    if isinstance(size, int):
        cuts = list(range(size, n, size))
    else:
        cuts = list(np.cumsum(size)[:-1])
    return np.split(a, cuts, axis=axis)


def _np_chunk(a, chunks, axis=0):
    return _np_split(a, -(-a.shape[axis] // chunks), axis)


def _np_roll(a, shifts, dims=None):
    return np.roll(a, shifts, dims)


def _np_tri(a, k, lower):
    n, m = a.shape[-2:]
    keep = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    return np.where(keep, a, 0)


def _np_pad(a, pad, mode="constant", value=0):
    k = len(pad) // 2
    widths = [(0, 0)] * (a.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    crop = tuple(slice(-lo if lo < 0 else 0, s + hi if hi < 0 else None)
                 for (lo, hi), s in zip(widths, a.shape))
    a = a[crop]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode, mode)
    kw = dict(constant_values=value) if mode == "constant" else {}
    return np.pad(a, widths, mode=np_mode, **kw)


# (id, input shapes, dynagrad call, NumPy twin, works on a non-contiguous input)
CASES = [
    ("view", [(2, 3, 4)], lambda x: x.view(6, 4), lambda a: a.reshape(6, 4), False),
    ("view-infer", [(2, 3)], lambda x: x.view(-1), lambda a: a.reshape(-1), False),
    ("view-scalar", [()], lambda x: x.view(1, 1), lambda a: a.reshape(1, 1), False),
    ("view-to-scalar", [(1,)], lambda x: x.view(()), lambda a: a.reshape(()), False),
    ("view_as", [(2, 3), (3, 2)], lambda x, y: x.view_as(y), lambda a, b: a.reshape(b.shape),
     False),
    ("reshape", [(2, 3, 4)], lambda x: x.reshape(4, -1), lambda a: a.reshape(4, -1), True),
    ("reshape-tuple", [(2, 3)], lambda x: x.reshape((3, 2)), lambda a: a.reshape(3, 2), True),
    ("reshape-scalar", [()], lambda x: x.reshape(1), lambda a: a.reshape(1), True),
    ("reshape_as", [(2, 3), (6,)], lambda x, y: x.reshape_as(y), lambda a, b: a.reshape(b.shape),
     True),
    ("flatten", [(2, 3, 4)], lambda x: x.flatten(), lambda a: a.reshape(-1), True),
    ("flatten-1", [(2, 3, 4)], lambda x: dg.flatten(x, 1), lambda a: a.reshape(2, 12), True),
    ("flatten-0-1", [(2, 3, 4)], lambda x: x.flatten(0, -2), lambda a: a.reshape(6, 4), True),
    ("flatten-scalar", [()], lambda x: x.flatten(), lambda a: a.reshape(1), True),
    ("unflatten", [(2, 6)], lambda x: x.unflatten(1, (2, 3)), lambda a: a.reshape(2, 2, 3), True),
    ("unflatten-neg", [(6, 2)], lambda x: x.unflatten(0, (-1, 3)), lambda a: a.reshape(2, 3, 2),
     True),
    ("transpose", [(2, 3, 4)], lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2), True),
    ("transpose-neg", [(2, 3, 4)], lambda x: dg.transpose(x, -1, -2),
     lambda a: a.swapaxes(-1, -2), True),
    ("transpose-scalar", [()], lambda x: x.transpose(0, -1), lambda a: a, True),
    ("t", [(2, 3)], lambda x: x.t(), lambda a: a.T, True),
    ("t-1d", [(3,)], lambda x: dg.t(x), lambda a: a, True),
    ("permute", [(2, 3, 4)], lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1), True),
    ("permute-neg", [(2, 3, 4)], lambda x: x.permute((-1, 0, 1)),
     lambda a: a.transpose(2, 0, 1), True),
    ("movedim", [(2, 3, 4)], lambda x: x.movedim(0, -1), lambda a: _np_movedim(a, 0, -1), True),
    ("movedim-multi", [(2, 3, 4)], lambda x: dg.movedim(x, (0, 1), (2, 0)),
     lambda a: _np_movedim(a, (0, 1), (2, 0)), True),
    ("expand", [(3, 1)], lambda x: x.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4)),
     True),
    ("expand-keep", [(3, 1)], lambda x: x.expand(-1, 4), lambda a: np.broadcast_to(a, (3, 4)),
     True),
    ("expand-scalar", [()], lambda x: x.expand(2, 3), lambda a: np.broadcast_to(a, (2, 3)), True),
    ("expand_as", [(3, 1), (2, 3, 4)], lambda x, y: x.expand_as(y),
     lambda a, b: np.broadcast_to(a, b.shape), True),
    ("broadcast_to", [(1, 3)], lambda x: dg.broadcast_to(x, (2, 3)),
     lambda a: np.broadcast_to(a, (2, 3)), True),
    ("squeeze", [(1, 3, 1)], lambda x: x.squeeze(), lambda a: a.squeeze(), True),
    ("squeeze-dim", [(1, 3, 1)], lambda x: x.squeeze(0), lambda a: a.squeeze(0), True),
    ("squeeze-noop", [(1, 3, 1)], lambda x: x.squeeze(1), lambda a: a, True),
    ("squeeze-tuple", [(1, 3, 1)], lambda x: dg.squeeze(x, (0, -1)), lambda a: a.reshape(3),
     True),
    ("squeeze-scalar", [()], lambda x: x.squeeze(0), lambda a: a, True),
    ("unsqueeze", [(2, 3)], lambda x: x.unsqueeze(0), lambda a: a[None], True),
    ("unsqueeze-neg", [(2, 3)], lambda x: x.unsqueeze(-1), lambda a: a[..., None], True),
    ("unsqueeze-mid", [(2, 3)], lambda x: dg.unsqueeze(x, -2), lambda a: a[:, None], True),
    ("unsqueeze-scalar", [()], lambda x: x.unsqueeze(0), lambda a: a.reshape(1), True),
    ("narrow", [(4, 3)], lambda x: x.narrow(0, 1, 2), lambda a: a[1:3], True),
    ("narrow-neg", [(4, 3)], lambda x: dg.narrow(x, -1, -2, 2), lambda a: a[:, 1:], True),
    ("narrow-empty", [(4, 3)], lambda x: x.narrow(0, 4, 0), lambda a: a[4:], True),
    ("select", [(4, 3)], lambda x: x.select(1, -1), lambda a: a[:, -1], True),
    ("select-0", [(4, 3)], lambda x: dg.select(x, 0, 2), lambda a: a[2], True),
    ("diagonal", [(3, 4)], lambda x: x.diagonal(), lambda a: _np_diag(a), True),
    ("diagonal-pos", [(3, 4)], lambda x: x.diagonal(1), lambda a: _np_diag(a, 1), True),
    ("diagonal-negative", [(3, 4)], lambda x: dg.diagonal(x, -1), lambda a: _np_diag(a, -1),
     True),
    ("diagonal-3d", [(2, 3, 4)], lambda x: x.diagonal(0, 1, 2), lambda a: _np_diag(a, 0, 1, 2),
     True),
    ("diagonal-swapped", [(2, 3, 4)], lambda x: x.diagonal(1, -1, 0),
     lambda a: _np_diag(a, 1, -1, 0), True),
    ("diagonal-empty", [(3, 4)], lambda x: x.diagonal(5), lambda a: _np_diag(a, 5), True),
    ("clone", [(2, 3)], lambda x: x.clone(), lambda a: a, True),
    ("clone-scalar", [()], lambda x: dg.clone(x), lambda a: a, True),
    ("contiguous", [(2, 3)], lambda x: x.contiguous(), lambda a: a, True),
    ("cat", [(2, 3), (1, 3)], lambda x, y: dg.cat([x, y]), lambda a, b: np.concatenate([a, b]),
     True),
    ("cat-last", [(2, 3), (2, 1), (2, 2)], lambda x, y, z: dg.cat((x, y, z), dim=-1),
     lambda a, b, c: np.concatenate([a, b, c], -1), True),
    ("cat-skip-empty", [(2, 3), (0,)], lambda x, y: dg.cat([x, y], 1),
     lambda a, b: a, True),
    ("cat-1d", [(2,), (3,)], lambda x, y: dg.cat([x, y]), lambda a, b: np.concatenate([a, b]),
     True),
    ("stack", [(2, 3), (2, 3)], lambda x, y: dg.stack([x, y], 1),
     lambda a, b: np.stack([a, b], 1), True),
    ("stack-last", [(2, 3), (2, 3), (2, 3)], lambda x, y, z: dg.stack([x, y, z], -1),
     lambda a, b, c: np.stack([a, b, c], -1), True),
    ("stack-scalars", [(), ()], lambda x, y: dg.stack([x, y]), lambda a, b: np.stack([a, b]),
     True),
    ("hstack", [(2,), (3,)], lambda x, y: dg.hstack([x, y]), lambda a, b: np.hstack([a, b]),
     True),
    ("hstack-2d", [(2, 3), (2, 1)], lambda x, y: dg.hstack([x, y]),
     lambda a, b: np.hstack([a, b]), True),
    ("hstack-scalars", [(), ()], lambda x, y: dg.hstack([x, y]), lambda a, b: np.hstack([a, b]),
     True),
    ("vstack", [(3,), (3,)], lambda x, y: dg.vstack([x, y]), lambda a, b: np.vstack([a, b]),
     True),
    ("vstack-2d", [(2, 3), (1, 3)], lambda x, y: dg.vstack([x, y]),
     lambda a, b: np.vstack([a, b]), True),
    ("split", [(5, 3)], lambda x: x.split(2), lambda a: _np_split(a, 2), True),
    ("split-sections", [(5, 3)], lambda x: dg.split(x, [1, 4]), lambda a: _np_split(a, [1, 4]),
     True),
    ("split-dim", [(5, 3)], lambda x: x.split(1, dim=-1), lambda a: _np_split(a, 1, 1), True),
    ("split-big", [(2, 3)], lambda x: x.split(5), lambda a: [a], True),
    ("chunk", [(5, 3)], lambda x: x.chunk(2), lambda a: _np_chunk(a, 2), True),
    ("chunk-dim", [(2, 6)], lambda x: dg.chunk(x, 4, 1), lambda a: _np_chunk(a, 4, 1), True),
    ("unbind", [(3, 2)], lambda x: x.unbind(1), lambda a: [a[:, 0], a[:, 1]], True),
    ("unbind-0", [(2, 3)], lambda x: dg.unbind(x), lambda a: [a[0], a[1]], True),
    ("repeat", [(2, 3)], lambda x: x.repeat(2, 1), lambda a: _np_repeat(a, 2, 1), True),
    ("repeat-new-dim", [(2, 3)], lambda x: x.repeat(1, 2, 2), lambda a: _np_repeat(a, 1, 2, 2),
     True),
    ("repeat-scalar", [()], lambda x: x.repeat(3), lambda a: _np_repeat(a, 3), True),
    ("repeat-zero", [(2, 3)], lambda x: x.repeat(0, 1), lambda a: _np_repeat(a, 0, 1), True),
    ("tile", [(2, 3)], lambda x: x.tile((2,)), lambda a: np.tile(a, (1, 2)), True),
    ("tile-int", [(2, 3)], lambda x: x.tile(2), lambda a: np.tile(a, 2), True),
    ("tile-varargs", [(3,)], lambda x: x.tile(2, 2), lambda a: np.tile(a, (2, 2)), True),
    ("tile-more", [(2, 3)], lambda x: dg.tile(x, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2)),
     True),
    ("flip", [(2, 3, 4)], lambda x: x.flip((0, 2)), lambda a: np.flip(a, (0, 2)), True),
    ("flip-neg", [(2, 3)], lambda x: dg.flip(x, -1), lambda a: np.flip(a, -1), True),
    ("flip-scalar", [()], lambda x: x.flip(0), lambda a: a, True),
    ("roll", [(3, 4)], lambda x: x.roll(1, 0), lambda a: _np_roll(a, 1, 0), True),
    ("roll-multi", [(3, 4)], lambda x: dg.roll(x, (1, -2), (0, 1)),
     lambda a: _np_roll(a, (1, -2), (0, 1)), True),
    ("roll-flat", [(3, 4)], lambda x: x.roll(5), lambda a: _np_roll(a, 5), True),
    ("roll-big", [(3, 4)], lambda x: x.roll(-7, -1), lambda a: _np_roll(a, -7, -1), True),
    ("roll-zero", [(3, 4)], lambda x: x.roll(3, 0), lambda a: a, True),
    ("tril", [(3, 4)], lambda x: x.tril(), lambda a: _np_tri(a, 0, True), True),
    ("tril-k", [(2, 3, 3)], lambda x: dg.tril(x, 1), lambda a: _np_tri(a, 1, True), True),
    ("tril-neg", [(4, 3)], lambda x: x.tril(-1), lambda a: _np_tri(a, -1, True), True),
    ("triu", [(3, 4)], lambda x: x.triu(), lambda a: _np_tri(a, 0, False), True),
    ("triu-k", [(2, 3, 3)], lambda x: dg.triu(x, -1), lambda a: _np_tri(a, -1, False), True),
    ("triu-pos", [(3, 4)], lambda x: x.triu(2), lambda a: _np_tri(a, 2, False), True),
    ("pad", [(2, 3)], lambda x: dg.pad(x, (1, 2)), lambda a: _np_pad(a, (1, 2)), True),
    ("pad-2d", [(2, 3)], lambda x: dg.pad(x, (1, 1, 2, 0)), lambda a: _np_pad(a, (1, 1, 2, 0)),
     True),
    ("pad-value", [(2, 3)], lambda x: dg.pad(x, (0, 1), value=7),
     lambda a: _np_pad(a, (0, 1), value=7), True),
    ("pad-crop", [(3, 4)], lambda x: dg.pad(x, (-1, 2, 1, -2)),
     lambda a: _np_pad(a, (-1, 2, 1, -2)), True),
    ("pad-reflect", [(2, 4)], lambda x: dg.pad(x, (2, 3), mode="reflect"),
     lambda a: _np_pad(a, (2, 3), "reflect"), True),
    ("pad-reflect-2d", [(1, 3, 4)], lambda x: dg.pad(x, (1, 2, 2, 1), mode="reflect"),
     lambda a: _np_pad(a, (1, 2, 2, 1), "reflect"), True),
    ("pad-replicate", [(2, 3)], lambda x: dg.pad(x, (3, 1), mode="replicate"),
     lambda a: _np_pad(a, (3, 1), "replicate"), True),
    ("pad-replicate-2d", [(1, 2, 3)], lambda x: dg.pad(x, (1, 0, 2, 2), mode="replicate"),
     lambda a: _np_pad(a, (1, 0, 2, 2), "replicate"), True),
    ("pad-circular", [(2, 4)], lambda x: dg.pad(x, (2, 1), mode="circular"),
     lambda a: _np_pad(a, (2, 1), "circular"), True),
    ("pad-circular-2d", [(1, 3, 4)], lambda x: dg.pad(x, (1, 2, 2, 1), mode="circular"),
     lambda a: _np_pad(a, (1, 2, 2, 1), "circular"), True),
    ("permute-5d", [(2, 1, 2, 3, 2)], lambda x: x.permute(4, 3, 2, 1, 0).contiguous(),
     lambda a: a.transpose(4, 3, 2, 1, 0), True),
    ("flip-5d", [(2, 1, 2, 3, 2)], lambda x: x.flip((1, 3, 4)), lambda a: np.flip(a, (1, 3, 4)),
     True),
    ("cat-5d", [(2, 1, 2, 3, 2), (2, 1, 2, 1, 2)], lambda x, y: dg.cat([x, y], 3),
     lambda a, b: np.concatenate([a, b], 3), False),
    ("pad-zero", [(2, 3)], lambda x: dg.pad(x, (0, 0), mode="reflect"), lambda a: a, True),
]


# view needs a compatible layout: those lines run contiguous only (see test_view_of_noncontiguous)
LAYOUTS = [(c, t) for c in CASES for t in (False, True) if c[4] or not t]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case,transposed", LAYOUTS,
                         ids=[c[0] + ("-T" if t else "") for c, t in LAYOUTS])
def test_forward(case, transposed, dtype):
    name, shapes, fn, ref, strided_ok = case
    arrays = [np.round(data(s, i) * 10) / 4 for i, s in enumerate(shapes)]  # exact in all dtypes
    out = fn(*[make(a, dtype, transposed) for a in arrays])
    check(out, ref(*[a.astype(dtype.np) for a in arrays]), dtype)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_gradcheck(case):
    name, shapes, fn, ref, strided_ok = case
    xs = [dg.tensor(data(s, i + 3), dtype=dg.float64, requires_grad=True)
          for i, s in enumerate(shapes)]
    assert gradcheck(fn, xs)
    if strided_ok and any(len(s) >= 2 for s in shapes):
        ts = [dg.tensor(np.ascontiguousarray(x.detach().numpy().T), dtype=dg.float64,
                        requires_grad=True) for x in xs]
        assert gradcheck(lambda *a: fn(*[t.T for t in a]), ts)


# --- views --------------------------------------------------------------------------------

VIEWS = [lambda x: x.view(4, 3), lambda x: x.reshape(2, 6), lambda x: x.transpose(0, 1),
         lambda x: x.t(), lambda x: x.permute(1, 0), lambda x: x.narrow(1, 1, 2),
         lambda x: x.select(0, 1), lambda x: x.diagonal(), lambda x: x.unsqueeze(1),
         lambda x: x.squeeze(), lambda x: x.flatten(), lambda x: x.unflatten(1, (2, 2)),
         lambda x: x.movedim(0, 1), lambda x: x.split(2, 1)[1], lambda x: x.chunk(3)[2],
         lambda x: x.unbind(1)[3], lambda x: x.view_as(dg.ones(12)), lambda x: x.contiguous()]


@pytest.mark.parametrize("k", range(len(VIEWS)))
def test_views_share_memory_and_version(k):
    x = dg.tensor(np.arange(12.0).reshape(3, 4))
    v = VIEWS[k](x)
    before = v.clone()
    x.add_(1.0)
    check(v, before.numpy() + 1.0, dg.float64)
    assert v._version == x._version == 1
    v.mul_(2.0)
    assert x._version == 2


@pytest.mark.parametrize("fn", [lambda x: x.clone(), lambda x: x.flip(0), lambda x: x.roll(1),
                                lambda x: x.repeat(1, 1), lambda x: dg.cat([x]),
                                lambda x: x.tril(), lambda x: dg.pad(x, (0, 0)),
                                lambda x: dg.pad(x, (0, 0), mode="reflect"),
                                lambda x: x.t().reshape(12), lambda x: x.t().contiguous()])
def test_copies_do_not_alias(fn):
    x = dg.tensor(np.arange(12.0).reshape(3, 4))
    out = fn(x)
    snapshot = out.numpy().copy()
    x.add_(100.0)
    np.testing.assert_array_equal(out.numpy(), snapshot)


def test_expand_is_read_only_view_and_contiguous_copies():
    x = dg.tensor([[1.0], [2.0]])
    e = x.expand(2, 3)
    assert e.stride() == (1, 0)
    c = e.contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1)
    check(c, np.array([[1, 1, 1], [2, 2, 2]]), dg.float32)


def test_view_of_noncontiguous_raises_and_reshape_copies():
    x = dg.tensor(np.arange(6.0).reshape(2, 3)).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(6)
    check(x.reshape(6), np.arange(6.0).reshape(2, 3).T.reshape(6), dg.float64)
    check(x.view(3, 2), np.arange(6.0).reshape(2, 3).T, dg.float64)  # a no-op view is fine
    check(dg.tensor(np.arange(6.0)).view(dg.int64).view(dg.float64), np.arange(6.0), dg.float64)


def test_cat_promotes_and_grads_keep_dtypes():
    a = dg.tensor([1.0, 2.0], dtype=dg.float32, requires_grad=True)
    b = dg.tensor([3.0], dtype=dg.float64, requires_grad=True)
    i = dg.tensor([4, 5])
    out = dg.cat([a, b, i])
    check(out, np.arange(1, 6), dg.float64)
    out.backward(dg.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=dg.float64))
    check(a.grad, np.array([1, 2]), dg.float32)
    check(b.grad, np.array([3]), dg.float64)


def test_stack_and_cat_gradients_to_each_input():
    xs = [dg.tensor(data((2, 3), i), dtype=dg.float64, requires_grad=True) for i in range(3)]
    w = data((2, 3, 3), 9)
    dg.stack(xs, dim=-1).backward(dg.tensor(w))
    for k, x in enumerate(xs):
        np.testing.assert_array_equal(x.grad.numpy(), w[..., k])


# --- pad vs torch ---------------------------------------------------------------------------

PADS = [((2, 5), (1, 2), "constant"), ((2, 3, 4), (1, 2, 0, 1), "constant"),
        ((1, 2, 5), (2, 3), "reflect"), ((1, 3, 4), (1, 2, 2, 1), "reflect"),
        ((1, 2, 3), (2, 1), "replicate"), ((1, 2, 3, 2), (1, 3, 2, 0), "replicate"),
        ((1, 2, 4), (2, 1), "circular"), ((1, 1, 3, 4), (1, 2, 2, 1), "circular"),
        ((2, 4), (-1, 2), "constant")]


@pytest.mark.parametrize("shape,pad,mode", PADS)
def test_pad_torch_parity(shape, pad, mode):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    a, w = data(shape, 1), None
    x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    kw = dict(value=2.5) if mode == "constant" else {}
    ours, theirs = dg.pad(x, pad, mode=mode, **kw), F.pad(t, pad, mode=mode, **kw)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    w = data(tuple(theirs.shape), 2)
    ours.backward(dg.tensor(w))
    theirs.backward(torch.tensor(w))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_movement_torch_parity_grads():
    torch = pytest.importorskip("torch")
    calls = [lambda m, x: m.roll(x, (1, -2), (0, 1)), lambda m, x: x.repeat(2, 1, 3),
             lambda m, x: x.diagonal(1), lambda m, x: m.tril(x, -1), lambda m, x: x.flip(1),
             lambda m, x: x.expand(2, 3, 4).permute(2, 0, 1), lambda m, x: x.tile((2, 2)),
             lambda m, x: m.stack(x.unbind(1), 0), lambda m, x: m.cat(x.split([1, 3], 1)[::-1], 1)]
    a = data((3, 4), 4)
    for call in calls:
        x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        o, r = call(dg, x), call(torch, t)
        np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())
        w = data(tuple(r.shape), 5)
        o.backward(dg.tensor(w))
        r.backward(torch.tensor(w))
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,exc,pattern", [
    (lambda x: x.transpose(0, 2), IndexError, "Dimension out of range"),
    (lambda x: x.permute(0, 0), RuntimeError, "duplicate dims"),
    (lambda x: x.permute(0), RuntimeError, "does not match"),
    (lambda x: x.permute(0, 2), IndexError, "Dimension out of range"),
    (lambda x: x.squeeze(2), IndexError, "Dimension out of range"),
    (lambda x: x.unsqueeze(3), IndexError, "Dimension out of range"),
    (lambda x: x.unsqueeze(-4), IndexError, "Dimension out of range"),
    (lambda x: x.narrow(0, 1, 3), IndexError, "exceeds dimension size"),
    (lambda x: x.narrow(2, 0, 1), IndexError, "Dimension out of range"),
    (lambda x: x.select(1, 3), IndexError, "out of range"),
    (lambda x: x.select(0, -3), IndexError, "out of range"),
    (lambda x: x.diagonal(0, 0, 0), RuntimeError, "cannot be identical"),
    (lambda x: x.diagonal(0, 0, 2), IndexError, "Dimension out of range"),
    (lambda x: x.flip(2), IndexError, "Dimension out of range"),
    (lambda x: x.roll(1, 2), IndexError, "Dimension out of range"),
    (lambda x: x.roll((1, 2), 0), RuntimeError, "must align"),
    (lambda x: x.movedim(0, 2), IndexError, "Dimension out of range"),
    (lambda x: x.flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda x: x.flatten(0, 2), IndexError, "Dimension out of range"),
    (lambda x: x.unflatten(1, (2, 2)), RuntimeError, "invalid for input of size 3"),
    (lambda x: x.view(4), RuntimeError, "invalid for input of size 6"),
    (lambda x: x.reshape(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda x: x.reshape(4, -1), RuntimeError, "invalid for input of size 6"),
    (lambda x: x.expand(3, 3), RuntimeError, "must match the existing size"),
    (lambda x: x.expand(3), RuntimeError, "number of sizes"),
    (lambda x: x.expand(-1, 2, 3), RuntimeError, "-1 is not allowed"),
    (lambda x: dg.cat([x, dg.ones(3, 2)]), RuntimeError, "Sizes of tensors must match"),
    (lambda x: dg.cat([x, dg.ones(2)]), RuntimeError, "Sizes of tensors must match"),
    (lambda x: dg.cat([x, x], 2), IndexError, "Dimension out of range"),
    (lambda x: dg.cat([]), RuntimeError, "non-empty"),
    (lambda x: dg.cat([dg.tensor(1.0)]), RuntimeError, "zero-dimensional"),
    (lambda x: dg.stack([x, dg.ones(3, 2)]), RuntimeError, "equal size"),
    (lambda x: dg.stack([x, x], 3), IndexError, "Dimension out of range"),
    (lambda x: x.split([1, 2]), RuntimeError, "sum exactly to 2"),
    (lambda x: x.split(0), RuntimeError, "split_size must be positive"),
    (lambda x: x.chunk(0), RuntimeError, "greater than 0"),
    (lambda x: x.unbind(2), IndexError, "Dimension out of range"),
    (lambda x: x.repeat(2), RuntimeError, "can not be smaller"),
    (lambda x: dg.ones(3).tril(), RuntimeError, "at least 2 dimensions"),
    (lambda x: dg.ones(3).triu(), RuntimeError, "at least 2 dimensions"),
    (lambda x: x.t().t().unsqueeze(0).t(), RuntimeError, "<= 2 dimensions"),
    (lambda x: dg.pad(x, (1,)), RuntimeError, "padding length must be even"),
    (lambda x: dg.pad(x, (1, 1, 1, 1, 1, 1)), RuntimeError, "padding length"),
    (lambda x: dg.pad(x, (3, 0), mode="reflect"), RuntimeError, "should be less than"),
    (lambda x: dg.pad(x, (1, 1), mode="bogus"), NotImplementedError, "bogus"),
])
def test_errors(fn, exc, pattern):
    with pytest.raises(exc, match=pattern):
        fn(dg.ones(2, 3))


def test_aliases_swapaxes_concat_concatenate():
    x = dg.arange(6).reshape(2, 3)
    assert x.swapaxes(0, 1).tolist() == x.transpose(0, 1).tolist()
    for fn in (dg.concat, dg.concatenate):
        assert fn([x, x], 1).tolist() == dg.cat([x, x], 1).tolist()
