"""Shape and data-movement ops: the records of tests/opinfos/movement.py (forward against NumPy
in three dtypes and two layouts, gradients, PyTorch parity), then views sharing memory, copies
not aliasing, promotion, compositions compared with torch, and errors.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import dynagrad as dg
from harness import assert_values, check_op
from opinfo import family, params, uniform

check = functools.partial(assert_values, tol=None)  # movement is exact


@pytest.mark.parametrize("info,dtype", params(family("movement")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


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
    xs = [dg.tensor(uniform((2, 3), i), dtype=dg.float64, requires_grad=True) for i in range(3)]
    w = uniform((2, 3, 3), 9)
    dg.stack(xs, dim=-1).backward(dg.tensor(w))
    for k, x in enumerate(xs):
        np.testing.assert_array_equal(x.grad.numpy(), w[..., k])


# --- compositions vs torch ---------------------------------------------------------------------

def test_movement_torch_parity_grads():
    torch = pytest.importorskip("torch")
    calls = [lambda m, x: m.roll(x, (1, -2), (0, 1)), lambda m, x: x.repeat(2, 1, 3),
             lambda m, x: x.diagonal(1), lambda m, x: m.tril(x, -1), lambda m, x: x.flip(1),
             lambda m, x: x.expand(2, 3, 4).permute(2, 0, 1), lambda m, x: x.tile((2, 2)),
             lambda m, x: m.stack(x.unbind(1), 0), lambda m, x: m.cat(x.split([1, 3], 1)[::-1], 1)]
    a = uniform((3, 4), 4)
    for call in calls:
        x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        o, r = call(dg, x), call(torch, t)
        np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())
        w = uniform(tuple(r.shape), 5)
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


# --- varargs forms, in-place views, new views and errors (issue 26) ---------------------------

torch = pytest.importorskip("torch")

VARARGS = [  # (method, spread-out ints, the same as one tuple)
    ("view", (3, 4), ((3, 4),)), ("reshape", (4, 3), ([4, 3],)), ("permute", (1, 0), ((1, 0),)),
    ("expand", (2, 3, 4), ((2, 3, 4),)), ("repeat", (2, 1), ((2, 1),)), ("tile", (2, 3), ((2, 3),)),
    ("flip", (0, 1), ((0, 1),)), ("broadcast_to", (2, 3, 4), ((2, 3, 4),)),
    ("new_zeros", (2, 3), ((2, 3),)), ("new_ones", (2, 3), ([2, 3],)),
    ("sum_to_size", (1, 4), ((1, 4),)), ("hsplit", (1, 3), ((1, 3),)),
]


@pytest.mark.parametrize("name,spread,packed", VARARGS, ids=[v[0] for v in VARARGS])
def test_varargs_and_tuple_forms_agree_with_torch(name, spread, packed):
    a = np.arange(12.0).reshape(3, 4)
    for args in (spread, packed):
        ours, theirs = getattr(dg.tensor(a), name)(*args), getattr(torch.tensor(a), name)(*args)
        ours = ours if isinstance(ours, tuple) else (ours,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            check(o, t.numpy(), dg.float64)


def test_squeeze_takes_several_dims():
    x = dg.zeros(1, 2, 1, 3)
    assert x.squeeze(0, 2).shape == (2, 3) == x.squeeze((0, 2)).shape
    assert x.squeeze(dim=2).shape == (1, 2, 3)


@pytest.mark.parametrize("call", ["x.view(2, (3,))", "x.permute(0, (1,))", "x.repeat(2, (3,))",
                                  "x.expand(2, 3.5)", "x.view()", "x.reshape()", "x.permute()",
                                  "x.tile()", "x.repeat()", "x.new_zeros()", "x.flip()",
                                  "x.new_zeros(2, (3,))", "x.new_full(2, 1)"])
def test_bad_varargs_raise_torchs_type_error(call):
    for x in (dg.zeros(2, 3), torch.zeros(2, 3)):
        with pytest.raises(TypeError):
            eval(call)


@pytest.mark.parametrize("name,args", [("squeeze_", ()), ("squeeze_", (1,)), ("unsqueeze_", (0,)),
                                       ("t_", ()), ("transpose_", (0, 1)), ("swapdims_", (1, 0)),
                                       ("swapaxes_", (0, 1))])
def test_inplace_views_change_shape_and_keep_gradients(name, args):
    a = np.arange(6.0).reshape(3, 1, 2)[:, 0] if name != "squeeze_" else \
        np.arange(6.0).reshape(3, 1, 2)
    x = dg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = x * 2, tx * 2
    assert getattr(y, name)(*args) is y
    getattr(ty, name)(*args)
    check(y, ty.detach().numpy(), dg.float64)
    assert y._version == 1
    w = np.random.default_rng(0).normal(size=tuple(ty.shape))
    (y * dg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    leaf = dg.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(leaf, name)(*args)


def test_tril_triu_in_place():
    a = np.arange(9.0).reshape(3, 3)
    x = dg.tensor(a)
    assert x.tril_(-1) is x
    check(x, np.tril(a, -1), dg.float64)
    y = dg.tensor(a)
    y.triu_(1)
    check(y, np.triu(a, 1), dg.float64)


NEW_VIEWS = [lambda x: x.tensor_split(2, 1)[1], lambda x: x.hsplit(2)[0],
             lambda x: x.vsplit([1])[1], lambda x: x.split_with_sizes([1, 2])[1],
             lambda x: dg.atleast_3d(x), lambda x: x.ravel(), lambda x: x.adjoint(),
             lambda x: x.swapdims(0, 1), lambda x: x.moveaxis(0, 1),
             lambda x: dg.broadcast_tensors(x, dg.zeros(2, 3, 4))[0],
             lambda x: dg.meshgrid(x[0], x[1], indexing="xy")[1],
             lambda x: x.as_strided((2, 2), (1, 4), 1), lambda x: x.unfold(1, 2, 1)]


@pytest.mark.parametrize("k", range(len(NEW_VIEWS)))
def test_new_views_share_memory_and_version(k):
    x = dg.tensor(np.arange(12.0).reshape(3, 4))
    v = NEW_VIEWS[k](x)
    before = v.clone()
    x.add_(1.0)
    check(v, before.numpy() + 1.0, dg.float64)
    assert v._version == x._version == 1


def test_writes_through_new_views_reach_the_base():
    x = dg.zeros(3, 4, dtype=dg.float64)
    x.tensor_split(2, 1)[1][0, 0] = 5.0
    x.as_strided((2,), (5,), 0)[1] = 7.0
    dg.atleast_3d(x)[2, 3, 0] = 9.0
    want = np.zeros((3, 4))
    want[0, 2], want[1, 1], want[2, 3] = 5.0, 7.0, 9.0
    check(x, want, dg.float64)


def test_as_strided_in_place_and_storage_offset_of_a_view():
    base = dg.arange(8.0, dtype=dg.float64)
    v = base[2:]
    check(v.as_strided((2, 2), (2, 1)), np.array([[2.0, 3.0], [4.0, 5.0]]), dg.float64)
    check(v.as_strided((2,), (1,), 0), np.array([0.0, 1.0]), dg.float64)  # storage positions
    assert v.as_strided_((3,), (2,)) is v and v.shape == (3,)
    check(v, np.array([2.0, 4.0, 6.0]), dg.float64)


def test_repeat_interleave_counts_alone_and_fill_diagonal_gradient():
    check(dg.repeat_interleave(dg.tensor([2, 0, 1])), np.array([0, 0, 2]), dg.int64)
    x = dg.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    y = x * 1
    y.fill_diagonal_(0.0)
    y.sum().backward()
    check(x.grad, 1.0 - np.eye(3), dg.float64)


ERRORS = [  # (call, the same call on torch): the same exception type
    "m.rot90(1, (0,))", "m.rot90(1, (0, 0))", "dg_or_torch.rot90(v, 1)", "v.fliplr()",
    "dg_or_torch.tensor_split(m, 0)", "dg_or_torch.tensor_split(s, 2)", "m.hsplit(2)",
    "v.vsplit(2)", "m.dsplit(2)", "m.split_with_sizes([1, 2])", "m.unfold(1, 5, 1)",
    "m.unfold(1, 2, 0)", "m.sum_to_size(2)", "v.adjoint()", "m.diag_embed(0, 0, 0)",
    "dg_or_torch.diag(dg_or_torch.zeros(2, 2, 2))", "v.trace()",
    "dg_or_torch.tril_indices(-1, 3)", "dg_or_torch.block_diag(dg_or_torch.zeros(1, 1, 1))",
    "dg_or_torch.combinations(m)", "dg_or_torch.combinations(v, -1)",
    "dg_or_torch.cartesian_prod(m)", "v.fill_diagonal_(1)",
    "dg_or_torch.zeros(2, 3, 2).fill_diagonal_(1)",
    "dg_or_torch.meshgrid(v, v, indexing='ji')", "dg_or_torch.meshgrid(m, indexing='ij')",
    "dg_or_torch.broadcast_shapes((2,), (3,))", "v.repeat_interleave(-1)",
    "v.repeat_interleave(dg_or_torch.tensor([1, 2]))", "v.repeat_interleave(2, output_size=3)",
    "m.take(dg_or_torch.tensor([6]))", "m.take(dg_or_torch.tensor([1.0]))",
    "m.take_along_dim(dg_or_torch.tensor([1]), 1)",
    "m.take_along_dim(dg_or_torch.tensor([[1]], dtype=dg_or_torch.int32), 1)",
    "m.index_copy(1, dg_or_torch.tensor([2, 0]), dg_or_torch.ones(2, 3))",
    "m.index_copy(1, dg_or_torch.tensor([3, 0]), dg_or_torch.ones(2, 2))",
    "m.index_fill(1, dg_or_torch.tensor([3]), 1)",
    "m.index_fill(1, dg_or_torch.tensor([0]), dg_or_torch.ones(2))",
    "m.masked_scatter(dg_or_torch.tensor([True, False, True]), dg_or_torch.ones(1))",
    "m.masked_scatter(dg_or_torch.tensor([1, 0, 1]), dg_or_torch.ones(9))",
    "m.scatter_reduce(1, dg_or_torch.tensor([[0]]), dg_or_torch.ones(1, 1), 'foo')",
    "m.scatter_reduce(1, dg_or_torch.tensor([[0]]), dg_or_torch.ones(1, 1).double(), 'sum')",
    "m.index_reduce(1, dg_or_torch.tensor([0]), dg_or_torch.ones(2, 1), 'sum')",
    "m.put(dg_or_torch.tensor([6]), dg_or_torch.ones(1))",
    "m.put(dg_or_torch.tensor([0, 1]), dg_or_torch.ones(1))",
    "m.index_put((dg_or_torch.tensor([0]),), 1.0)",
    "m.index_put((dg_or_torch.tensor([0]),), dg_or_torch.tensor(1.0).double())",
    "dg_or_torch.unravel_index(dg_or_torch.tensor([1.0]), (2, 3))",
    "dg_or_torch.unravel_index(dg_or_torch.tensor(1), (2, -3))",
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    kinds = []
    for lib in (dg, torch):
        env = {"dg_or_torch": lib, "m": lib.zeros(2, 3), "v": lib.zeros(3), "s": lib.zeros(())}
        with pytest.raises(Exception) as info:
            eval(call, env)
        kinds.append(type(info.value))
    assert kinds[0] is kinds[1], f"{call}: {kinds[0].__name__}, torch {kinds[1].__name__}"


def test_inplace_function_forms_as_torch():
    x, tx = dg.zeros(2, 3, dtype=dg.float64), torch.zeros(2, 3, dtype=torch.float64)
    assert dg.index_put_(x, (dg.tensor([1]),), dg.tensor(2.0, dtype=dg.float64)) is x
    torch.index_put_(tx, (torch.tensor([1]),), torch.tensor(2.0, dtype=torch.float64))
    check(x, tx.numpy(), dg.float64)
    y, ty = dg.arange(6.0, dtype=dg.float64), torch.arange(6.0, dtype=torch.float64)
    assert dg.as_strided_(y, (2, 2), (1, 2)) is y
    torch.as_strided_(ty, (2, 2), (1, 2))
    check(y, ty.numpy(), dg.float64)
