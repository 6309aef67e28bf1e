"""CTC loss and L-BFGS on CUDA, computed on the device.

* CTC: CUDA tensors take ``_ctc_composite`` (the alpha recursion written with dynagrad ops;
  autograd gives the gradient). Checked three ways: the composite on CPU tensors in float64 (inside
  ``ops.nn.composed_on_cpu``) against the fused float64 NumPy forward-backward to 1e-10; losses
  against a brute-force sum over every alignment; and on the CUDA device in float32 against the
  CPU, losses and gradients.
* L-BFGS: CUDA parameters keep the flat vectors and the history on the device; the steps, the
  state and the number of evaluations match the CPU's, and only scalars are read back.
"""
import contextlib
import copy
import itertools
import math

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
import dynagrad.ops.nn.loss as loss_module
from dynagrad import optim
from dynagrad.kernels.cuda.device_array import DeviceArray
from dynagrad.ops.nn import composed_on_cpu
from dynagrad.tensor import Tensor

RNG = np.random.default_rng(0)


def log_probs(T, N, C, dtype=np.float64):
    return np.log(RNG.dirichlet(np.ones(C), size=(T, N))).astype(dtype)


def ctc_run(lp, targets, in_len, tg_len, device=None, composite=False, through_softmax=False,
            **kw):
    """Loss and the gradient of a weighted sum of it with respect to ``lp`` (the leaf)."""
    x = dg.tensor(lp, device=device, requires_grad=True)
    with composed_on_cpu() if composite else contextlib.nullcontext():
        inp = x.log_softmax(-1) if through_softmax else x
        loss = F.ctc_loss(inp, targets, in_len, tg_len, **kw)
        weights = np.arange(1, loss.numel() + 1, dtype=lp.dtype).reshape(tuple(loss.shape))
        (loss * dg.tensor(weights, device=device)).sum().backward()
    return loss.detach().cpu().numpy(), x.grad.cpu().numpy()


# (targets, input_lengths, target_lengths, kwargs) over log_probs (T=5, N=3, C=4)
CTC_CASES = {
    "none": ([[1, 2, 2], [3, 0, 0], [1, 1, 3]], [5, 4, 5], [3, 1, 2], dict(reduction="none")),
    "sum": ([[1, 2, 2], [3, 0, 0], [1, 1, 3]], [5, 4, 5], [3, 1, 2], dict(reduction="sum")),
    "mean_empty_target": ([[1, 2], [0, 0], [3, 3]], [5, 3, 5], [2, 0, 2], dict()),
    "blank_2": ([[1, 3, 3], [3, 0, 0], [0, 1, 0]], [5, 4, 5], [2, 1, 3],
                dict(blank=2, reduction="none")),
    "concatenated": ([1, 2, 3, 1, 1], [5, 5, 4], [2, 1, 2], dict(reduction="none")),
    "impossible": ([[1, 1, 1], [2, 0, 0], [3, 0, 0]], [5, 1, 5], [3, 1, 1],
                   dict(reduction="none")),
    "zero_infinity": ([[1, 1, 1], [2, 0, 0], [3, 0, 0]], [5, 1, 5], [3, 1, 1],
                      dict(reduction="mean", zero_infinity=True)),
}
LP = log_probs(5, 3, 4)


@pytest.mark.parametrize("name", sorted(CTC_CASES))
def test_ctc_composite_matches_numpy_float64(name):
    tg, il, tl, kw = CTC_CASES[name]
    want = ctc_run(LP, tg, il, tl, **kw)
    got = ctc_run(LP, tg, il, tl, composite=True, **kw)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-10)
    assert np.isfinite(got[1]).all()  # impossible alignments give a clean zero, not NaN


def brute_force_nll(lp: np.ndarray, target: list, blank: int) -> float:
    """-log of the summed probability of every frame labelling that collapses to ``target``."""
    T, C = lp.shape
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total > 0 else math.inf


def test_ctc_cuda_matches_brute_force(cuda):
    lp = log_probs(4, 3, 3, np.float32)
    targets, in_len, tg_len = [[1, 1], [2, 1], [2, 0]], [4, 3, 4], [2, 2, 1]
    got = F.ctc_loss(dg.tensor(lp, device=cuda), targets, in_len, tg_len, reduction="none")
    assert got.is_cuda
    want = [brute_force_nll(lp[:in_len[n], n].astype(np.float64), targets[n][:tg_len[n]], 0)
            for n in range(3)]
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("name", ["none", "mean_empty_target", "concatenated", "zero_infinity"])
def test_ctc_cuda_matches_cpu(cuda, name, monkeypatch):
    tg, il, tl, kw = CTC_CASES[name]
    lp = LP.astype(np.float32)
    want = ctc_run(lp, tg, il, tl, **kw)

    def refuse(*args, **kwargs):
        raise AssertionError("the CUDA ctc_loss ran the host forward-backward")
    monkeypatch.setattr(loss_module, "_ctc_numpy", refuse)
    got = ctc_run(lp, tg, il, tl, device=cuda, **kw)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-5)


def test_ctc_cuda_unbatched_through_log_softmax(cuda):
    lp = log_probs(4, 1, 3, np.float32)[:, 0]  # (T, C), the unbatched form
    want = ctc_run(lp, [1, 2], [4], [2], through_softmax=True, reduction="sum")
    got = ctc_run(lp, [1, 2], [4], [2], device=cuda, through_softmax=True, reduction="sum")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-5)


# --- L-BFGS --------------------------------------------------------------------------------------

W0 = RNG.standard_normal((2, 3)).astype(np.float32)
B0 = RNG.standard_normal(2).astype(np.float32)
X = RNG.standard_normal((5, 3)).astype(np.float32)
Y = RNG.standard_normal((5, 2)).astype(np.float32)


def closure_for(opt, device):
    """A regularised least-squares fit of the optimizer's (w, b)."""
    w, b = opt._params
    x, y = dg.tensor(X, device=device), dg.tensor(Y, device=device)

    def closure():
        opt.zero_grad()
        loss = ((x @ w.t() + b - y) ** 2).mean() + 0.1 * (w ** 4).sum()
        loss.backward()
        return loss
    return closure


def lbfgs_setup(device, line_search=None, **kw):
    params = [dg.nn.Parameter(dg.tensor(v, device=device)) for v in (W0, B0)]
    opt = optim.LBFGS(params, line_search_fn=line_search, **kw)
    return opt, closure_for(opt, device)


def lbfgs_run(device, steps, line_search, **kw):
    """Losses, final parameters and the optimizer after ``steps`` calls of ``step``."""
    opt, closure = lbfgs_setup(device, line_search, **kw)
    losses = [float(opt.step(closure)) for _ in range(steps)]
    return losses, [p.detach().cpu().numpy() for p in opt._params], opt


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_cuda_matches_cpu(cuda, line_search):
    kw = dict(max_iter=3, history_size=2)
    want_losses, want, opt_cpu = lbfgs_run(None, 2, line_search, **kw)
    got_losses, got, opt = lbfgs_run(cuda, 2, line_search, **kw)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    state, ref = opt.state[opt._params[0]], opt_cpu.state[opt_cpu._params[0]]
    assert state["func_evals"] == ref["func_evals"] and state["n_iter"] == ref["n_iter"]
    vectors = [state["d"], state["prev_flat_grad"], *state["old_dirs"], *state["old_stps"]]
    assert vectors and all(v.is_cuda for v in vectors)  # the history stays on the device
    for k in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(state[k].cpu().numpy(), ref[k].numpy(), rtol=1e-3, atol=1e-5)


def test_lbfgs_cuda_reads_back_only_scalars(cuda, monkeypatch):
    sizes = []
    to_host = DeviceArray.to_host

    def counting(self):
        sizes.append(self.size)
        return to_host(self)
    opt, closure = lbfgs_setup(cuda, "strong_wolfe", max_iter=3)
    monkeypatch.setattr(DeviceArray, "to_host", counting)
    opt.step(closure)
    assert sizes and set(sizes) == {1}, f"read back arrays of sizes {sorted(set(sizes))}"


def test_lbfgs_state_moves_between_devices(cuda):
    """A state saved with CUDA parameters continues on the CPU as the CUDA run continues."""
    _, _, opt = lbfgs_run(cuda, 1, None, max_iter=3, history_size=2)
    twin = optim.LBFGS([dg.nn.Parameter(p.detach().cpu()) for p in opt._params], max_iter=3,
                       history_size=2)
    twin.load_state_dict(copy.deepcopy(opt.state_dict()))
    assert isinstance(twin.state[twin._params[0]]["H_diag"], Tensor)  # saved on the device
    twin.step(closure_for(twin, None))
    opt.step(closure_for(opt, cuda))
    for a, b in zip(opt._params, twin._params):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
