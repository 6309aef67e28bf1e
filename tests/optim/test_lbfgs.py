"""LBFGS parity with torch.optim.LBFGS (with and without strong-Wolfe line search), its state
dict round trip, and its argument checks."""
import copy

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.optim as optim

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((8, 3))
Y = RNG.standard_normal((8, 2))
W0 = RNG.standard_normal((3, 2))


def rosenbrock(w):
    return (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2


def regression(w):
    lib = dg if isinstance(w, dg.Tensor) else torch
    x, y = lib.tensor(X, dtype=w.dtype), lib.tensor(Y, dtype=w.dtype)
    return ((x @ w - y) ** 2).mean() + 0.1 * (w ** 4).sum()


def closure_for(opt, w, fn):
    def closure():
        opt.zero_grad()
        loss = fn(w)
        loss.backward()
        return loss
    return closure


def run(opt, w, fn, steps):
    out = []
    for _ in range(steps):
        loss = opt.step(closure_for(opt, w, fn))
        out.append((float(loss.detach().numpy()), w.detach().numpy().copy()))
    return out


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("problem", ["rosenbrock", "regression"])
def test_lbfgs_matches_torch(problem, line_search_fn):
    fn, start = (rosenbrock, [-1.5, 2.0]) if problem == "rosenbrock" else (regression, W0)
    kwargs = dict(lr=1 if line_search_fn else 0.5, max_iter=8, history_size=4,
                  line_search_fn=line_search_fn)
    w = dg.tensor(start, dtype=dg.float64, requires_grad=True)
    tw = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    opt, topt = optim.LBFGS([w], **kwargs), torch.optim.LBFGS([tw], **kwargs)
    ours, theirs = run(opt, w, fn, 5), run(topt, tw, fn, 5)
    for (la, wa), (lb, wb) in zip(ours, theirs):
        # rosenbrock amplifies rounding differences along its valley: compare loosely there
        tol = 1e-6 if problem == "rosenbrock" else 1e-10
        np.testing.assert_allclose(la, lb, rtol=tol, atol=1e-12)
        np.testing.assert_allclose(wa, wb, rtol=tol, atol=1e-10)
    assert opt.state[w]["func_evals"] == topt.state[tw]["func_evals"]
    assert opt.state[w]["n_iter"] == topt.state[tw]["n_iter"]
    if problem == "rosenbrock" and line_search_fn:
        assert rosenbrock(w).item() < 1e-3 < 12.5 == ours[0][0]  # well down the valley


def test_lbfgs_float32_close_to_torch():
    w = dg.tensor(W0, dtype=dg.float32, requires_grad=True)
    tw = torch.tensor(W0, dtype=torch.float32, requires_grad=True)
    kwargs = dict(max_iter=5, line_search_fn="strong_wolfe")
    ours = run(optim.LBFGS([w], **kwargs), w, regression, 3)
    theirs = run(torch.optim.LBFGS([tw], **kwargs), tw, regression, 3)
    for (la, wa), (lb, wb) in zip(ours, theirs):
        np.testing.assert_allclose(wa, wb, rtol=1e-3, atol=1e-4)


def test_lbfgs_state_dict_round_trip_continues_identically():
    w = dg.tensor(W0, dtype=dg.float64, requires_grad=True)
    opt = optim.LBFGS([w], max_iter=3, history_size=3)
    run(opt, w, regression, 2)
    sd = copy.deepcopy(opt.state_dict())
    assert sorted(sd["state"][0]) == sorted(["func_evals", "n_iter", "d", "t", "old_dirs",
                                             "old_stps", "ro", "H_diag", "prev_flat_grad",
                                             "prev_loss"])
    twin = dg.tensor(w.detach().numpy(), dtype=dg.float64, requires_grad=True)
    opt2 = optim.LBFGS([twin], max_iter=3, history_size=3)
    opt2.load_state_dict(sd)
    a, b = run(opt, w, regression, 2), run(opt2, twin, regression, 2)
    for (la, wa), (lb, wb) in zip(a, b):
        assert la == lb
        np.testing.assert_array_equal(wa, wb)


def test_lbfgs_errors():
    w = dg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [w]}, {"params": [dg.tensor([2.0], requires_grad=True)]}])
    opt = optim.LBFGS([w], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure_for(opt, w, lambda v: (v * v).sum()))
    with pytest.raises(RuntimeError, match="requires a closure"):
        optim.LBFGS([w]).step()
