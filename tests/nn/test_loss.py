"""Losses and distances: values and gradients against torch for every reduction, gradcheck in
float64, the fused cross-entropy (weights, ignore_index, label smoothing, probabilities, (N, C, d)
inputs, float32 wide rows, double backward), modules, and error messages."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"cross_entropy", "nll_loss", "binary_cross_entropy",
              "binary_cross_entropy_with_logits", "mse_loss", "huber_loss", "smooth_l1_loss",
              "ctc_loss"}

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))
T = RNG.standard_normal((4, 5))
P = RNG.uniform(0.05, 0.95, (4, 5))
B = (RNG.uniform(size=(4, 5)) > 0.5) * 1.0
W5 = RNG.uniform(0.5, 2.0, 5)
SIGN = np.sign(T[:, 0])


def _lib(mod):
    return (dg, F) if mod == "dg" else (torch, TF)


def _cmp(fn, arrays, grad_idx, reductions=("none", "mean", "sum"), tol=1e-10):
    """fn(lib, functional, *tensors, reduction) in both libraries: values and gradients."""
    for red in reductions:
        outs, ins = [], []
        for mod in ("dg", "torch"):
            lib, fun = _lib(mod)
            ts = [lib.tensor(a, requires_grad=i in grad_idx) for i, a in enumerate(arrays)]
            y = fn(lib, fun, *ts, reduction=red)
            g = np.linspace(-1, 1, int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)) + 0.3
            y.backward(lib.tensor(g))
            outs.append(y.detach().numpy())
            ins.append([ts[i].grad.numpy() for i in grad_idx])
        np.testing.assert_allclose(outs[0], outs[1], rtol=tol, atol=tol, err_msg=red)
        for a, b in zip(*ins):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=red)


def _w(lib, a):
    return lib.tensor(a)


LOSSES = {
    "l1": (lambda lib, f, x, t, reduction: f.l1_loss(x, t, reduction=reduction), [X, T], [0, 1]),
    "mse": (lambda lib, f, x, t, reduction: f.mse_loss(x, t, reduction=reduction), [X, T], [0, 1]),
    "huber": (lambda lib, f, x, t, reduction: f.huber_loss(x, t, reduction=reduction, delta=0.7),
              [X, T], [0, 1]),
    "smooth_l1": (lambda lib, f, x, t, reduction: f.smooth_l1_loss(x, t, reduction=reduction,
                                                                   beta=0.5), [X, T], [0, 1]),
    "smooth_l1_beta0": (lambda lib, f, x, t, reduction: f.smooth_l1_loss(
        x, t, reduction=reduction, beta=0.0), [X, T], [0, 1]),
    "bce": (lambda lib, f, x, t, reduction: f.binary_cross_entropy(x, t, reduction=reduction),
            [P, np.clip(T, 0, 1)], [0, 1]),
    "bce_weight": (lambda lib, f, x, t, reduction: f.binary_cross_entropy(
        x, t, weight=_w(lib, W5), reduction=reduction), [P, B], [0]),
    "bce_logits": (lambda lib, f, x, t, reduction: f.binary_cross_entropy_with_logits(
        x, t, reduction=reduction), [X, np.clip(T, 0, 1)], [0, 1]),
    "bce_logits_pos_weight": (lambda lib, f, x, t, reduction: f.binary_cross_entropy_with_logits(
        x, t, weight=_w(lib, W5), pos_weight=_w(lib, W5 * 3), reduction=reduction),
        [X, np.clip(T, 0, 1)], [0, 1]),
    # torch's target gradient is NaN where target == 0 (ours is finite): compare it where t > 0
    "kl_div": (lambda lib, f, x, t, reduction: f.kl_div(x, t, reduction=reduction),
               [np.log(P), np.clip(T, 0, 2)], [0]),
    "kl_div_positive_target": (lambda lib, f, x, t, reduction: f.kl_div(x, t, reduction=reduction),
                               [np.log(P), P[::-1].copy()], [0, 1]),
    "kl_div_log_target": (lambda lib, f, x, t, reduction: f.kl_div(
        x, t, reduction=reduction, log_target=True), [np.log(P), T], [0, 1]),
    "poisson_nll": (lambda lib, f, x, t, reduction: f.poisson_nll_loss(
        x, t, full=True, reduction=reduction), [X, np.abs(T) * 3], [0, 1]),
    "poisson_nll_rate": (lambda lib, f, x, t, reduction: f.poisson_nll_loss(
        x, t, log_input=False, reduction=reduction), [P, np.abs(T) * 3], [0, 1]),
    "gaussian_nll": (lambda lib, f, x, t, v, reduction: f.gaussian_nll_loss(
        x, t, v, full=True, reduction=reduction), [X, T, P], [0, 1, 2]),
    "gaussian_nll_homoscedastic": (lambda lib, f, x, t, v, reduction: f.gaussian_nll_loss(
        x, t, v, reduction=reduction), [X, T, P[:, 0]], [0, 1, 2]),
    "margin_ranking": (lambda lib, f, a, b, y, reduction: f.margin_ranking_loss(
        a, b, y, margin=0.3, reduction=reduction), [X[:, 0], T[:, 0], SIGN], [0, 1]),
    "hinge_embedding": (lambda lib, f, x, y, reduction: f.hinge_embedding_loss(
        x, y, margin=0.8, reduction=reduction), [X, np.sign(T)], [0]),
    "soft_margin": (lambda lib, f, x, y, reduction: f.soft_margin_loss(x, y, reduction=reduction),
                    [X, np.sign(T)], [0]),
    "multilabel_soft_margin": (lambda lib, f, x, t, reduction: f.multilabel_soft_margin_loss(
        x, t, weight=_w(lib, W5), reduction=reduction), [X, B], [0, 1]),
    "multi_margin": (lambda lib, f, x, reduction: f.multi_margin_loss(
        x, lib.tensor([0, 4, 2, 2]), reduction=reduction), [X], [0]),
    "multi_margin_p2_weight": (lambda lib, f, x, reduction: f.multi_margin_loss(
        x, lib.tensor([0, 4, 2, 2]), p=2, margin=0.5, weight=_w(lib, W5), reduction=reduction),
        [X], [0]),
    "cosine_embedding": (lambda lib, f, a, b, y, reduction: f.cosine_embedding_loss(
        a, b, y, margin=0.1, reduction=reduction), [X, T, SIGN], [0, 1]),
    "triplet": (lambda lib, f, a, p, n, reduction: f.triplet_margin_loss(
        a, p, n, reduction=reduction), [X, T, P], [0, 1, 2]),
    "triplet_swap_p1": (lambda lib, f, a, p, n, reduction: f.triplet_margin_loss(
        a, p, n, p=1, swap=True, margin=2.0, reduction=reduction), [X, T, P], [0, 1, 2]),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_matches_torch(name):
    fn, arrays, grad_idx = LOSSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning
        _cmp(fn, arrays, grad_idx)


@pytest.mark.parametrize("name", [n for n in LOSSES if n != "bce"])
def test_loss_gradcheck(name):
    fn, arrays, grad_idx = LOSSES[name]
    ts = [dg.tensor(a, requires_grad=i in grad_idx) for i, a in enumerate(arrays)]

    def f(*diff):
        args = list(ts)
        for i, d in zip(grad_idx, diff):
            args[i] = d
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(dg, F, *args, reduction="sum")
    assert dg.autograd.gradcheck(f, tuple(ts[i] for i in grad_idx))


def test_bce_gradcheck_and_edges():
    x = dg.tensor(P, requires_grad=True)
    t = dg.tensor(B)
    assert dg.autograd.gradcheck(lambda a: F.binary_cross_entropy(a, t), (x,))
    # log clamped at -100 and finite gradients at exactly 0 and 1, as torch
    xs = np.array([0.0, 1.0, 0.5])
    ts = np.array([1.0, 0.0, 1.0])
    a, b = dg.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    ya = F.binary_cross_entropy(a, dg.tensor(ts), reduction="sum")
    yb = TF.binary_cross_entropy(b, torch.tensor(ts), reduction="sum")
    ya.backward()
    yb.backward()
    np.testing.assert_allclose(ya.item(), yb.item())
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


# --- cross-entropy and nll ----------------------------------------------------------------------

X3 = RNG.standard_normal((4, 5, 3))
T3 = RNG.integers(0, 5, (4, 3))
TI = np.array([1, -100, 4, 0])
CE_CASES = [(X, TI), (X3, T3), (X[0], np.array(3))]
CE_KW = [{}, {"weight": W5}, {"label_smoothing": 0.2},
         {"weight": W5, "label_smoothing": 0.3, "ignore_index": 2}, {"ignore_index": 0}]


def _ce_fn(fname, target, kw):
    def fn(lib, f, x, reduction):
        k = dict(kw)
        if "weight" in k:
            k["weight"] = lib.tensor(k["weight"])
        tgt = target if "ignore_index" not in kw else np.where(target == -100, kw["ignore_index"],
                                                               target)
        return getattr(f, fname)(x, lib.tensor(tgt), reduction=reduction, **k)
    return fn


@pytest.mark.parametrize("case", range(len(CE_CASES)), ids=["NC", "NCd", "C"])
@pytest.mark.parametrize("kw", CE_KW, ids=[str(k) for k in CE_KW])
def test_cross_entropy_and_nll_match_torch(case, kw):
    x, target = CE_CASES[case]
    _cmp(_ce_fn("cross_entropy", target, kw), [x], [0])
    if "label_smoothing" not in kw:
        _cmp(_ce_fn("nll_loss", target, kw), [x], [0])


@pytest.mark.parametrize("kw", CE_KW, ids=[str(k) for k in CE_KW])
def test_cross_entropy_gradcheck_and_double_backward(kw):
    fn = _ce_fn("cross_entropy", T3, kw)
    for red in ("none", "mean", "sum"):
        x = dg.tensor(X3, requires_grad=True)
        assert dg.autograd.gradcheck(lambda a: fn(dg, F, a, reduction=red), (x,))
        assert dg.autograd.gradgradcheck(lambda a: fn(dg, F, a, reduction=red), (x,))
    nll = _ce_fn("nll_loss", T3, {k: v for k, v in kw.items() if k != "label_smoothing"})
    assert dg.autograd.gradcheck(lambda a: nll(dg, F, a, reduction="mean"),
                                 (dg.tensor(X3, requires_grad=True),))


@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2}, {"weight": W5}])
def test_cross_entropy_probability_targets(kw):
    prob = np.abs(RNG.standard_normal((4, 5, 3)))
    prob /= prob.sum(1, keepdims=True)

    def fn(lib, f, x, t, reduction):
        k = dict(kw)
        if "weight" in k:
            k["weight"] = lib.tensor(k["weight"])
        return f.cross_entropy(x, t, reduction=reduction, **k)
    _cmp(fn, [X3, prob], [0, 1])


def test_cross_entropy_float32_wide_rows_match_torch():
    x = RNG.standard_normal((64, 1000)).astype(np.float32) * 4
    t = RNG.integers(0, 1000, 64)
    t[3] = -100
    w = RNG.uniform(0.5, 1.5, 1000).astype(np.float32)
    for kw in ({}, {"label_smoothing": 0.1, "weight": w}):
        res = []
        for lib, f in ((dg, F), (torch, TF)):
            k = {key: (lib.tensor(v) if key == "weight" else v) for key, v in kw.items()}
            a = lib.tensor(x, requires_grad=True)
            y = f.cross_entropy(a, lib.tensor(t), **k)
            y.backward()
            res.append((y.item(), a.grad.numpy()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-4, atol=1e-8)


def test_cross_entropy_all_ignored_is_nan_like_torch():
    t = np.full(4, -100)
    y = F.cross_entropy(dg.tensor(X), dg.tensor(t))
    assert np.isnan(y.item())
    assert np.isnan(TF.cross_entropy(torch.tensor(X), torch.tensor(t)).item())


def test_cross_entropy_errors_before_any_kernel():
    x = dg.zeros(3, 4)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(x, dg.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.nll_loss(x, dg.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(x, dg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="size mismatch"):
        F.cross_entropy(dg.zeros(2, 4, 3), dg.zeros(2, 2, dtype=dg.int64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4"):
        F.cross_entropy(x, dg.tensor([0, 1, 2]), weight=dg.ones(3))
    with pytest.raises(RuntimeError, match="class probabilities must have the input's shape"):
        F.cross_entropy(x, dg.zeros(3, 5))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, dg.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(x, dg.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(dg.full((3,), 0.5), dg.ones(4))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(dg.tensor([1.5]), dg.ones(1))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(dg.zeros(3), dg.zeros(3, 1))
    with pytest.raises(RuntimeError, match="not broadcastable"):
        F.mse_loss(dg.zeros(3), dg.zeros(4))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(dg.zeros(3, 4), dg.zeros(3, 4), dg.ones(2))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(dg.zeros(3), dg.zeros(3), -dg.ones(3))


def test_mse_broadcast_warns_like_torch():
    with pytest.warns(UserWarning, match="different to the input size"):
        y = F.mse_loss(dg.tensor(X), dg.tensor(T[:1]))
        want = TF.mse_loss(torch.tensor(X), torch.tensor(T[:1])).item()
    np.testing.assert_allclose(y.item(), want)


def test_legacy_reduction_flags():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        y = F.l1_loss(dg.tensor(X), dg.tensor(T), size_average=False)
    np.testing.assert_allclose(y.item(), np.abs(X - T).sum())


def test_kl_div_batchmean():
    a, b = np.log(P), P[::-1].copy()
    np.testing.assert_allclose(
        F.kl_div(dg.tensor(a), dg.tensor(b), reduction="batchmean").item(),
        TF.kl_div(torch.tensor(a), torch.tensor(b), reduction="batchmean").item())


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_negative_and_nan_targets_match_torch(log_target):
    # a negative probability target has a NaN loss (log of a negative), as in torch; the input's
    # gradient is still -target there
    x = np.array([-1.0, -2.0, -0.5, -1.0, -0.3])
    t = np.array([-0.5, 0.0, 0.3, np.nan, 2.0])
    ours_x, theirs_x = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = F.kl_div(ours_x, dg.tensor(t), reduction="none", log_target=log_target)
    theirs = TF.kl_div(theirs_x, torch.tensor(t), reduction="none", log_target=log_target)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-12)
    for reduction in ("sum", "batchmean"):
        assert np.isnan(F.kl_div(dg.tensor(x), dg.tensor(t), reduction=reduction,
                                 log_target=log_target).item())


# --- CTC ----------------------------------------------------------------------------------------

def _ctc_inputs():
    lp = np.log(RNG.dirichlet(np.ones(5), (7, 3)))
    tg = RNG.integers(1, 5, (3, 3))
    tg[1, 1] = tg[1, 0]  # a repeated label needs a blank between
    return lp, tg, np.array([7, 5, 6]), np.array([3, 2, 0])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_matches_torch(reduction):
    lp, tg, il, tl = _ctc_inputs()
    res = []
    for lib, f in ((dg, F), (torch, TF)):
        a = lib.tensor(lp, requires_grad=True)
        y = f.ctc_loss(a, lib.tensor(tg), lib.tensor(il), lib.tensor(tl), reduction=reduction)
        y.sum().backward()
        res.append((y.detach().numpy(), a.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)


def test_ctc_concatenated_targets_and_zero_infinity():
    lp, tg, il, tl = _ctc_inputs()
    cat = np.concatenate([tg[0, :3], tg[1, :2]])
    short = np.array([2, 5, 6])  # the first sequence cannot emit 3 labels in 2 steps
    for kw in ({}, {"zero_infinity": True}):
        ya = F.ctc_loss(dg.tensor(lp), dg.tensor(cat), dg.tensor(short), dg.tensor(tl),
                        reduction="none", **kw)
        yb = TF.ctc_loss(torch.tensor(lp), torch.tensor(cat), torch.tensor(short),
                         torch.tensor(tl), reduction="none", **kw)
        np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-10)


def test_ctc_gradcheck_through_log_softmax():
    _, tg, il, tl = _ctc_inputs()
    x = dg.tensor(RNG.standard_normal((7, 3, 5)), requires_grad=True)
    assert dg.autograd.gradcheck(
        lambda a: F.ctc_loss(F.log_softmax(a, 2), dg.tensor(tg), dg.tensor(il), dg.tensor(tl)),
        (x,))


# --- distances and helpers ----------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((5,), (5,)), ((2, 4, 3), (1, 4, 3))])
@pytest.mark.parametrize("kw", [{}, {"p": 1.0}, {"keepdim": True}, {"p": 3.0, "eps": 0.0}])
def test_pairwise_distance(shapes, kw):
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    res = []
    for lib, f in ((dg, F), (torch, TF)):
        x = lib.tensor(a, requires_grad=True)
        y = f.pairwise_distance(x, lib.tensor(b), **kw)
        y.sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy()))
    assert res[0][0].shape == res[1][0].shape
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)


@pytest.mark.parametrize("dim", [1, -1, 0])
def test_cosine_similarity_and_normalize(dim):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((1, 4))
    res = []
    for lib, f in ((dg, F), (torch, TF)):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = f.cosine_similarity(x, y, dim=dim)
        (out.sum() + f.normalize(x, dim=dim).pow(3).sum()).backward()
        res.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


def test_one_hot():
    t = np.array([[0, 2], [1, 1]])
    np.testing.assert_array_equal(F.one_hot(dg.tensor(t)).numpy(),
                                  TF.one_hot(torch.tensor(t)).numpy())
    assert tuple(F.one_hot(dg.tensor([1]), 5).shape) == (1, 5)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(dg.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(dg.tensor([-1]), 3)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(dg.tensor([1.0]), 3)


# --- modules ------------------------------------------------------------------------------------

def test_loss_modules_match_functional_and_repr():
    x, t = dg.tensor(X3, requires_grad=True), dg.tensor(T3)
    m = nn.CrossEntropyLoss(weight=dg.tensor(W5), ignore_index=2, label_smoothing=0.1)
    mt = torch.nn.CrossEntropyLoss(weight=torch.tensor(W5), ignore_index=2, label_smoothing=0.1)
    assert repr(m) == repr(mt) == "CrossEntropyLoss()"
    assert list(m.state_dict()) == list(mt.state_dict()) == ["weight"]
    np.testing.assert_allclose(m(x, t).item(), mt(torch.tensor(X3), torch.tensor(T3)).item())
    pairs = [
        (nn.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum"), (X, T)),
        (nn.MSELoss(), torch.nn.MSELoss(), (X, T)),
        (nn.HuberLoss(delta=0.5), torch.nn.HuberLoss(delta=0.5), (X, T)),
        (nn.SmoothL1Loss(beta=0.3), torch.nn.SmoothL1Loss(beta=0.3), (X, T)),
        (nn.BCELoss(), torch.nn.BCELoss(), (P, B)),
        (nn.BCEWithLogitsLoss(pos_weight=dg.tensor(W5)),
         torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(W5)), (X, B)),
        (nn.KLDivLoss(reduction="batchmean", log_target=True),
         torch.nn.KLDivLoss(reduction="batchmean", log_target=True), (X, T)),
        (nn.PoissonNLLLoss(), torch.nn.PoissonNLLLoss(), (X, np.abs(T))),
        (nn.GaussianNLLLoss(), torch.nn.GaussianNLLLoss(), (X, T, P)),
        (nn.MarginRankingLoss(0.2), torch.nn.MarginRankingLoss(0.2), (X[:, 0], T[:, 0], SIGN)),
        (nn.HingeEmbeddingLoss(), torch.nn.HingeEmbeddingLoss(), (X, np.sign(T))),
        (nn.SoftMarginLoss(), torch.nn.SoftMarginLoss(), (X, np.sign(T))),
        (nn.MultiLabelSoftMarginLoss(), torch.nn.MultiLabelSoftMarginLoss(), (X, B)),
        (nn.CosineEmbeddingLoss(), torch.nn.CosineEmbeddingLoss(), (X, T, SIGN)),
        (nn.TripletMarginLoss(), torch.nn.TripletMarginLoss(), (X, T, P)),
        (nn.PairwiseDistance(), torch.nn.PairwiseDistance(), (X, T)),
        (nn.CosineSimilarity(), torch.nn.CosineSimilarity(), (X, T)),
    ]
    for md, mt, arrays in pairs:
        assert repr(md) == repr(mt)
        np.testing.assert_allclose(md(*[dg.tensor(a) for a in arrays]).numpy(),
                                   mt(*[torch.tensor(a) for a in arrays]).numpy(), rtol=1e-10)
    ids = dg.tensor([0, 4, 2, 2])
    np.testing.assert_allclose(nn.MultiMarginLoss(p=2)(dg.tensor(X), ids).item(),
                               torch.nn.MultiMarginLoss(p=2)(torch.tensor(X),
                                                             torch.tensor([0, 4, 2, 2])).item())
    np.testing.assert_allclose(nn.NLLLoss()(dg.tensor(X), ids).item(),
                               torch.nn.NLLLoss()(torch.tensor(X),
                                                  torch.tensor([0, 4, 2, 2])).item())
    lp, tg, il, tl = _ctc_inputs()
    np.testing.assert_allclose(
        nn.CTCLoss()(dg.tensor(lp), dg.tensor(tg), dg.tensor(il), dg.tensor(tl)).item(),
        torch.nn.CTCLoss()(torch.tensor(lp), torch.tensor(tg), torch.tensor(il),
                           torch.tensor(tl)).item())


_DIFFERENCE_LOSSES = {
    "mse": lambda f, x, t, red: f.mse_loss(x, t, reduction=red),
    "huber": lambda f, x, t, red: f.huber_loss(x, t, reduction=red, delta=0.7),
    "smooth_l1": lambda f, x, t, red: f.smooth_l1_loss(x, t, reduction=red, beta=0.5),
}


@pytest.mark.parametrize("name", list(_DIFFERENCE_LOSSES))
def test_difference_losses_are_one_kernel_each_way_with_double_backward(name):
    # one node per loss term (its gradient kernel), differentiable twice in float64
    fn = _DIFFERENCE_LOSSES[name]
    x = dg.tensor(X, requires_grad=True)
    t = dg.tensor(T, requires_grad=True)
    term = fn(F, x, t, "none")
    assert type(term.grad_fn).__name__ == {"mse": "MseLossBackward0", "huber": "HuberLossBackward0",
                                           "smooth_l1": "SmoothL1LossBackward0"}[name]
    for red in ("none", "mean", "sum"):
        assert dg.autograd.gradgradcheck(lambda a, b: fn(F, a, b, red), (x, t))


@pytest.mark.parametrize("name", list(_DIFFERENCE_LOSSES))
def test_difference_losses_float32_threaded_broadcast_and_nan_match_torch(name):
    # a large float32 input (threaded kernels), a NaN difference, a target that broadcasts
    fn = _DIFFERENCE_LOSSES[name]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((700, 300)).astype(np.float32)
    t = rng.standard_normal((700, 300)).astype(np.float32)
    x[3, 4] = np.nan
    for target in (t, t[:1]):
        outs = []
        for lib, f in ((dg, F), (torch, TF)):
            xt = lib.tensor(x, requires_grad=True)
            tt = lib.tensor(target, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the broadcast target's warning
                loss = fn(f, xt, tt, "none")
            loss.backward(lib.tensor(np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape)))
            outs.append([v.detach().numpy() for v in (loss, xt.grad, tt.grad)])
        # the broadcast target's gradient sums 700 float32 rows, in another order than torch's
        for ours, theirs, atol in zip(*outs, (2e-6, 2e-6, 2e-6 if target is t else 1e-3)):
            np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=atol)
        assert np.isnan(outs[0][0][3, 4]) and np.isnan(outs[0][1][3, 4])
