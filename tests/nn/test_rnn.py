"""RNN / LSTM / GRU layers and cells vs PyTorch 2.13: outputs, final states, every gradient."""
import math

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn
from dynagrad.ops.nn.rnn import _apart

torch = pytest.importorskip("torch")

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"}

tnn = torch.nn

RNG = np.random.default_rng(11)
NP_DT = {"float32": np.float32, "float64": np.float64}
TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}


def _pair(ours, theirs, dtype):
    """Give torch's module our (randomly initialised) weights."""
    theirs.to(getattr(torch, dtype))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


def _build(kind, dtype, **kw):
    dt = getattr(dg, dtype)
    args = (3, 4)
    if kind in ("rnn_tanh", "rnn_relu"):
        nl = kind[4:]
        return (nn.RNN(*args, nonlinearity=nl, dtype=dt, **kw),
                tnn.RNN(*args, nonlinearity=nl, **kw))
    return getattr(nn, kind.upper())(*args, dtype=dt, **kw), getattr(tnn, kind.upper())(*args, **kw)


def _arr(shape, dtype):
    return RNG.standard_normal(shape).astype(NP_DT[dtype])


def _close(a, b, dtype, what=""):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL[dtype], err_msg=what)


def _run_both(ours, theirs, x, states, dtype):
    """Forward both with the same input/states, backward a random projection of every output,
    compare outputs and all gradients (parameters, input, initial states)."""
    xo, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    so = [dg.tensor(s, requires_grad=True) for s in states]
    st = [torch.tensor(s, requires_grad=True) for s in states]
    lstm = isinstance(theirs, tnn.LSTM) or isinstance(theirs, tnn.LSTMCell)
    if isinstance(theirs, tnn.RNNBase):
        hx_o = (tuple(so) if lstm else so[0]) if states else None
        hx_t = (tuple(st) if lstm else st[0]) if states else None
        out_o, hn_o = ours(xo, hx_o)
        out_t, hn_t = theirs(xt, hx_t)
        outs_o = [out_o] + (list(hn_o) if lstm else [hn_o])
        outs_t = [out_t] + (list(hn_t) if lstm else [hn_t])
    else:
        hx_o = (tuple(so) if lstm else so[0]) if states else None
        hx_t = (tuple(st) if lstm else st[0]) if states else None
        ro, rt = ours(xo, hx_o), theirs(xt, hx_t)
        outs_o, outs_t = (list(ro), list(rt)) if lstm else ([ro], [rt])
    loss_o, loss_t = 0, 0
    for i, (a, b) in enumerate(zip(outs_o, outs_t)):
        assert tuple(a.shape) == tuple(b.shape), (i, a.shape, b.shape)
        _close(a, b, dtype, f"output {i}")
        w = _arr(tuple(b.shape), dtype)
        loss_o = loss_o + (a * dg.tensor(w)).sum()
        loss_t = loss_t + (b * torch.tensor(w)).sum()
    loss_o.backward()
    loss_t.backward()
    _close(xo.grad, xt.grad, dtype, "input grad")
    for i, (a, b) in enumerate(zip(so, st)):
        _close(a.grad, b.grad, dtype, f"state {i} grad")
    for (n, p), (n2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        _close(p.grad, q.grad, dtype, f"grad of {n}")


KINDS = ["rnn_tanh", "rnn_relu", "lstm", "gru"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, False), (1, True), (2, True)])
@pytest.mark.parametrize("with_state", [False, True])
def test_layer_matches_torch_float64(kind, num_layers, bidirectional, with_state):
    ours, theirs = _build(kind, "float64", num_layers=num_layers, bidirectional=bidirectional)
    _pair(ours, theirs, "float64")
    d = 2 if bidirectional else 1
    states = [_arr((num_layers * d, 2, 4), "float64")
              for _ in range(2 if kind == "lstm" else 1)] if with_state else []
    _run_both(ours, theirs, _arr((5, 2, 3), "float64"), states, "float64")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_layer_batch_first_float32(kind, bidirectional):
    ours, theirs = _build(kind, "float32", num_layers=2, batch_first=True,
                          bidirectional=bidirectional)
    _pair(ours, theirs, "float32")
    d = 2 if bidirectional else 1
    states = [_arr((2 * d, 3, 4), "float32") for _ in range(2 if kind == "lstm" else 1)]
    _run_both(ours, theirs, _arr((3, 6, 3), "float32"), states, "float32")


@pytest.mark.parametrize("kind", KINDS)
def test_layer_float32_at_sizes_the_state_products_thread(kind):
    # B = 13 rows (8 + 4 + 1 row tiles), hidden 96 (masked last columns of the backward
    # product), large enough that the state products split over two threads
    ours = (nn.LSTM if kind == "lstm" else nn.GRU if kind == "gru" else nn.RNN)(
        24, 96, dtype=dg.float32, **({"nonlinearity": kind[4:]} if kind.startswith("rnn") else {}))
    theirs = (tnn.LSTM if kind == "lstm" else tnn.GRU if kind == "gru" else tnn.RNN)(
        24, 96, **({"nonlinearity": kind[4:]} if kind.startswith("rnn") else {}))
    _pair(ours, theirs, "float32")
    states = [_arr((1, 13, 96), "float32") for _ in range(2 if kind == "lstm" else 1)]
    _run_both(ours, theirs, _arr((4, 13, 24), "float32"), states, "float32")


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_layer_without_bias_and_unbatched(kind):
    ours, theirs = _build(kind, "float64", bias=False, bidirectional=True)
    _pair(ours, theirs, "float64")
    assert "bias_ih_l0" not in dict(ours.named_parameters())
    states = [_arr((2, 4), "float64") for _ in range(2 if kind == "lstm" else 1)]
    _run_both(ours, theirs, _arr((5, 3), "float64"), states, "float64")   # unbatched (L, H_in)


def test_lstm_long_sequence_float32_saturating_gates():
    # large inputs push every gate into saturation, where the float32 fast exp/tanh must hold up
    ours, theirs = _build("lstm", "float32", num_layers=1)
    with dg.no_grad():
        for p in ours.parameters():
            p.mul_(8.0)
    _pair(ours, theirs, "float32")
    _run_both(ours, theirs, 5 * _arr((30, 2, 3), "float32"), [], "float32")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch(kind, dtype, bias):
    dt = getattr(dg, dtype)
    if kind.startswith("rnn"):
        ours = nn.RNNCell(3, 4, bias=bias, nonlinearity=kind[4:], dtype=dt)
        theirs = tnn.RNNCell(3, 4, bias=bias, nonlinearity=kind[4:])
    else:
        ours = getattr(nn, kind.upper() + "Cell")(3, 4, bias=bias, dtype=dt)
        theirs = getattr(tnn, kind.upper() + "Cell")(3, 4, bias=bias)
    _pair(ours, theirs, dtype)
    n_states = 2 if kind == "lstm" else 1
    _run_both(ours, theirs, _arr((2, 3), dtype), [_arr((2, 4), dtype) for _ in range(n_states)],
              dtype)
    _run_both(ours, theirs, _arr((2, 3), dtype), [], dtype)               # hx=None: zeros
    _run_both(ours, theirs, _arr((3,), dtype), [_arr((4,), dtype) for _ in range(n_states)],
              dtype)                                                       # unbatched


@pytest.mark.parametrize("fn,gates", [(F.rnn_tanh_cell, 1), (F.rnn_relu_cell, 1),
                                      (F.lstm_cell, 4), (F.gru_cell, 3)])
def test_cell_functions_gradcheck(fn, gates):
    def t(*shape):
        return dg.tensor(RNG.standard_normal(shape), dtype=dg.float64, requires_grad=True)
    x, h, c = t(2, 3), t(2, 2), t(2, 2)
    w_ih, w_hh, b_ih, b_hh = t(gates * 2, 3), t(gates * 2, 2), t(gates * 2), t(gates * 2)
    if fn is F.lstm_cell:
        def f(x, h, c, *w):
            return fn(x, (h, c), *w)
        args = (x, h, c, w_ih, w_hh, b_ih, b_hh)
    else:
        f, args = fn, (x, h, w_ih, w_hh, b_ih, b_hh)
    assert dg.autograd.gradcheck(f, args)


def test_sequence_gradcheck_bidirectional_gru():
    gru = nn.GRU(2, 3, bidirectional=True, dtype=dg.float64)
    x = dg.tensor(RNG.standard_normal((4, 2, 2)), requires_grad=True)
    h0 = dg.tensor(RNG.standard_normal((2, 2, 3)), requires_grad=True)
    assert dg.autograd.gradcheck(lambda x, h: gru(x, h)[0], (x, h0))


def test_state_dict_names_and_shapes_match_torch():
    ours = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    theirs = tnn.LSTM(3, 5, num_layers=2, bidirectional=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        assert tuple(ours.state_dict()[k].shape) == tuple(v.shape)
    assert list(nn.GRUCell(3, 5, bias=False).state_dict()) == \
        list(tnn.GRUCell(3, 5, bias=False).state_dict())


@pytest.mark.parametrize("make", [lambda: nn.LSTM(4, 50, num_layers=2),
                                  lambda: nn.GRU(4, 50), lambda: nn.RNN(4, 50),
                                  lambda: nn.GRUCell(4, 50), lambda: nn.LSTMCell(4, 50)])
def test_default_init_is_uniform_one_over_sqrt_hidden(make):
    m = make()
    bound = 1 / math.sqrt(50)
    vals = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert vals.min() >= -bound and vals.max() <= bound
    assert abs(vals.std() - bound / math.sqrt(3)) < 0.1 * bound
    assert abs(vals.mean()) < 0.05 * bound


def test_dropout_between_layers_only_in_training():
    dg.manual_seed(0)
    m = nn.LSTM(3, 4, num_layers=2, dropout=0.5, dtype=dg.float64)
    ref = nn.LSTM(3, 4, num_layers=2, dtype=dg.float64)
    ref.load_state_dict(m.state_dict())
    x = dg.tensor(_arr((5, 2, 3), "float64"))
    m.eval()
    np.testing.assert_allclose(m(x)[0].detach().numpy(), ref(x)[0].detach().numpy())
    m.train()
    assert not np.allclose(m(x)[0].detach().numpy(), ref(x)[0].detach().numpy())
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.3)


def test_repr_matches_torch():
    for kw in ({}, dict(num_layers=2, bias=False, batch_first=True, bidirectional=True)):
        assert repr(nn.LSTM(3, 4, **kw)) == repr(tnn.LSTM(3, 4, **kw))
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == \
        repr(tnn.RNNCell(3, 4, nonlinearity="relu"))
    assert repr(nn.GRUCell(3, 4, bias=False)) == repr(tnn.GRUCell(3, 4, bias=False))


def test_float32_kernel_special_values():
    # the values enter through b_ih (input and weights zero), so pre-activations are exactly x
    x = np.array([0.0, 1e-6, -1e-3, 0.29, 0.31, -2.0, 9.0, -50.0, 100.0, np.inf, -np.inf, np.nan],
                 np.float32)
    n = x.size
    zeros_in = dg.zeros(1, 1)
    h = F.rnn_tanh_cell(zeros_in, None, dg.zeros(n, 1), dg.zeros(n, n), dg.tensor(x)).numpy()[0]
    xd = x.astype(np.float64)
    np.testing.assert_allclose(h[:-1], np.tanh(xd[:-1]), rtol=2e-7, atol=1e-30)
    assert np.isnan(h[-1])
    # sigmoid through a GRU cell's z gate: with n = tanh(0) = 0, h' = z * h = z for h = 1
    b = dg.tensor(np.concatenate([np.zeros(n, np.float32), x, np.zeros(n, np.float32)]))
    out = F.gru_cell(zeros_in, dg.ones(1, n), dg.zeros(3 * n, 1), dg.zeros(3 * n, n), b).numpy()[0]
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-xd[:-1]))
    np.testing.assert_allclose(out[:-1], sig, rtol=3e-7, atol=1e-30)
    assert np.isnan(out[-1])


def test_error_messages():
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. "
                                           r"Expected 3, got 5"):
        lstm(dg.randn(2, 2, 5))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        lstm(dg.randn(2, 2, 2, 3))
    with pytest.raises(RuntimeError,
                       match=r"Expected hidden\[0\] size \(2, 2, 4\), got \[1, 2, 4\]"):
        lstm(dg.randn(5, 2, 3), (dg.zeros(1, 2, 4), dg.zeros(2, 2, 4)))
    with pytest.raises(RuntimeError,
                       match=r"Expected hidden\[1\] size \(2, 2, 4\), got \[2, 3, 4\]"):
        lstm(dg.randn(5, 2, 3), (dg.zeros(2, 2, 4), dg.zeros(2, 3, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        nn.GRU(3, 4)(dg.randn(5, 2, 3), dg.zeros(1, 3, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hidden should also be 2-D"):
        nn.RNN(3, 4)(dg.randn(5, 3), dg.zeros(1, 1, 4))
    with pytest.raises(RuntimeError, match="same dtype"):
        nn.GRU(3, 4)(dg.randn(5, 2, 3, dtype=dg.float64))
    with pytest.raises(RuntimeError, match="LSTMCell: input has inconsistent input_size: got 2 "
                                           "expected 3"):
        nn.LSTMCell(3, 4)(dg.randn(2, 2))
    with pytest.raises(RuntimeError, match=r"GRUCell: expected hx of shape \(2, 4\)"):
        nn.GRUCell(3, 4)(dg.randn(2, 3), dg.zeros(3, 4))
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D"):
        nn.RNNCell(3, 4)(dg.randn(1, 2, 3))
    with pytest.raises(RuntimeError, match=r"lstm_cell: expected w_ih \(4\*hidden_size"):
        F.lstm_cell(dg.randn(2, 3), None, dg.randn(8, 3), dg.randn(16, 4))
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(3, 4, dropout=1.5)


def test_saved_weight_modified_in_place_is_detected():
    lstm = nn.LSTM(3, 4)
    out, _ = lstm(dg.randn(2, 1, 3))
    with dg.no_grad():
        lstm.weight_hh_l0.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_step_buffers_are_cut_apart_with_the_gap_around_each():
    # the step kernels' overlap test needs a gate row of room between the arrays they touch
    gap, shapes = 8, [(2, 3), (4,), (1, 5, 2)]
    arrays = _apart(np.float32, gap, *shapes)
    assert [a.shape for a in arrays] == shapes
    assert all(a.flags.c_contiguous and a.dtype == np.float32 for a in arrays)
    base = arrays[0].base
    start = base.ctypes.data
    spans = [((a.ctypes.data - start) // 4, (a.ctypes.data - start) // 4 + a.size) for a in arrays]
    assert spans[0][0] == gap and base.size - spans[-1][1] == gap
    assert all(b[0] - a[1] == gap for a, b in zip(spans, spans[1:]))
