"""Parity of every optimizer with torch.optim: 20-step parameter trajectories on a small
regression problem (float64 tight, float32 loose), state dicts (format, torch -> dynagrad
loading, round trips that continue identically), multiple groups and parameters without grads."""
import copy

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.optim as optim

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)
W0 = RNG.standard_normal((3, 4))
B0 = RNG.standard_normal(4)
X = RNG.standard_normal((6, 3))
Y = RNG.standard_normal((6, 4))

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.7, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True, eps=1e-3)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True, betas=(0.3, 0.8))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.8, centered=True, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.8, alpha=0.3)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-3)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, betas=(0.6, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1)),  # rectifies from step 6
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.7), weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("Adafactor", dict(lr=0.05)),
    ("Adafactor", dict(lr=0.3, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=1.5, weight_decay=0.1,
                       maximize=True)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]
TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-4, atol=2e-5)}


def make_dg(dtype, w=W0, b=B0):
    dt = getattr(dg, dtype)
    return (dg.tensor(w, dtype=dt, requires_grad=True), dg.tensor(b, dtype=dt, requires_grad=True))


def make_torch(dtype, w=W0, b=B0):
    dt = getattr(torch, dtype)
    return (torch.tensor(w, dtype=dt, requires_grad=True),
            torch.tensor(b, dtype=dt, requires_grad=True))


def loss_of(lib, params, dtype):
    """MSE of a linear model plus a quartic term (so the curvature changes along the path)."""
    w, b = params
    x = lib.tensor(X, dtype=getattr(lib, dtype))
    y = lib.tensor(Y, dtype=getattr(lib, dtype))
    return ((x @ w + b - y) ** 2).mean() + 0.01 * (w ** 4).sum()


def run(opt, params, lib, dtype, steps):
    """``steps`` optimizer steps; the parameter values after each one."""
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        loss_of(lib, params, dtype).backward()
        opt.step()
        trajectory.append([p.detach().numpy().copy() for p in params])
    return trajectory


def assert_trajectories(ours, theirs, dtype):
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, **TOL[dtype], err_msg=f"step {step + 1}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_trajectory_matches_torch(name, kwargs, dtype):
    params, tparams = make_dg(dtype), make_torch(dtype)
    ours = run(getattr(optim, name)(list(params), **kwargs), params, dg, dtype, 20)
    theirs = run(getattr(torch.optim, name)(list(tparams), **kwargs), tparams, torch, dtype, 20)
    assert_trajectories(ours, theirs, dtype)


def to_dg(value):
    """A torch state dict's values converted to dynagrad (tensors via NumPy, containers kept)."""
    if isinstance(value, torch.Tensor):
        return dg.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: to_dg(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_dg(v) for v in value)
    return value


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_state_dict_matches_torch_and_loads_torch_state(name, kwargs):
    dtype = "float64"
    params, tparams = make_dg(dtype), make_torch(dtype)
    opt = getattr(optim, name)(list(params), **kwargs)
    topt = getattr(torch.optim, name)(list(tparams), **kwargs)
    run(opt, params, dg, dtype, 7)
    run(topt, tparams, torch, dtype, 7)
    sd, tsd = opt.state_dict(), topt.state_dict()
    # same layout: groups with the same keys and index lists, state keyed by index, same entries
    assert [sorted(g) for g in sd["param_groups"]] == [sorted(g) for g in tsd["param_groups"]]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1]]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for idx, entry in tsd["state"].items():
        assert sorted(sd["state"][idx]) == sorted(entry)
        for key, value in entry.items():
            ours = sd["state"][idx][key]
            assert isinstance(ours, dg.Tensor)
            assert ours.dtype.name == str(value.dtype).replace("torch.", "")
            np.testing.assert_allclose(ours.numpy(), value.numpy(), rtol=1e-10, atol=1e-12)
    # a fresh dynagrad optimizer loaded from torch's state dict continues exactly like torch
    # restored from the same checkpoint (loading casts state such as ASGD's eta to the params')
    topt.load_state_dict(copy.deepcopy(tsd))
    current = [p.detach().numpy() for p in tparams]
    fresh = make_dg(dtype, *current)
    opt2 = getattr(optim, name)(list(fresh), lr=0.123)
    opt2.load_state_dict(to_dg(tsd))
    assert opt2.param_groups[0]["lr"] == kwargs.get("lr", topt.defaults["lr"])
    assert_trajectories(run(opt2, fresh, dg, dtype, 8), run(topt, tparams, torch, dtype, 8),
                        dtype)


@pytest.mark.parametrize("name,kwargs", CASES[::3], ids=IDS[::3])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    dtype = "float32"
    params = make_dg(dtype)
    opt = getattr(optim, name)(list(params), **kwargs)
    run(opt, params, dg, dtype, 5)
    saved = copy.deepcopy(opt.state_dict())
    twin = make_dg(dtype, *[p.detach().numpy() for p in params])
    opt2 = getattr(optim, name)(list(twin), **kwargs)
    opt2.load_state_dict(saved)
    a, b = run(opt, params, dg, dtype, 6), run(opt2, twin, dg, dtype, 6)
    for sa, sb in zip(a, b):
        for pa, pb in zip(sa, sb):
            np.testing.assert_array_equal(pa, pb)
    # the loaded state is a copy: stepping opt2 did not touch the saved dict
    for idx, entry in saved["state"].items():
        for key, value in entry.items():
            if isinstance(value, dg.Tensor) and key != "step":
                assert not np.shares_memory(value.numpy(), opt2.state[twin[idx]][key].numpy())


@pytest.mark.parametrize("name,kwargs", [CASES[1], CASES[5], CASES[12]], ids=["sgd", "adam",
                                                                             "rmsprop"])
def test_param_groups_and_missing_grads_match_torch(name, kwargs):
    dtype = "float64"
    extra = dg.tensor([1.0, -2.0], dtype=dg.float64, requires_grad=True)  # never gets a grad
    textra = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    params, tparams = make_dg(dtype), make_torch(dtype)
    opt = getattr(optim, name)([{"params": [params[0]]},
                                {"params": [params[1], extra], "lr": 0.003}], **kwargs)
    topt = getattr(torch.optim, name)([{"params": [tparams[0]]},
                                       {"params": [tparams[1], textra], "lr": 0.003}], **kwargs)
    assert_trajectories(run(opt, params, dg, dtype, 20), run(topt, tparams, torch, dtype, 20),
                        dtype)
    assert extra.tolist() == [1.0, -2.0] and extra not in opt.state
    assert opt.state_dict()["param_groups"][1]["params"] == [1, 2]


def test_lr_as_tensor_and_group_lr_change_take_effect():
    params, tparams = make_dg("float64"), make_torch("float64")
    opt = optim.Adam(list(params), lr=dg.tensor(0.05))
    topt = torch.optim.Adam(list(tparams), lr=torch.tensor(0.05))
    a, b = run(opt, params, dg, "float64", 3), run(topt, tparams, torch, "float64", 3)
    opt.param_groups[0]["lr"] = 0.2
    topt.param_groups[0]["lr"] = 0.2
    a += run(opt, params, dg, "float64", 3)
    b += run(topt, tparams, torch, "float64", 3)
    assert_trajectories(a, b, "float64")


def test_step_returns_closure_loss_and_runs_it_with_grad_enabled():
    params = make_dg("float64")
    opt = optim.SGD(list(params), lr=0.1)
    seen = []

    def closure():
        opt.zero_grad()
        seen.append(dg.is_grad_enabled())
        loss = loss_of(dg, params, "float64")
        loss.backward()
        return loss

    with dg.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert abs(loss.item() - loss_of(dg, make_dg("float64"), "float64").item()) < 1e-12


def _numpy_muon(ws, grads_of, steps, lr, weight_decay, momentum, nesterov, adjust):
    """Muon in float64 NumPy: the reference for the exact algorithm (PyTorch's own iteration
    runs in bfloat16, so it is compared more loosely below)."""
    a, b, c = 3.4445, -4.7750, 2.0315
    bufs = [np.zeros_like(w) for w in ws]
    for _ in range(steps):
        for w, buf, g in zip(ws, bufs, grads_of(ws)):
            buf += (1 - momentum) * (g - buf)
            u = g + momentum * (buf - g) if nesterov else buf.copy()
            tall = u.shape[0] > u.shape[1]
            x = u.T if tall else u
            x = x / max(np.linalg.norm(x), 1e-7)
            for _ in range(5):
                gram = x @ x.T
                x = a * x + (b * gram + c * gram @ gram) @ x
            u = x.T if tall else x
            rows, cols = w.shape
            scale = 0.2 * np.sqrt(max(rows, cols)) if adjust else np.sqrt(max(1, rows / cols))
            w *= 1 - lr * weight_decay
            w -= lr * scale * u
    return ws


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", [dict(lr=0.02), dict(lr=0.05, weight_decay=0.2, momentum=0.8,
                                                        nesterov=False,
                                                        adjust_lr_fn="match_rms_adamw")])
def test_muon_matches_reference_and_torch(kwargs, dtype):
    w0, v0 = W0, RNG.standard_normal((5, 2))  # a wide and a tall matrix
    A = np.arange(10.0).reshape(5, 2)

    def loss(lib, w, v):
        return (w ** 3).sum() + (v * lib.tensor(A, dtype=getattr(lib, dtype))).sum() ** 2

    def trajectory(lib, opt_cls):
        dt = getattr(lib, dtype)
        w, v = (lib.tensor(a, dtype=dt, requires_grad=True) for a in (w0, v0))
        opt = opt_cls([w, v], **kwargs)
        for _ in range(3):
            opt.zero_grad()
            loss(lib, w, v).backward()
            opt.step()
        return opt, [w.detach().numpy().copy(), v.detach().numpy().copy()]

    opt, ours = trajectory(dg, optim.Muon)
    topt, theirs = trajectory(torch, torch.optim.Muon)
    ref = _numpy_muon([w0.copy(), v0.copy()],
                      lambda ws: [3 * ws[0] ** 2, 2 * (ws[1] * A).sum() * A],
                      3, kwargs["lr"], kwargs.get("weight_decay", 0.1),
                      kwargs.get("momentum", 0.95), kwargs.get("nesterov", True),
                      "adjust_lr_fn" in kwargs)
    for a, r, t in zip(ours, ref, theirs):
        np.testing.assert_allclose(a, t, rtol=0, atol=0.1 * kwargs["lr"])  # bfloat16
        np.testing.assert_allclose(a, r, **TOL[dtype])
        np.testing.assert_allclose(a, t, rtol=0, atol=0.1 * kwargs["lr"])  # bfloat16
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert {i: sorted(s) for i, s in sd["state"].items()} == \
        {i: sorted(s) for i, s in tsd["state"].items()} == {0: ["momentum_buffer"],
                                                              1: ["momentum_buffer"]}


def test_muon_rejects_what_torch_rejects():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([dg.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        optim.Muon([dg.zeros(2, 2, requires_grad=True)], adjust_lr_fn="x")
