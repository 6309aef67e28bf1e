"""Dropout (statistics, scaling, eval identity, seeding, channel masks) and Embedding (parity with
PyTorch 2.13, padding_idx, max_norm, scale_grad_by_freq, init, from_pretrained, errors)."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

torch = pytest.importorskip("torch")

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"dropout", "dropout1d", "dropout2d", "dropout3d", "embedding"}

tnn = torch.nn
TF = torch.nn.functional


# --- dropout ------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_fraction_and_scaling(p):
    dg.manual_seed(0)
    y = F.dropout(dg.ones(20000), p=p).numpy()
    frac = (y == 0).mean()
    assert abs(frac - p) < 4 * np.sqrt(p * (1 - p) / y.size)
    np.testing.assert_allclose(y[y != 0], 1 / (1 - p), rtol=1e-6)
    # the expectation is preserved
    assert abs(y.mean() - 1.0) < 0.05


def test_dropout_eval_is_identity_and_p0_p1():
    x = dg.randn(5, 4)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((5, 4)))
    m = nn.Dropout(0.7).eval()
    assert m(x) is x
    assert nn.Dropout2d(0.7).eval()(dg.ones(1, 2, 3, 3)).numpy().min() == 1.0


def test_dropout_reproducible_with_manual_seed():
    dg.manual_seed(123)
    a = nn.Dropout(0.4)(dg.ones(50, 7))
    b = F.dropout2d(dg.ones(4, 6, 2, 2), 0.5)
    dg.manual_seed(123)
    np.testing.assert_array_equal(nn.Dropout(0.4)(dg.ones(50, 7)).numpy(), a.numpy())
    np.testing.assert_array_equal(F.dropout2d(dg.ones(4, 6, 2, 2), 0.5).numpy(), b.numpy())
    c = nn.Dropout(0.4)(dg.ones(50, 7))
    assert not np.array_equal(c.numpy(), a.numpy())  # the stream advances


def test_dropout_gradient_is_the_mask():
    dg.manual_seed(1)
    x = dg.randn(30, 10, requires_grad=True)
    y = F.dropout(x, 0.3)
    y.sum().backward()
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.7, rtol=1e-6)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * kept / 0.7, rtol=1e-6)


def test_dropout_inplace():
    dg.manual_seed(2)
    x = dg.ones(100)
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    assert (x.numpy() == 0).any()


def test_dropout2d_drops_whole_channels():
    dg.manual_seed(3)
    x = dg.randn(8, 16, 3, 3, requires_grad=True)
    y = nn.Dropout2d(0.5)(x)
    yv, xv = y.detach().numpy(), x.detach().numpy()
    dropped = (yv == 0).all(axis=(2, 3))
    np.testing.assert_allclose(yv[~dropped], 2 * xv[~dropped], rtol=1e-6)
    assert 0.3 < dropped.mean() < 0.7
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(
        (~dropped)[:, :, None, None] * 2.0, xv.shape))


@pytest.mark.parametrize("fn, shape", [(F.dropout1d, (6, 12, 5)), (F.dropout3d, (3, 12, 2, 2, 3))])
def test_dropout1d_3d_drop_whole_channels(fn, shape):
    dg.manual_seed(5)
    x = dg.randn(*shape, requires_grad=True)
    y = fn(x, 0.5)
    yv, xv = y.detach().numpy(), x.detach().numpy()
    spatial = tuple(range(2, len(shape)))
    dropped = (yv == 0).all(axis=spatial)
    np.testing.assert_allclose(yv[~dropped], 2 * xv[~dropped], rtol=1e-6)
    assert dropped.any() and not dropped.all()
    y.sum().backward()
    mask = (~dropped).reshape(dropped.shape + (1,) * len(spatial))
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(mask * 2.0, xv.shape))
    assert fn(x, 0.5, training=False) is x


def test_dropout2d_3d_input_warns_channelwise():
    dg.manual_seed(4)
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        y = F.dropout2d(dg.ones(4, 10, 6), 0.5).numpy()
    rows = y.reshape(40, 6)
    assert ((rows == 0).all(1) | (rows == 2).all(1)).all()


def test_dropout_errors_and_reprs():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        F.dropout(dg.ones(3), 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D input"):
        F.dropout2d(dg.ones(3, 3), 0.5)
    for args in ((), (0.3,), (0.2, True)):
        assert repr(nn.Dropout(*args)) == repr(tnn.Dropout(*args))
        assert repr(nn.Dropout2d(*args)) == repr(tnn.Dropout2d(*args))


# --- embedding ----------------------------------------------------------------------------

def _emb_pair(num=6, dim=3, **kw):
    ours, theirs = nn.Embedding(num, dim, **kw), tnn.Embedding(num, dim, **kw)
    theirs.load_state_dict({"weight": torch.tensor(ours.weight.detach().numpy())})
    return ours, theirs


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("freq", [False, True])
def test_embedding_matches_torch(padding_idx, freq):
    ours, theirs = _emb_pair(padding_idx=padding_idx, scale_grad_by_freq=freq)
    assert repr(ours) == repr(theirs)
    idx = np.array([[0, 2, 5, 2], [1, 2, 5, 3]])
    yo, yt = ours(dg.tensor(idx)), theirs(torch.tensor(idx))
    np.testing.assert_array_equal(yo.detach().numpy(), yt.detach().numpy())
    g = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    yo.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-6,
                               atol=1e-7)


def test_embedding_padding_row_gets_no_gradient_and_starts_at_zero():
    m = nn.Embedding(5, 4, padding_idx=1)
    np.testing.assert_array_equal(m.weight.detach().numpy()[1], np.zeros(4))
    m(dg.tensor([1, 1, 3, 1])).sum().backward()
    grad = m.weight.grad.numpy()
    np.testing.assert_array_equal(grad[1], np.zeros(4))
    np.testing.assert_array_equal(grad[3], np.ones(4))
    np.testing.assert_array_equal(grad[[0, 2, 4]], np.zeros((3, 4)))


def test_embedding_default_init_is_standard_normal():
    dg.manual_seed(0)
    w = nn.Embedding(400, 50).weight.detach().numpy()
    assert abs(w.mean()) < 0.02
    assert abs(w.std() - 1.0) < 0.02


def test_embedding_max_norm_renormalises_looked_up_rows():
    dg.manual_seed(1)
    ours, theirs = _emb_pair(8, 4, max_norm=1.0)
    with dg.no_grad():
        ours.weight.mul_(3.0)
    with torch.no_grad():
        theirs.weight.mul_(3.0)
    idx = np.array([0, 3, 3, 6])
    yo, yt = ours(dg.tensor(idx)), theirs(torch.tensor(idx))
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)
    norms = np.linalg.norm(ours.weight.detach().numpy(), axis=1)
    assert (norms[idx] <= 1.0 + 1e-6).all()
    assert (norms[[1, 2]] > 1.0).all()  # rows never looked up are untouched


def test_embedding_from_pretrained():
    table = dg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    m = nn.Embedding.from_pretrained(table)
    assert not m.weight.requires_grad
    np.testing.assert_array_equal(m(dg.tensor([2, 0])).numpy(), [[5.0, 6.0], [1.0, 2.0]])
    m2 = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    assert m2.weight.requires_grad and m2.padding_idx == 0
    np.testing.assert_array_equal(m2.weight.detach().numpy()[0], [1.0, 2.0])  # kept, not zeroed
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(dg.ones(3))


def test_embedding_gradcheck():
    w = dg.tensor(np.random.default_rng(2).standard_normal((5, 3)), requires_grad=True)
    idx = dg.tensor([[0, 4, 4], [2, 1, 0]])
    # padding_idx and scale_grad_by_freq deliberately alter the true gradient: they are checked
    # against PyTorch above instead
    assert dg.autograd.gradcheck(lambda w: F.embedding(idx, w), (w,))
    assert dg.autograd.gradgradcheck(lambda w: F.embedding(idx, w) * w.sum(), (w,))


def test_embedding_errors():
    w = dg.randn(3, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(dg.tensor([5]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(dg.tensor([-1]), w)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: "
                                           "Long, Int"):
        F.embedding(dg.tensor([1.0]), w)
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        F.embedding(dg.tensor([0]), w, padding_idx=-4)


def test_embedding_int32_indices_and_no_grad():
    w = dg.randn(4, 2, requires_grad=True)
    with dg.no_grad():
        y = F.embedding(dg.tensor([3, 1], dtype=dg.int32), w)
    assert y.grad_fn is None and not y.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(y.numpy(), w.detach().numpy()[[3, 1]])
