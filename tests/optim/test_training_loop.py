"""An end-to-end training loop with nn modules: optimizer + scheduler + state dicts, as a
PyTorch user writes it, matching torch step for step."""
import copy

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.optim as optim

torch = pytest.importorskip("torch")


def models():
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    model.load_state_dict({k: dg.tensor(v.detach().numpy()) for k, v in
                           tmodel.state_dict().items()})
    return model, tmodel


def train(lib, model, opt, sched, x, y, steps):
    loss_fn = (nn if lib is dg else torch.nn).MSELoss()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def test_mlp_adamw_onecycle_matches_torch_and_resumes():
    torch.manual_seed(0)
    model, tmodel = models()
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((16, 4)), rng.standard_normal((16, 3))
    x, y = dg.tensor(xs, dtype=dg.float32), dg.tensor(ys, dtype=dg.float32)
    tx, ty = torch.tensor(xs, dtype=torch.float32), torch.tensor(ys, dtype=torch.float32)
    opt = optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=0.01, weight_decay=0.05)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)
    tsched = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.05, total_steps=20)
    ours = train(dg, model, opt, sched, x, y, 10)
    theirs = train(torch, tmodel, topt, tsched, tx, ty, 10)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    assert ours[-1] < ours[0]
    # checkpoint, rebuild everything, resume: continues exactly like the uninterrupted run
    ckpt = copy.deepcopy({"model": model.state_dict(), "opt": opt.state_dict(),
                          "sched": sched.state_dict()})
    model2, _ = models()
    opt2 = optim.AdamW(model2.parameters(), lr=0.01, weight_decay=0.05)
    sched2 = optim.lr_scheduler.OneCycleLR(opt2, max_lr=0.05, total_steps=20)
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    resumed = train(dg, model2, opt2, sched2, x, y, 10)
    assert resumed == train(dg, model, opt, sched, x, y, 10)
    np.testing.assert_allclose(resumed, train(torch, tmodel, topt, tsched, tx, ty, 10),
                               rtol=1e-4, atol=1e-6)
