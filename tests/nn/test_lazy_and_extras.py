"""Lazy modules (materialised shapes, class change, init, state_dict loading) against torch
2.13; LSTM ``proj_size`` (outputs, states and gradients with torch's weights in float64);
``nn.init.sparse_``."""
import copy

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn

torch = pytest.importorskip("torch")

LAZY = [("LazyLinear", (3,), (2, 4, 5)), ("LazyConv1d", (4, 3), (2, 3, 6)),
        ("LazyConv2d", (4, 3), (3, 6, 6)), ("LazyConv3d", (2, 1, 1, 0, 1, 2), (1, 4, 2, 2, 2)),
        ("LazyConvTranspose1d", (4, 3, 2), (2, 3, 6)), ("LazyConvTranspose2d", (2, 2), (1, 2, 3, 3)),
        ("LazyConvTranspose3d", (2, 1), (1, 3, 2, 2, 2)), ("LazyBatchNorm1d", (), (4, 3)),
        ("LazyBatchNorm2d", (), (2, 3, 2, 2)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d", (), (2, 3, 5)), ("LazyInstanceNorm2d", (), (2, 3, 2, 3)),
        ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2))]


@pytest.mark.parametrize("name,args,shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_module_materializes_like_torch(name, args, shape):
    md, mt = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(md) == repr(mt)
    assert md.has_uninitialized_params()
    assert isinstance(md.weight, nn.UninitializedParameter)
    x = np.random.default_rng(0).standard_normal(shape)
    md(dg.tensor(x, dtype=dg.float32))
    mt(torch.tensor(x, dtype=torch.float32))
    assert type(md).__name__ == type(mt).__name__ == name[4:]
    assert isinstance(md, getattr(nn, name[4:]))
    assert not any(isinstance(t, (nn.UninitializedParameter, nn.UninitializedBuffer))
                   for t in list(md.parameters()) + list(md.buffers()))
    assert repr(md) == repr(mt)
    sd_d, sd_t = md.state_dict(), mt.state_dict()
    assert list(sd_d) == list(sd_t)
    assert [tuple(v.shape) for v in sd_d.values()] == [tuple(v.shape) for v in sd_t.values()]
    assert type(md.weight) is nn.Parameter
    # the plain module's initialisation: norm weights 1, conv/linear weights in the
    # kaiming-uniform(a=sqrt(5)) bound 1 / sqrt(fan_in)
    w = md.weight.detach().numpy()
    if "Norm" in name:
        np.testing.assert_array_equal(w, 1.0)
    else:
        fan_in = w.shape[1] * int(np.prod(w.shape[2:]))   # torch's fan_in, transposed too
        assert np.abs(w).max() <= 1 / np.sqrt(fan_in) + 1e-7 and np.abs(w).max() > 0
    # with torch's weights loaded the outputs agree
    md.load_state_dict({k: dg.tensor(v.numpy()) for k, v in sd_t.items()})
    md.eval()
    mt.eval()
    np.testing.assert_allclose(md(dg.tensor(x, dtype=dg.float32)).detach().numpy(),
                               mt(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_lazy_load_state_dict_deepcopy_and_errors():
    m = nn.LazyLinear(4)
    clone = copy.deepcopy(m)
    assert isinstance(clone.weight, nn.UninitializedParameter)
    ref = nn.Linear(3, 4)
    m.load_state_dict(ref.state_dict())
    assert tuple(m.weight.shape) == (4, 3)
    np.testing.assert_array_equal(m(dg.ones(2, 3)).detach().numpy(),
                                  ref(dg.ones(2, 3)).detach().numpy())
    assert type(m) is nn.Linear
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input "
                                           "to LazyConv2d"):
        nn.LazyConv2d(2, 1)(dg.zeros(3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 1, groups=2)(dg.zeros(1, 3, 4))
    p = nn.UninitializedParameter()
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.requires_grad


@pytest.mark.parametrize("kw", [{"num_layers": 2, "bidirectional": True, "batch_first": True},
                                {"bias": False}])
def test_lstm_proj_size_matches_torch(kw):
    mt = torch.nn.LSTM(3, 5, proj_size=2, **kw).double()
    md = nn.LSTM(3, 5, proj_size=2, **kw, dtype=dg.float64)
    assert repr(md) == repr(mt)
    assert list(md.state_dict()) == list(mt.state_dict())
    md.load_state_dict({k: dg.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 3))
    layers = 2 * (2 if kw.get("bidirectional") else 1) if kw.get("num_layers") else 1
    h0, c0 = rng.standard_normal((layers, 4 if not kw.get("batch_first") else 2, 2)), None
    c0 = rng.standard_normal(h0.shape[:2] + (5,))
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    od, (hd, cd) = md(xd, (dg.tensor(h0), dg.tensor(c0)))
    ot, (ht, ct) = mt(xt, (torch.tensor(h0), torch.tensor(c0)))
    for a, b in ((od, ot), (hd, ht), (cd, ct)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    (od.sum() + hd.sum() + cd.sum()).backward()
    (ot.sum() + ht.sum() + ct.sum()).backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), atol=1e-12)
    td = dict(mt.named_parameters())
    for name, p in md.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), td[name].grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_proj_size_on_a_packed_sequence_matches_torch(bidirectional):
    from torch.nn.utils.rnn import pack_padded_sequence as torch_pack
    from dynagrad.nn.utils.rnn import pack_padded_sequence
    mt = torch.nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=bidirectional).double()
    md = nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=bidirectional, dtype=dg.float64)
    md.load_state_dict({k: dg.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((4, 3, 3))
    lengths = [2, 4, 3]  # unsorted: the states come back in the caller's order
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    od, (hd, cd) = md(pack_padded_sequence(xd, lengths, enforce_sorted=False))
    ot, (ht, ct) = mt(torch_pack(xt, lengths, enforce_sorted=False))
    for a, b in ((od.data, ot.data), (hd, ht), (cd, ct)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    (od.data.sum() + hd.sum() + cd.sum()).backward()
    (ot.data.sum() + ht.sum() + ct.sum()).backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), atol=1e-12)


def test_lstm_proj_size_errors_match_torch():
    for kw, msg in [({"proj_size": 5}, "proj_size has to be smaller than hidden_size"),
                    ({"proj_size": -1}, "proj_size should be a positive integer")]:
        with pytest.raises(ValueError, match=msg):
            nn.LSTM(3, 5, **kw)
        with pytest.raises(ValueError, match=msg):
            torch.nn.LSTM(3, 5, **kw)
    msg = "proj_size argument is only supported for LSTM, not RNN or GRU"
    with pytest.raises(ValueError, match=msg):
        nn.RNNBase("gru", 3, 5, proj_size=2)
    with pytest.raises(ValueError, match=msg):
        torch.nn.GRU(3, 5, proj_size=2)
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size"):
        nn.LSTM(3, 5, proj_size=2)(dg.zeros(4, 1, 3), (dg.zeros(1, 1, 5), dg.zeros(1, 1, 5)))


def test_init_sparse():
    dg.manual_seed(0)
    w = nn.init.sparse_(dg.empty(10, 40), sparsity=0.25, std=2.0)
    zeros = (w.numpy() == 0)
    np.testing.assert_array_equal(zeros.sum(0), 3)       # ceil(0.25 * 10) zeros per column
    nonzero = w.numpy()[~zeros]
    assert abs(nonzero.std() - 2.0) < 0.3 and abs(nonzero.mean()) < 0.3
    assert len({tuple(np.nonzero(c)[0]) for c in zeros.T}) > 1   # rows drawn per column
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse_(dg.empty(3), 0.5)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        torch.nn.init.sparse_(torch.empty(3), 0.5)
