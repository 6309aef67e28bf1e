"""dtypes and type promotion: exhaustive parity of promote_types / result_type with PyTorch, and
the dtypes real ops produce."""
import itertools

import numpy as np
import pytest

import dynagrad as dg

ALL = [dg.bool, dg.uint8, dg.int8, dg.int16, dg.int32, dg.int64, dg.float16, dg.float32,
       dg.float64]
SCALARS = [True, 3, 2.5]
PAIRS = list(itertools.product(ALL, ALL))


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def tdt(torch, d):
    return getattr(torch, d.name)


def test_dtype_objects():
    assert dg.float32 is dg.float and dg.float64 is dg.double and dg.float16 is dg.half
    assert dg.int64 is dg.long and dg.int32 is dg.int and dg.int16 is dg.short
    assert repr(dg.float64) == "dynagrad.float64" and str(dg.bool) == "dynagrad.bool"
    assert [d.is_floating_point for d in ALL] == [False] * 6 + [True] * 3
    assert [d.itemsize for d in ALL] == [1, 1, 1, 2, 4, 8, 2, 4, 8]
    assert dg.float32 == dg.float32 and dg.float32 != dg.float64


def test_promote_types_examples():
    assert dg.promote_types(dg.uint8, dg.int8) is dg.int16
    assert dg.promote_types(dg.int64, dg.float16) is dg.float16
    assert dg.promote_types(dg.bool, dg.uint8) is dg.uint8
    assert dg.promote_types(dg.float16, dg.float32) is dg.float32
    assert dg.promote_types(dg.int32, dg.uint8) is dg.int32


def test_promote_types_all_pairs_match_torch(torch):
    mismatches = [(a, b) for a, b in PAIRS
                  if tdt(torch, dg.promote_types(a, b)) != torch.promote_types(tdt(torch, a),
                                                                               tdt(torch, b))]
    assert mismatches == []


def test_promote_types_is_symmetric():
    assert all(dg.promote_types(a, b) is dg.promote_types(b, a) for a, b in PAIRS)


def _pair(lib, a, b, shape_a, shape_b):
    dt = (lambda d: getattr(lib, d.name)) if lib is not dg else (lambda d: d)
    return lib.zeros(shape_a, dtype=dt(a)), lib.zeros(shape_b, dtype=dt(b))


@pytest.mark.parametrize("shapes", [((2,), (2,)), ((2,), ()), ((), (2,)), ((), ())],
                         ids=["dim-dim", "dim-zerodim", "zerodim-dim", "zerodim-zerodim"])
def test_result_type_tensor_pairs_match_torch(torch, shapes):
    bad = []
    for a, b in PAIRS:
        mine = dg.result_type(*_pair(dg, a, b, *shapes))
        ref = torch.result_type(*_pair(torch, a, b, *shapes))
        if tdt(torch, mine) != ref:
            bad.append((a, b, mine, ref))
    assert bad == []


@pytest.mark.parametrize("shape", [(2,), ()], ids=["dim", "zerodim"])
def test_result_type_with_python_scalars_matches_torch(torch, shape):
    bad = []
    for d, s in itertools.product(ALL, SCALARS):
        for swap in (False, True):
            mine_args = (dg.zeros(shape, dtype=d), s)
            ref_args = (torch.zeros(shape, dtype=tdt(torch, d)), s)
            if swap:
                mine_args, ref_args = mine_args[::-1], ref_args[::-1]
            mine, ref = dg.result_type(*mine_args), torch.result_type(*ref_args)
            if tdt(torch, mine) != ref:
                bad.append((d, s, swap, mine, ref))
    assert bad == []


@pytest.mark.parametrize("left, right, expected", [
    (dg.zeros(2), 2.0, dg.float32),                        # float32 tensor * float stays float32
    (dg.zeros(2, dtype=dg.int64), 2.5, dg.float32),        # int tensor * float -> default float
    (dg.zeros(2, dtype=dg.uint8), dg.zeros(2, dtype=dg.int8), dg.int16),
    (dg.zeros(2, dtype=dg.bool), 1, dg.int64),
    (dg.zeros(2, dtype=dg.bool), True, dg.bool),
    (dg.zeros(2, dtype=dg.int32), 10**10, dg.int32),       # scalars never widen within a category
    (dg.zeros(2, dtype=dg.float16), dg.tensor(1.0, dtype=dg.float64), dg.float16),  # 0-dim loses
    (dg.zeros(2, dtype=dg.int8), dg.tensor(1.0, dtype=dg.float64), dg.float64),  # ... unless
    (dg.zeros(2, dtype=dg.int16), dg.tensor(1, dtype=dg.int64), dg.int16),       # it lifts category
    (dg.tensor(1, dtype=dg.int32), 2.0, dg.float32),
])
def test_result_type_examples(left, right, expected):
    assert dg.result_type(left, right) is expected


def test_result_type_uses_default_dtype_for_python_floats():
    dg.set_default_dtype(dg.float64)
    try:
        assert dg.result_type(dg.zeros(2, dtype=dg.int64), 2.5) is dg.float64
        assert dg.result_type(dg.zeros(2, dtype=dg.float32), 2.5) is dg.float32
    finally:
        dg.set_default_dtype(dg.float32)


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
def test_add_produces_promoted_dtype(a, b):
    x = dg.ones(2, dtype=a)
    y = dg.ones(2, dtype=b)
    out = x + y
    expected = dg.promote_types(a, b)
    assert out.dtype is expected
    assert out.tolist() == (np.ones(2, a.np) + np.ones(2, b.np)).astype(expected.np).tolist()


@pytest.mark.parametrize("dtype", ALL, ids=[d.name for d in ALL])
@pytest.mark.parametrize("scalar", SCALARS, ids=["bool", "int", "float"])
def test_mul_with_scalar_matches_torch(torch, dtype, scalar):
    mine = dg.ones(3, dtype=dtype) * scalar
    ref = torch.ones(3, dtype=tdt(torch, dtype)) * scalar
    assert tdt(torch, mine.dtype) == ref.dtype
    assert mine.tolist() == ref.tolist()
    assert (scalar * dg.ones(3, dtype=dtype)).dtype is mine.dtype


def test_zero_dim_operand_does_not_widen():
    out = dg.ones(2) + dg.tensor(1.0, dtype=dg.float64)
    assert out.dtype is dg.float32 and out.tolist() == [2.0, 2.0]
    out = dg.ones(2, dtype=dg.int32) * dg.tensor(2.5, dtype=dg.float64)
    assert out.dtype is dg.float64 and out.tolist() == [2.5, 2.5]


def test_narrow_integer_arithmetic_wraps_like_torch(torch):
    mine = dg.tensor([200, 100], dtype=dg.uint8) + dg.tensor([100, 100], dtype=dg.uint8)
    ref = torch.tensor([200, 100], dtype=torch.uint8) + torch.tensor([100, 100],
                                                                     dtype=torch.uint8)
    assert mine.dtype is dg.uint8 and mine.tolist() == ref.tolist() == [44, 200]


def test_set_default_dtype_rules():
    assert dg.get_default_dtype() is dg.float32
    with pytest.raises(TypeError, match="floating point"):
        dg.set_default_dtype(dg.int64)
    dg.set_default_dtype(dg.float64)
    try:
        assert dg.get_default_dtype() is dg.float64
        assert dg.tensor([1.5]).dtype is dg.float64 and dg.zeros(1).dtype is dg.float64
        assert dg.arange(2.0).dtype is dg.float64 and dg.tensor([1]).dtype is dg.int64
        assert dg.rand(2).dtype is dg.float64
    finally:
        dg.set_default_dtype(dg.float32)
    assert dg.tensor([1.5]).dtype is dg.float32


def test_set_default_tensor_type_takes_torch_type_names(torch):
    try:
        for name in ("torch.DoubleTensor", "torch.HalfTensor", "torch.FloatTensor"):
            dg.set_default_tensor_type(name)
            torch.set_default_tensor_type(name)
            assert dg.get_default_dtype().name == str(torch.get_default_dtype())[6:]
        dg.set_default_tensor_type(torch.DoubleTensor)  # a class: its name counts
        assert dg.get_default_dtype() is dg.float64
        for bad in ("torch.IntTensor", dg.float64):
            with pytest.raises(TypeError, match="only floating-point types"):
                dg.set_default_tensor_type(bad)
    finally:
        dg.set_default_dtype(dg.float32)
        torch.set_default_dtype(torch.float32)


def test_dtype_pickles_to_same_object():
    import pickle
    assert all(pickle.loads(pickle.dumps(d)) is d for d in ALL)
