"""AdaptiveLogSoftmaxWithLoss against torch 2.13 with torch's state_dict: output, loss,
log_prob, predict, input and parameter gradients in float64, unbatched form, errors; and the
zero-width Linear its narrow tail clusters can hold."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn

torch = pytest.importorskip("torch")


def _pair(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # a zero-width tail layer: "Initializing zero-element"
        mt = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7], **kw).double()
        md = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7], dtype=dg.float64, **kw)
    assert repr(md) == repr(mt)
    assert list(md.state_dict()) == list(mt.state_dict())
    md.load_state_dict({k: dg.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return md, mt


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_matches_torch(head_bias):
    md, mt = _pair(head_bias=head_bias, div_value=2.0)
    x = np.random.default_rng(0).standard_normal((6, 8))
    target = np.array([0, 3, 5, 8, 9, 4])
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    od, ld = md(xd, dg.tensor(target))
    ot, lt = mt(xt, torch.tensor(target))
    np.testing.assert_allclose(od.detach().numpy(), ot.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(ld.item(), lt.item(), rtol=1e-12)
    (ld + od[1]).backward()
    (lt + ot[1]).backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), atol=1e-12)
    tp = dict(mt.named_parameters())
    for name, p in md.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tp[name].grad.numpy(), atol=1e-12)
    lp = md.log_prob(dg.tensor(x)).detach()
    np.testing.assert_allclose(lp.numpy(), mt.log_prob(torch.tensor(x)).detach().numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(np.exp(lp.numpy()).sum(1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(md.predict(dg.tensor(x)).numpy(),
                                  mt.predict(torch.tensor(x)).numpy())


def test_adaptive_log_softmax_unbatched_zero_width_and_errors():
    md, mt = _pair()       # div_value 4: the second cluster's projection has 8 // 16 = 0 units
    assert md.tail[1][0].weight.shape == (0, 8)
    x = np.random.default_rng(1).standard_normal(8)
    od, ld = md(dg.tensor(x), dg.tensor(9))
    ot, lt = mt(torch.tensor(x), torch.tensor(9))
    assert od.ndim == 0
    np.testing.assert_allclose(od.item(), ot.item(), rtol=1e-12)
    np.testing.assert_allclose(ld.item(), lt.item(), rtol=1e-12)
    # torch's own log_prob fails on an unbatched input; ours is its batched row
    np.testing.assert_allclose(md.log_prob(dg.tensor(x)).detach().numpy(),
                               mt.log_prob(torch.tensor(x[None]))[0].detach().numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        md(dg.zeros(2, 8, dtype=dg.float64), dg.tensor([0, 10]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        md(dg.zeros(2, 8, dtype=dg.float64), dg.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        md(dg.zeros(2, 8, dtype=dg.float64), dg.zeros(2, 2, dtype=dg.int64))
    for cutoffs in ([], [4, 4], [7, 4], [0, 3], [4, 10]):
        with pytest.raises(ValueError, match="cutoffs should be a sequence"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
        with pytest.raises(ValueError, match="cutoffs should be a sequence"):
            torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)


def test_linear_with_zero_width_matches_torch():
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    w1, w2 = np.zeros((0, 4)), np.ones((3, 0))
    yd = dg.nn.functional.linear(dg.nn.functional.linear(xd, dg.tensor(w1)), dg.tensor(w2),
                                 dg.tensor([1.0, 2.0, 3.0], dtype=dg.float64))
    yt = torch.nn.functional.linear(torch.nn.functional.linear(xt, torch.tensor(w1)),
                                    torch.tensor(w2), torch.tensor([1.0, 2.0, 3.0],
                                                                   dtype=torch.float64))
    np.testing.assert_array_equal(yd.detach().numpy(), yt.detach().numpy())
    yd.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(xd.grad.numpy(), xt.grad.numpy())
