"""PyTorch's top-level nn functions (``torch.batch_norm``, ``torch.embedding``, ``torch.kl_div``
...; ``dynagrad.nn.aten``, exported as ``dg.<name>``) against torch 2.13 with the same positional
arguments: values and input gradients in float64; int reductions; errors.

And the functions and modules that came with them: alpha / feature dropout (statistics against
the closed form, masks, gradients), rrelu (slopes, gradients, eval against torch), channel
shuffle, pdist (torch, finite differences), embedding_bag (every mode against torch, the ATen
bookkeeping outputs, errors, ``nn.EmbeddingBag``), 3-D pooling and transposed convolution modules.
"""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(7)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape)


class Fixed:
    """A float operand that takes no gradient (a target, running statistics)."""

    def __init__(self, arr):
        self.arr = np.asarray(arr, dtype=np.float64)


def _pair(args):
    """``args`` as (dynagrad, torch) lists: float arrays require grad, int arrays and ``Fixed``
    become constant tensors, lists of arrays stay lists, other values pass through."""
    ours, theirs, leaves = [], [], []
    for a in args:
        if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
            o, t, lv = _pair(a)
            ours.append(o)
            theirs.append(t)
            leaves += lv
        elif isinstance(a, Fixed):
            ours.append(dg.tensor(a.arr.copy()))
            theirs.append(torch.tensor(a.arr.copy()))
        elif isinstance(a, np.ndarray) and a.dtype.kind == "f":
            o, t = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            ours.append(o)
            theirs.append(t)
            leaves.append((o, t))
        elif isinstance(a, np.ndarray):
            ours.append(dg.tensor(a))
            theirs.append(torch.tensor(a))
        else:
            ours.append(a)
            theirs.append(a)
    return ours, theirs, leaves


def _as_list(out):
    return list(out) if isinstance(out, tuple) else [out]


def check_parity(name, *args, tol=1e-10, **kwargs):
    """``dg.<name>(*args)`` against ``torch.<name>(*args)``: every output's values and dtype,
    and the gradients of ``sum(out * weights)`` over the float outputs for every float input."""
    ours, theirs, leaves = _pair(args)
    got = _as_list(getattr(dg, name)(*ours, **kwargs))
    want = _as_list(getattr(torch, name)(*theirs, **kwargs))
    assert len(got) == len(want), name
    loss_d, loss_t = 0.0, 0.0
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), (name, g.shape, w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], (name, g.dtype, w.dtype)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=tol, atol=tol,
                                   err_msg=name)
        if w.dtype.is_floating_point and w.requires_grad:
            weights = RNG.standard_normal(tuple(w.shape))
            loss_d = loss_d + (g * dg.tensor(weights)).sum()
            loss_t = loss_t + (w * torch.tensor(weights)).sum()
    if leaves and not isinstance(loss_t, float):
        loss_d.backward()
        loss_t.backward()
        for k, (o, t) in enumerate(leaves):
            want_grad = np.zeros(t.shape) if t.grad is None else t.grad.numpy()
            got_grad = np.zeros(t.shape) if o.grad is None else o.grad.numpy()
            np.testing.assert_allclose(got_grad, want_grad, rtol=tol, atol=tol,
                                       err_msg=f"{name}: gradient of input {k}")


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


CASES = {
    "batch_norm_train": ("batch_norm", rand(4, 3, 2), rand(3), rand(3), Fixed(rand(3)),
                         Fixed(rand(3, low=0.5, high=2)), True, 0.1, 1e-5, False),
    "batch_norm_eval": ("batch_norm", rand(4, 3), None, rand(3), Fixed(rand(3)),
                        Fixed(rand(3, low=0.5, high=2)), False, 0.1, 1e-5, False),
    "instance_norm": ("instance_norm", rand(2, 3, 4), rand(3), rand(3), None, None, True, 0.1,
                      1e-5, False),
    "embedding": ("embedding", rand(5, 3), np.array([[0, 4], [2, 0]]), 0),
    "embedding_no_padding": ("embedding", rand(5, 3), np.array([1, 1, 3]), -1, True),
    "cosine_similarity": ("cosine_similarity", rand(3, 4), rand(3, 4), 1),
    "pairwise_distance": ("pairwise_distance", rand(3, 4), rand(3, 4), 3.0),
    "pixel_shuffle": ("pixel_shuffle", rand(1, 8, 2, 3), 2),
    "pixel_unshuffle": ("pixel_unshuffle", rand(1, 2, 4, 6), 2),
    "prelu": ("prelu", rand(2, 3, 4), rand(3)),
    "bilinear": ("bilinear", rand(3, 2), rand(3, 4), rand(5, 2, 4), rand(5)),
    "kl_div": ("kl_div", rand(3, 4), Fixed(rand(3, 4, low=0.1, high=1)), 1),
    "kl_div_sum": ("kl_div", rand(3, 4), Fixed(rand(3, 4, low=0.1, high=1)), 2),
    "bce_with_logits": ("binary_cross_entropy_with_logits", rand(3, 4),
                        Fixed(rand(3, 4, low=0, high=1)), Fixed(rand(4, low=0.5, high=2)),
                        Fixed(rand(4, low=0.5, high=2)), 2),
    "cosine_embedding_loss": ("cosine_embedding_loss", rand(4, 3), rand(4, 3),
                              np.array([1, -1, 1, -1]), 0.1, 0),
    "hinge_embedding_loss": ("hinge_embedding_loss", rand(3, 4), Fixed(np.sign(rand(3, 4))),
                             0.5, 2),
    "margin_ranking_loss": ("margin_ranking_loss", rand(5), rand(5), Fixed(np.sign(rand(5))),
                            0.2, 1),
    "poisson_nll_loss": ("poisson_nll_loss", rand(3, 4), Fixed(rand(3, 4, low=0, high=3)),
                         True, True, 1e-8, 1),
    "poisson_nll_loss_rate": ("poisson_nll_loss", rand(3, 4, low=0.5, high=2),
                              Fixed(rand(3, 4, low=0, high=3)), False, False, 1e-6, 0),
    "triplet_margin_loss": ("triplet_margin_loss", rand(4, 3), rand(4, 3), rand(4, 3), 0.5, 1.0,
                            1e-6, True, 2),
    "ctc_loss": ("ctc_loss", _log_softmax(rand(6, 2, 4)), np.array([[1, 2, 1], [3, 1, 0]]),
                 np.array([6, 5]), np.array([3, 2]), 0, 1, False),
    "constant_pad_nd": ("constant_pad_nd", rand(2, 3, 4), [1, 2, -1, 1], 1.5),
    "conv1d": ("convolution", rand(2, 2, 7), rand(3, 2, 3), rand(3), [2], [1], [1], False, [0],
               1),
    "conv2d_groups": ("convolution", rand(1, 4, 5, 4), rand(4, 2, 2, 3), None, [1, 2], [1, 0],
                      [2, 1], False, [0], 2),
    "conv_transpose2d": ("convolution", rand(1, 2, 3, 3), rand(2, 3, 2, 2), rand(3), [2], [1],
                         [1], True, [1], 1),
    "conv_transpose3d": ("conv_transpose3d", rand(1, 2, 2, 2, 2), rand(2, 2, 2, 1, 2), rand(2),
                         (2, 1, 1), 0, (1, 0, 0)),
    "max_pool1d_with_indices": ("max_pool1d_with_indices", rand(2, 3, 7), [3], [2], [1]),
    "max_pool3d": ("max_pool3d", rand(1, 2, 4, 3, 5), [2], [], [1]),
    "pdist": ("pdist", rand(4, 3), 2.0),
    "channel_shuffle": ("channel_shuffle", rand(2, 6, 2), 3),
    "rrelu_eval": ("rrelu", rand(3, 4), 0.1, 0.3, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_top_level_matches_torch(case):
    name, *args = CASES[case]
    check_parity(name, *args)


def test_kl_div_log_target_keyword():
    check_parity("kl_div", rand(3, 4), rand(3, 4), 0, log_target=True)


def test_embedding_bag_aten_outputs_match_torch():
    w = rand(6, 3)
    idx, off = np.array([1, 2, 4, 5, 4, 3, 2, 0]), np.array([0, 2, 2, 5])
    for mode, padding_idx, psw in ((0, None, None), (1, None, None), (2, None, None),
                                   (1, 2, None), (2, 4, None), (0, 2, None),
                                   (0, None, rand(8))):
        args = [w, idx, off, False, mode, False, psw, False, padding_idx]
        check_parity("embedding_bag", *args)
    # float32: torch's sum path leaves offset2bag empty unless there is a padding_idx
    for padding_idx in (None, 2):
        got = dg.embedding_bag(dg.tensor(w, dtype=dg.float32), dg.tensor(idx), dg.tensor(off),
                               False, 0, False, None, False, padding_idx)
        want = torch.embedding_bag(torch.tensor(w, dtype=torch.float32), torch.tensor(idx),
                                   torch.tensor(off), False, 0, False, None, False, padding_idx)
        for g, t in zip(got[1:], want[1:]):
            np.testing.assert_array_equal(g.numpy(), t.numpy())


def test_same_signature_names_are_the_functional_objects():
    for name in ("cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle",
                 "bilinear", "channel_shuffle", "pdist"):
        assert getattr(dg, name) is getattr(F, name), name
    assert dg.prelu is F.prelu and dg.conv_transpose3d is F.conv_transpose3d
    assert dg.Tensor.prelu is dg.prelu


def test_tensor_prelu_method():
    x, w = rand(2, 3), rand(3)
    got = dg.tensor(x).prelu(dg.tensor(w))
    np.testing.assert_allclose(got.numpy(), torch.tensor(x).prelu(torch.tensor(w)).numpy())


def test_int_reductions():
    x, t = rand(3, 4), rand(3, 4)
    for r, want in ((0, (3, 4)), (1, ()), (2, ()), (3, (3, 4)), (-1, (3, 4))):
        assert tuple(dg.kl_div(dg.tensor(x), dg.tensor(t), r).shape) == want
        assert tuple(torch.kl_div(torch.tensor(x), torch.tensor(t), r).shape) == want
    with pytest.raises(TypeError, match="reduction"):
        dg.kl_div(dg.tensor(x), dg.tensor(t), "mean")
    with pytest.raises(TypeError):
        torch.kl_div(torch.tensor(x), torch.tensor(t), "mean")


def test_top_level_errors_match_torch():
    x = dg.randn(2, 3, 5)
    with pytest.raises(RuntimeError, match="expected stride to be a single integer value or a "
                                           r"list of 1 values"):
        dg.convolution(x, dg.randn(2, 3, 2), None, [1, 1], [0], [1], False, [0], 1)
    with pytest.raises(RuntimeError, match="Expected 3-dimensional input for 3-dimensional "
                                           r"weight \[2, 3, 2\]"):
        dg.convolution(dg.randn(3, 5), dg.randn(2, 3, 2), None, [1], [0], [1], False, [0], 1)
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
        dg.alpha_dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        dg.feature_dropout(dg.ones(3), 0.5, True)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        dg.rrelu(x, 0.5, 0.2, True)
    with pytest.raises(RuntimeError, match="parameter numbers"):
        dg.prelu(dg.randn(2, 3), dg.randn(2))


# --- dropout variants -----------------------------------------------------------------------------

ALPHA = 1.7580993408473766  # -SELU's negative saturation


def _alpha_affine(p):
    a = 1.0 / np.sqrt((ALPHA ** 2 * p + 1) * (1 - p))
    return a, ALPHA * a * p


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_values_statistics_and_gradient(p):
    dg.manual_seed(0)
    x = dg.tensor(RNG.standard_normal(20000), requires_grad=True)
    y = F.alpha_dropout(x, p, training=True)
    a, b = _alpha_affine(p)
    xv, yv = x.detach().numpy(), y.detach().numpy()
    kept = np.isclose(yv, a * xv + b, rtol=0, atol=1e-12)
    dropped = np.isclose(yv, -ALPHA * a + b, rtol=0, atol=1e-12)
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 4 * np.sqrt(p * (1 - p) / yv.size)
    # zero mean and unit variance are preserved (the point of alpha dropout)
    assert abs(yv.mean()) < 0.05 and abs(yv.std() - 1.0) < 0.05
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0), rtol=1e-12, atol=0)


def test_feature_dropouts_drop_whole_channels():
    dg.manual_seed(1)
    y = dg.feature_dropout(dg.ones(8, 16, 3), 0.5, True).numpy()
    per_channel = y.reshape(8, 16, 3)
    assert ((per_channel == 0).all(2) | (per_channel == 2.0).all(2)).all()
    a, b = _alpha_affine(0.3)
    z = F.feature_alpha_dropout(dg.zeros(4, 10, 2, 2), 0.3, training=True).numpy()
    levels = z.reshape(4, 10, 4)
    assert (np.isclose(levels, b).all(2) | np.isclose(levels, -ALPHA * a + b).all(2)).all()
    assert torch.feature_alpha_dropout(torch.zeros(2, 3, 4), 0.3, True).shape == (2, 3, 4)


def test_alpha_dropout_identity_p1_inplace_and_modules():
    x = dg.randn(4, 5)
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False, as in torch
    assert dg.alpha_dropout(x, 0.5, False) is x
    assert dg.feature_alpha_dropout(x, 0.0, True) is x
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, True).numpy(), np.zeros((4, 5)))
    np.testing.assert_array_equal(
        TF.alpha_dropout(torch.ones(4, 5), 1.0, True).numpy(), np.zeros((4, 5)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.alpha_dropout(x, -0.1, True)
    dg.manual_seed(3)
    ref = F.alpha_dropout(dg.ones(3, 4), 0.4, True)
    dg.manual_seed(3)
    z = dg.ones(3, 4)
    assert F.alpha_dropout(z, 0.4, True, inplace=True) is z
    np.testing.assert_array_equal(z.numpy(), ref.numpy())
    m = nn.AlphaDropout(0.2)
    assert repr(m) == repr(torch.nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"
    assert m.eval()(x) is x
    fm = nn.FeatureAlphaDropout(0.3, True)
    assert repr(fm) == repr(torch.nn.FeatureAlphaDropout(0.3, True))
    assert fm.train()(dg.ones(2, 3, 2)).shape == (2, 3, 2)


# --- rrelu ----------------------------------------------------------------------------------------

def test_rrelu_training_slopes_and_gradient():
    dg.manual_seed(0)
    xv = RNG.standard_normal(4000)
    xv[:3] = [0.0, -1.0, 2.0]
    x = dg.tensor(xv, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    yv, g = y.detach().numpy(), x.grad.numpy()
    pos = xv > 0
    np.testing.assert_array_equal(yv[pos], xv[pos])
    np.testing.assert_array_equal(g[pos], 1.0)
    neg = xv < 0
    slopes = yv[neg] / xv[neg]
    assert (slopes >= 0.1).all() and (slopes < 0.3).all()
    assert abs(slopes.mean() - 0.2) < 0.01 and slopes.std() > 0.05
    np.testing.assert_allclose(g[neg], slopes, rtol=1e-12)
    assert 0.1 <= g[0] < 0.3  # at x == 0 the gradient is the drawn slope, as in torch


def test_rrelu_eval_inplace_module_and_errors():
    x = rand(3, 4)
    check_parity("rrelu", x, 0.2, 0.4, False)
    want = TF.rrelu(torch.tensor(x), 0.2, 0.4, False).numpy()
    np.testing.assert_allclose(F.rrelu(dg.tensor(x), 0.2, 0.4).numpy(), want, rtol=1e-15)
    z = dg.tensor(x)
    assert F.rrelu_(z, 0.2, 0.4) is z
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-15)
    z = dg.tensor(x)
    assert dg.rrelu_(z, 0.2, 0.4) is z
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-15)
    g = dg.Generator().manual_seed(5)
    a = dg.rrelu(dg.tensor(x), training=True, generator=g)
    b = dg.rrelu(dg.tensor(x), training=True, generator=dg.Generator().manual_seed(5))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    m = nn.RReLU(0.1, 0.3, inplace=True)
    assert repr(m) == repr(torch.nn.RReLU(0.1, 0.3, inplace=True))
    assert repr(nn.RReLU()) == repr(torch.nn.RReLU())
    np.testing.assert_allclose(nn.RReLU(0.1, 0.3).eval()(dg.tensor([-1.0, 2.0])).numpy(),
                               [-0.2, 2.0])
    with pytest.raises(RuntimeError, match="Lower bound"):
        F.rrelu(dg.tensor(x), 0.5, 0.2)
    with pytest.raises(NotImplementedError, match="not implemented for"):
        F.rrelu(dg.tensor([1, 2]))


# --- channel shuffle, pdist -----------------------------------------------------------------------

def test_channel_shuffle_values_errors_and_module():
    x = np.arange(24.0).reshape(1, 6, 2, 2)
    want = torch.channel_shuffle(torch.tensor(x), 2).numpy()
    np.testing.assert_array_equal(F.channel_shuffle(dg.tensor(x), 2).numpy(), want)
    np.testing.assert_array_equal(nn.ChannelShuffle(2)(dg.tensor(x)).numpy(), want)
    assert repr(nn.ChannelShuffle(3)) == repr(torch.nn.ChannelShuffle(3))
    for shape, groups, msg in (((2, 6, 2), 4, "Number of channels must be divisible by groups"),
                               ((2, 6), 2, r"expects input with > 2 dims"),
                               ((2, 6, 1), 0, "must be positive")):
        with pytest.raises(RuntimeError, match=msg):
            F.channel_shuffle(dg.zeros(*shape), groups)
        with pytest.raises(RuntimeError, match=msg):
            torch.channel_shuffle(torch.zeros(*shape), groups)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf"), 0.5])
def test_pdist_matches_torch_with_equal_rows(p):
    x = rand(5, 3)
    x[3] = x[1]  # a zero distance: zero gradient, not NaN
    check_parity("pdist", x, p)


def test_pdist_gradcheck_and_errors():
    x = dg.tensor(rand(4, 3), requires_grad=True)
    assert dg.autograd.gradcheck(lambda t: F.pdist(t, 1.5), (x,))
    assert tuple(F.pdist(dg.ones(1, 3)).shape) == (0,)
    for arg, p, msg in ((dg.ones(3, 4, 2), 2.0, "only supports 2D tensors, got: 3D"),
                        (dg.ones(3, 4), -1.0, "non-negative p values"),
                        (dg.ones(3, 4, dtype=dg.int64), 2.0, "floating-point dtypes")):
        with pytest.raises(RuntimeError, match=msg):
            F.pdist(arg, p)


# --- embedding_bag --------------------------------------------------------------------------------

BAG_CASES = [
    {"mode": "sum"}, {"mode": "mean"}, {"mode": "max"},
    {"mode": "mean", "padding_idx": 2}, {"mode": "max", "padding_idx": -2},
    {"mode": "sum", "per_sample_weights": True}, {"mode": "sum", "include_last_offset": True},
]


@pytest.mark.parametrize("kw", BAG_CASES, ids=lambda kw: "-".join(f"{k}" for k in kw.values()))
def test_embedding_bag_matches_torch(kw):
    w = rand(6, 3)
    idx, off = np.array([1, 2, 4, 5, 4, 3, 2, 0]), np.array([0, 2, 2, 5])
    if kw.get("include_last_offset"):
        off = np.array([0, 2, 2, 5, 8])
    psw = rand(8) if kw.get("per_sample_weights") else None
    wd, wt = dg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    extra_d, extra_t = dict(kw), dict(kw)
    if psw is not None:
        extra_d["per_sample_weights"] = pd = dg.tensor(psw, requires_grad=True)
        extra_t["per_sample_weights"] = pt = torch.tensor(psw, requires_grad=True)
    yd = F.embedding_bag(dg.tensor(idx), wd, dg.tensor(off), **extra_d)
    yt = TF.embedding_bag(torch.tensor(idx), wt, torch.tensor(off), **extra_t)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = RNG.standard_normal(tuple(yt.shape))
    yd.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(wd.grad.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)
    if psw is not None:
        np.testing.assert_allclose(pd.grad.numpy(), pt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_embedding_bag_scale_grad_by_freq():
    # each row's gradient divided by how often the row occurs in the mini-batch (the rule of
    # F.embedding; torch 2.13's embedding_bag divides some rows by another row's count instead)
    w = dg.zeros(6, 2, requires_grad=True)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 0])
    F.embedding_bag(dg.tensor(idx), w, dg.tensor([0, 2, 2, 5]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    counts = np.bincount(idx, minlength=6)
    np.testing.assert_allclose(w.grad.numpy(), np.ones((6, 2)) * (counts > 0)[:, None])


def test_embedding_bag_2d_input_max_norm_and_gradcheck():
    w = rand(5, 3) * 3
    idx = np.array([[0, 1, 4], [2, 2, 3]])
    for mode in ("sum", "mean", "max"):
        got = F.embedding_bag(dg.tensor(idx), dg.tensor(w), mode=mode)
        want = TF.embedding_bag(torch.tensor(idx), torch.tensor(w), mode=mode)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    wd, wt = dg.tensor(w), torch.tensor(w)
    got = F.embedding_bag(dg.tensor(idx), wd, max_norm=1.0)
    want = TF.embedding_bag(torch.tensor(idx), wt, max_norm=1.0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(wd.numpy(), wt.numpy(), rtol=1e-6)  # renormalised in place
    weight = dg.tensor(rand(5, 3), requires_grad=True)
    psw = dg.tensor(rand(6), requires_grad=True)
    flat, off = dg.tensor(idx.reshape(-1)), dg.tensor([0, 4])
    assert dg.autograd.gradcheck(
        lambda w_, p_: F.embedding_bag(flat, w_, off, mode="sum", per_sample_weights=p_),
        (weight, psw))
    assert dg.autograd.gradcheck(lambda w_: F.embedding_bag(flat, w_, off, mode="mean"),
                                 (weight,))


def test_embedding_bag_errors_match_torch():
    w, idx, off = dg.randn(6, 3), dg.tensor([1, 2, 4, 5]), dg.tensor([0, 2])
    cases = [
        ((dg.tensor([[1, 2]]), w, off), {}, ValueError, "if input is 2D, then offsets has to"),
        ((idx, w), {}, ValueError, "offsets has to be a 1D Tensor"),
        ((idx, w, off), {"mode": "max", "per_sample_weights": dg.ones(4)}, NotImplementedError,
         "per_sample_weights is only supported for mode='sum'"),
        ((idx, w, dg.tensor([1, 2])), {}, RuntimeError, "offsets\\[0\\] has to be 0"),
        ((idx, w, dg.tensor([0, 9])), {}, RuntimeError, "offsets\\[-1\\] can not be greater"),
        ((idx.float(), w, off), {}, RuntimeError, "Long, Int"),
        ((idx, w, off), {"mode": "bad"}, ValueError, "mode has to be one of sum, mean or max"),
        ((dg.tensor([7]), w, dg.tensor([0])), {}, RuntimeError, "not in the valid range"),
    ]
    for args, kw, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            F.embedding_bag(*args, **kw)
        t_args = [torch.tensor(a.numpy()) if isinstance(a, dg.Tensor) else a for a in args]
        t_kw = {k: torch.tensor(v.numpy()) if isinstance(v, dg.Tensor) else v
                for k, v in kw.items()}
        with pytest.raises(exc, match=msg):
            TF.embedding_bag(*t_args, **t_kw)


def test_embedding_bag_module():
    dg.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, mode="max", padding_idx=1)
    assert repr(bag) == repr(torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=1))
    assert bag.weight.shape == (10, 3) and (bag.weight[1] == 0).all().item()
    tbag = torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=1)
    with torch.no_grad():
        tbag.weight.copy_(torch.tensor(bag.weight.detach().numpy()))
    idx, off = [1, 2, 4, 5, 4, 1, 9], [0, 2, 5]
    got = bag(dg.tensor(idx), dg.tensor(off))
    want = tbag(torch.tensor(idx), torch.tensor(off))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(bag.weight.grad.numpy(), tbag.weight.grad.numpy(), rtol=1e-6)
    pre = nn.EmbeddingBag.from_pretrained(dg.tensor([[1.0, 2.0], [3.0, 4.0]]), mode="sum")
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(pre(dg.tensor([[0, 1]])).numpy(), [[4.0, 6.0]])
    with pytest.raises(ValueError, match="mode has to be one of"):
        nn.EmbeddingBag(3, 2, mode="median")


# --- 3-D pooling and transposed convolution modules -----------------------------------------------

POOL3D = [
    ("max", {"kernel_size": 2}),
    ("max", {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": (1, 0, 1)}),
    ("max", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("max", {"kernel_size": 2, "stride": 1, "dilation": (2, 1, 2)}),
    ("avg", {"kernel_size": 2}),
    ("avg", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg", {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ("avg", {"kernel_size": (2, 3, 2), "divisor_override": 5}),
]


@pytest.mark.parametrize("kind,kw", POOL3D)
def test_pool3d_modules_match_torch(kind, kw):
    x = rand(2, 2, 5, 6, 5)
    cls = "MaxPool3d" if kind == "max" else "AvgPool3d"
    extra = {"return_indices": True} if kind == "max" else {}
    ours, theirs = getattr(nn, cls)(**kw, **extra), getattr(torch.nn, cls)(**kw, **extra)
    assert repr(ours) == repr(theirs)
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = _as_list(ours(xd)), _as_list(theirs(xt))
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), rtol=1e-12)
    if kind == "max":
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    g = RNG.standard_normal(tuple(want[0].shape))
    got[0].backward(dg.tensor(g))
    want[0].backward(torch.tensor(g))
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_pool3d_unbatched_double_backward_and_errors():
    x = dg.tensor(rand(2, 3, 4, 3), requires_grad=True)
    assert dg.autograd.gradgradcheck(lambda t: F.avg_pool3d(t, 2, 1), (x,))
    out, idx = F.max_pool3d(x, 2, return_indices=True)
    tout, tidx = TF.max_pool3d(torch.tensor(x.detach().numpy()), 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    np.testing.assert_allclose(out.detach().numpy(), tout.numpy())
    with pytest.raises(RuntimeError, match="Expected 4D or 5D"):
        F.max_pool3d(dg.ones(2, 3, 3), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.avg_pool3d(dg.ones(1, 1, 4, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool3d(dg.ones(1, 1, 1, 4, 4), 2)


def test_conv_transpose3d_module_matches_torch():
    dg.manual_seed(0)
    ours = nn.ConvTranspose3d(4, 2, (2, 3, 2), stride=2, padding=(0, 1, 0), groups=2)
    theirs = torch.nn.ConvTranspose3d(4, 2, (2, 3, 2), stride=2, padding=(0, 1, 0), groups=2)
    assert repr(ours) == repr(theirs)
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    x = rand(1, 4, 2, 3, 2).astype(np.float32)
    got = ours(dg.tensor(x), output_size=(5, 6, 5))
    want = theirs(torch.tensor(x), output_size=(5, 6, 5))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


# --- torch.lstm / gru / rnn_tanh / rnn_relu -------------------------------------------------------

RNN_CASES = [
    ("lstm", nn.LSTM, torch.nn.LSTM, {"num_layers": 2, "bidirectional": True}),
    ("gru", nn.GRU, torch.nn.GRU, {"bias": False, "batch_first": True}),
    ("rnn_tanh", nn.RNN, torch.nn.RNN, {"num_layers": 2}),
    ("rnn_relu", nn.RNN, torch.nn.RNN, {"nonlinearity": "relu", "bidirectional": True}),
]


@pytest.mark.parametrize("name,ours_cls,torch_cls,kw", RNN_CASES, ids=[c[0] for c in RNN_CASES])
def test_recurrent_aten_forms_match_torch(name, ours_cls, torch_cls, kw):
    dg.manual_seed(0)
    module = ours_cls(3, 4, dtype=dg.float64, **kw)
    params = [p.detach().numpy() for p in module._flat_weights]
    layers = module.num_layers * (2 if module.bidirectional else 1)
    batch_first = kw.get("batch_first", False)
    x = rand(2, 5, 3) if batch_first else rand(5, 2, 3)
    h0 = rand(layers, 2, 4)
    hx = [h0, rand(layers, 2, 4)] if name == "lstm" else h0
    flags = (module.bias, module.num_layers, 0.0, False, module.bidirectional, batch_first)
    check_parity(name, x, hx, params, *flags)
    # the same numbers as the module (whose weights these are) and as torch's module
    got = getattr(dg, name)(dg.tensor(x), [dg.tensor(h) for h in hx] if name == "lstm"
                            else dg.tensor(hx), module._flat_weights, *flags)
    state = (tuple(dg.tensor(h) for h in hx) if name == "lstm" else dg.tensor(hx))
    out, h_n = module(dg.tensor(x), state)
    np.testing.assert_allclose(got[0].detach().numpy(), out.detach().numpy(), rtol=1e-12)
    h_n = h_n[0] if name == "lstm" else h_n
    np.testing.assert_allclose(got[1].detach().numpy(), h_n.detach().numpy(), rtol=1e-12)
    theirs = torch_cls(3, 4, dtype=torch.float64, **kw)
    with torch.no_grad():
        for p, v in zip(theirs._flat_weights, params):
            p.copy_(torch.tensor(v))
    t_state = (tuple(torch.tensor(h) for h in hx) if name == "lstm" else torch.tensor(hx))
    np.testing.assert_allclose(got[0].detach().numpy(),
                               theirs(torch.tensor(x), t_state)[0].detach().numpy(), rtol=1e-10)


def test_recurrent_aten_errors():
    module = nn.GRU(3, 4, dtype=dg.float64)
    x, h = dg.randn(5, 2, 3, dtype=dg.float64), dg.zeros(1, 2, 4, dtype=dg.float64)
    with pytest.raises(RuntimeError, match="incorrect number of RNN parameters"):
        dg.gru(x, h, module._flat_weights[:1], True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        dg.gru(x, dg.zeros(1, 3, 4, dtype=dg.float64), module._flat_weights, True, 1, 0.0,
               False, False, False)
    with pytest.raises(RuntimeError, match="3-D input"):
        dg.gru(x[:, 0], h[:, 0], module._flat_weights, True, 1, 0.0, False, False, False)
    # dropout between layers in training only: eval runs are deterministic
    deep = nn.LSTM(3, 4, num_layers=2, dtype=dg.float64)
    hx = [dg.zeros(2, 2, 4, dtype=dg.float64)] * 2
    a = dg.lstm(x, hx, deep._flat_weights, True, 2, 0.5, False, False, False)[0]
    b = dg.lstm(x, hx, deep._flat_weights, True, 2, 0.5, False, False, False)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    dg.manual_seed(1)
    c = dg.lstm(x, hx, deep._flat_weights, True, 2, 0.5, True, False, False)[0]
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
