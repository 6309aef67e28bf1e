"""nn.utils.rnn (packing, padding, PackedSequence) and RNN/LSTM/GRU on packed input, vs
PyTorch 2.13: values, batch sizes, permutations, every gradient, and the errors."""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn
from dynagrad.nn.utils import rnn as R

torch = pytest.importorskip("torch")
TR = torch.nn.utils.rnn

RNG = np.random.default_rng(5)
TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}


def _np(t):
    return t.detach().numpy()


def _same(a, b, dtype="float64"):
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(_np(a), _np(b), **TOL[dtype])


def _same_packed(po, pt, dtype="float64"):
    assert isinstance(po, R.PackedSequence)
    _same(po.data, pt.data, dtype)
    assert po.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert po.batch_sizes.dtype == dg.int64 and po.batch_sizes.device.type == "cpu"
    for a, b in ((po.sorted_indices, pt.sorted_indices),
                 (po.unsorted_indices, pt.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist() and a.dtype == dg.int64


def _errors_match(ours, theirs):
    """Both raise the same exception type; returns the two messages."""
    with pytest.raises(Exception) as et:
        theirs()
    with pytest.raises(type(et.value)) as eo:
        ours()
    return str(eo.value), str(et.value)


def _both(x):
    return dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


# --- packing and padding ------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_pad_roundtrip_and_grads(batch_first, enforce_sorted):
    lengths = [4, 3, 3, 1] if enforce_sorted else [2, 4, 1, 4]  # ties: the stable order
    x = RNG.standard_normal((4, 4, 2))
    xo, xt = _both(x)
    po = R.pack_padded_sequence(xo, lengths, batch_first, enforce_sorted)
    pt = TR.pack_padded_sequence(xt, lengths, batch_first, enforce_sorted)
    _same_packed(po, pt)
    for kw in ({}, {"padding_value": -2.5, "total_length": 6}):
        uo, lo = R.pad_packed_sequence(po, batch_first, **kw)
        ut, lt = TR.pad_packed_sequence(pt, batch_first, **kw)
        _same(uo, ut)
        assert lo.tolist() == lt.tolist() and lo.dtype == dg.int64
    w = RNG.standard_normal(tuple(ut.shape))
    (uo * dg.tensor(w)).sum().backward()
    (ut * torch.tensor(w)).sum().backward()
    _same(xo.grad, xt.grad)


def test_pack_lengths_forms_and_trailing_dims():
    x = RNG.standard_normal((3, 2, 2, 3)).astype(np.float32)
    for lengths in ([3, 2], (3, 2), dg.tensor([3, 2]), dg.tensor([3.0, 2.0])):
        tl = torch.tensor(lengths.tolist()) if isinstance(lengths, dg.Tensor) else lengths
        _same_packed(R.pack_padded_sequence(dg.tensor(x), lengths),
                     TR.pack_padded_sequence(torch.tensor(x), tl), "float32")
    ints = np.arange(6).reshape(3, 2)
    po = R.pack_padded_sequence(dg.tensor(ints), [3, 1])
    _same_packed(po, TR.pack_padded_sequence(torch.tensor(ints), [3, 1]))
    # the padding value takes the data's dtype
    uo, _ = R.pad_packed_sequence(po, padding_value=2.5)
    ut, _ = TR.pad_packed_sequence(TR.pack_padded_sequence(torch.tensor(ints), [3, 1]),
                                   padding_value=2.5)
    assert uo.dtype == dg.int64 and uo.tolist() == ut.tolist()


@pytest.mark.parametrize("case", [
    dict(lengths=[2, 3, 1]), dict(lengths=[3, 2, 0]), dict(lengths=[3, 2, -1]),
    dict(lengths=[3, 2]), dict(lengths="2d"), dict(lengths=[3, 2, 1], x="1d"),
    dict(lengths=[], x="empty")])
def test_pack_padded_sequence_errors(case):
    x = np.ones({"1d": (4,), "empty": (3, 0, 2)}.get(case.get("x"), (4, 3, 2)))
    lengths = case["lengths"]

    def run(mod, lib):
        ln = lib.tensor([[3, 2, 1]]) if lengths == "2d" else lengths
        return lambda: mod.pack_padded_sequence(lib.tensor(x), ln)
    mo, mt = _errors_match(run(R, dg), run(TR, torch))
    if case.get("x") != "1d" and lengths != "2d":
        assert mo == mt
    else:  # the rule in torch's words; ours adds the tensor's description
        assert mo.split(" (")[0].split(", but")[0] == mt.split(" (")[0].split(", but")[0]


def test_pack_length_longer_than_input_raises():
    # torch reads past the input here; we refuse
    with pytest.raises(RuntimeError, match="exceeds the padded sequence length"):
        R.pack_padded_sequence(dg.ones(4, 3, 2), [5, 2, 1])


def test_pad_packed_total_length_error():
    p = (R.pack_padded_sequence(dg.ones(4, 3), [3, 2, 1]),
         TR.pack_padded_sequence(torch.ones(4, 3), [3, 2, 1]))
    mo, mt = _errors_match(lambda: R.pad_packed_sequence(p[0], total_length=2),
                           lambda: TR.pad_packed_sequence(p[1], total_length=2))
    assert mo == mt


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    seqs = [RNG.standard_normal((n, 2)) for n in (2, 4, 1)]
    so = [dg.tensor(s, requires_grad=True) for s in seqs]
    st = [torch.tensor(s, requires_grad=True) for s in seqs]
    out_o = R.pad_sequence(so, batch_first, -1.0, side)
    out_t = TR.pad_sequence(st, batch_first, -1.0, side)
    _same(out_o, out_t)
    w = RNG.standard_normal(tuple(out_t.shape))
    (out_o * dg.tensor(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    for a, b in zip(so, st):
        _same(a.grad, b.grad)


def test_pad_sequence_dtypes_and_inputs():
    # the first sequence's dtype wins; a tensor is iterated over its first dimension
    mixed = [np.ones((2, 3), np.float32), np.arange(9).reshape(3, 3)]
    out_o = R.pad_sequence([dg.tensor(a) for a in mixed])
    out_t = TR.pad_sequence([torch.tensor(a) for a in mixed])
    assert out_o.dtype == dg.float32 and out_o.tolist() == out_t.tolist()
    x = np.arange(6.0).reshape(2, 3)
    assert R.pad_sequence(dg.tensor(x)).tolist() == TR.pad_sequence(torch.tensor(x)).tolist()
    ints = R.pad_sequence([dg.tensor([1, 2]), dg.tensor([3])], padding_value=7)
    assert ints.dtype == dg.int64 and ints.tolist() == [[1, 3], [2, 7]]


@pytest.mark.parametrize("case", ["empty", "not_iterable", "side", "trailing", "ndim"])
def test_pad_sequence_errors(case):
    def run(mod, lib):
        args = {"empty": ([],), "not_iterable": (5,),
                "trailing": ([lib.ones(2, 3), lib.ones(3, 2)],),
                "ndim": ([lib.ones(2, 3), lib.ones(3, 3, 1)],)}.get(case, ([lib.ones(2)],))
        kw = {"padding_side": "up"} if case == "side" else {}
        return lambda: mod.pad_sequence(*args, **kw)
    mo, mt = _errors_match(run(R, dg), run(TR, torch))
    if case in ("empty", "side"):
        assert mo == mt
    elif case == "not_iterable":
        assert mo.split(" type:")[0] == mt.split(" type:")[0]


def test_pack_sequence_unpack_unpad():
    seqs = [RNG.standard_normal((n, 2)) for n in (3, 1, 2)]
    so = [dg.tensor(s, requires_grad=True) for s in seqs]
    st = [torch.tensor(s, requires_grad=True) for s in seqs]
    po, pt = R.pack_sequence(so, enforce_sorted=False), TR.pack_sequence(st, enforce_sorted=False)
    _same_packed(po, pt)
    mo, mt = _errors_match(lambda: R.pack_sequence(so), lambda: TR.pack_sequence(st))
    assert mo == mt
    uo, ut = R.unpack_sequence(po), TR.unpack_sequence(pt)
    assert len(uo) == len(ut) == 3
    loss_o, loss_t = 0, 0
    for a, b in zip(uo, ut):
        _same(a, b)
        w = RNG.standard_normal(tuple(b.shape))
        loss_o = loss_o + (a * dg.tensor(w)).sum()
        loss_t = loss_t + (b * torch.tensor(w)).sum()
    loss_o.backward()
    loss_t.backward()
    for a, b in zip(so, st):
        _same(a.grad, b.grad)
    padded = np.arange(12.0).reshape(3, 2, 2)
    for bf, lengths in ((False, [3, 1]), (True, [1, 2, 2])):
        got = R.unpad_sequence(dg.tensor(padded), dg.tensor(lengths), batch_first=bf)
        want = TR.unpad_sequence(torch.tensor(padded), torch.tensor(lengths), batch_first=bf)
        assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_invert_permutation():
    perm = [3, 0, 2, 1]
    assert R.invert_permutation(dg.tensor(perm)).tolist() == \
        TR.invert_permutation(torch.tensor(perm)).tolist()
    assert R.invert_permutation(None) is None


def test_packed_sequence_class():
    po = R.pack_padded_sequence(dg.ones(3, 2, dtype=dg.float32), [3, 2])
    assert po._fields == TR.PackedSequence._fields
    assert po.is_cuda is False and po.is_pinned() is False
    assert po.to(dg.float32) is po and po.cpu() is po and po.pin_memory() is po
    for method, dtype in (("double", dg.float64), ("long", dg.int64), ("int", dg.int32),
                          ("half", dg.float16), ("short", dg.int16), ("char", dg.int8),
                          ("byte", dg.uint8), ("float", dg.float32)):
        conv = getattr(po.double() if method == "float" else po, method)()
        assert type(conv) is R.PackedSequence and conv.data.dtype == dtype
        assert conv.batch_sizes is po.batch_sizes
    unsorted = R.pack_sequence([dg.ones(1), dg.ones(2)], enforce_sorted=False).to(dg.float64)
    assert unsorted.sorted_indices.tolist() == [1, 0] and unsorted.data.dtype == dg.float64
    data, sizes = dg.ones(3), dg.tensor([2, 1])
    for p in (R.PackedSequence(data, sizes), R.PackedSequence((data, sizes))):
        assert p.data is data and p.batch_sizes is sizes and p.unsorted_indices is None
    p = R.PackedSequence(data, sizes, dg.tensor([1, 0]))
    assert p.unsorted_indices.tolist() == [1, 0]
    mo, mt = _errors_match(lambda: R.PackedSequence(dg.ones(3)),
                           lambda: TR.PackedSequence(torch.ones(3)))
    assert mo == mt
    data, sizes, si, ui = po  # a namedtuple: unpacks into its four fields
    assert si is None and ui is None and sizes.tolist() == [2, 2, 1]


# --- recurrent layers on packed input -----------------------------------------------------------
def _pair(kind, dtype, **kw):
    ours = getattr(nn, kind)(3, 4, dtype=getattr(dg, dtype), **kw)
    theirs = getattr(torch.nn, kind)(3, 4, **kw).to(getattr(torch, dtype))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("kind,dtype,layers,bidirectional,sort,with_h0", [
    ("RNN", "float64", 2, True, False, True),
    ("LSTM", "float64", 2, True, False, True),
    ("GRU", "float64", 2, True, True, True),
    ("LSTM", "float32", 1, False, True, False),
    ("GRU", "float32", 1, True, False, False),
])
def test_rnn_packed_matches_torch(kind, dtype, layers, bidirectional, sort, with_h0):
    lengths = [5, 3, 3, 1] if sort else [2, 5, 3, 3]
    np_dt = np.float32 if dtype == "float32" else np.float64
    ours, theirs = _pair(kind, dtype, num_layers=layers, bidirectional=bidirectional,
                         batch_first=True)
    x = RNG.standard_normal((4, 5, 3)).astype(np_dt)  # batch_first: the module's flag is
    xo, xt = _both(x)                                  # ignored for packed input, as in torch
    po = R.pack_padded_sequence(xo, lengths, batch_first=True, enforce_sorted=sort)
    pt = TR.pack_padded_sequence(xt, lengths, batch_first=True, enforce_sorted=sort)
    lstm = kind == "LSTM"
    n_states = (2 if lstm else 1) if with_h0 else 0
    shape = (layers * (2 if bidirectional else 1), 4, 4)
    states = [RNG.standard_normal(shape).astype(np_dt) for _ in range(n_states)]
    so = [dg.tensor(s, requires_grad=True) for s in states]
    st = [torch.tensor(s, requires_grad=True) for s in states]
    hx_o = (tuple(so) if lstm else so[0]) if states else None
    hx_t = (tuple(st) if lstm else st[0]) if states else None
    out_o, hn_o = ours(po, hx_o)
    out_t, hn_t = theirs(pt, hx_t)
    _same_packed(out_o, out_t, dtype)
    outs_o = [out_o.data] + (list(hn_o) if lstm else [hn_o])
    outs_t = [out_t.data] + (list(hn_t) if lstm else [hn_t])
    loss_o, loss_t = 0, 0
    for a, b in zip(outs_o, outs_t):
        _same(a, b, dtype)
        w = RNG.standard_normal(tuple(b.shape)).astype(np_dt)
        loss_o = loss_o + (a * dg.tensor(w)).sum()
        loss_t = loss_t + (b * torch.tensor(w)).sum()
    loss_o.backward()
    loss_t.backward()
    _same(xo.grad, xt.grad, dtype)
    for a, b in zip(so, st):
        _same(a.grad, b.grad, dtype)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        _same(p.grad, q.grad, dtype)
    # the padded output through pad_packed_sequence too
    _same(R.pad_packed_sequence(out_o, batch_first=True)[0],
          TR.pad_packed_sequence(out_t, batch_first=True)[0], dtype)


def test_rnn_packed_errors():
    ours, theirs = _pair("GRU", "float64")
    po = R.pack_padded_sequence(dg.ones(3, 2, 3, dtype=dg.float64), [3, 2])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        ours(po, dg.zeros(1, 3, 4, dtype=dg.float64))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        theirs(TR.pack_padded_sequence(torch.ones(3, 2, 3, dtype=torch.float64), [3, 2]),
               torch.zeros(1, 3, 4, dtype=torch.float64))
    bad = R.pack_padded_sequence(dg.ones(3, 2, 5, dtype=dg.float64), [3, 2])
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        ours(bad)
