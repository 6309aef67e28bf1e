"""Every optimizer on CUDA parameters: the fused update kernels, generated for CUDA from the same
loop bodies as the CPU ones (``kernels/fused_update.py``), match the CPU kernels step for step;
state lives on the parameters' device; L-BFGS runs on the device too."""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad import optim
from dynagrad.tensor import Tensor
from harness import assert_all_close

CONFIGS = {
    "sgd": (optim.SGD, {"lr": 0.1}),
    "sgd_momentum": (optim.SGD, {"lr": 0.1, "momentum": 0.9, "dampening": 0.1,
                                 "weight_decay": 0.01}),
    "sgd_nesterov_maximize": (optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True,
                                          "maximize": True}),
    "adam": (optim.Adam, {"lr": 0.1, "weight_decay": 0.01}),
    "adam_amsgrad_maximize": (optim.Adam, {"lr": 0.1, "amsgrad": True, "maximize": True}),
    "adamw": (optim.AdamW, {"lr": 0.1, "betas": (0.4, 0.9)}),
    "rmsprop": (optim.RMSprop, {"lr": 0.01}),
    "rmsprop_centered_momentum": (optim.RMSprop, {"lr": 0.01, "centered": True, "momentum": 0.9,
                                                  "weight_decay": 0.1}),
    "adagrad": (optim.Adagrad, {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}),
    "adadelta": (optim.Adadelta, {"lr": 1.0, "weight_decay": 0.1}),
    "adamax": (optim.Adamax, {"lr": 0.1, "weight_decay": 0.1}),
    "nadam": (optim.NAdam, {"lr": 0.1, "weight_decay": 0.1}),
    "nadam_decoupled": (optim.NAdam, {"lr": 0.1, "weight_decay": 0.1,
                                      "decoupled_weight_decay": True}),
    "radam": (optim.RAdam, {"lr": 0.1, "weight_decay": 0.1}),
    "radam_decoupled": (optim.RAdam, {"lr": 0.1, "weight_decay": 0.1,
                                      "decoupled_weight_decay": True}),
    "asgd": (optim.ASGD, {"lr": 0.1, "t0": 1, "weight_decay": 0.1}),
    "rprop": (optim.Rprop, {"lr": 0.1}),
}
SHAPES = [(3,), (2, 2)]


def _run(name: str, steps: int, dtype, device=None):
    """Parameters and every state tensor (on the host) after ``steps`` steps on fixed random
    gradients (which change sign now and then, as Rprop needs)."""
    cls, kwargs = CONFIGS[name]
    rng = np.random.default_rng(0)
    params = [dg.nn.Parameter(dg.tensor(rng.standard_normal(s).astype(dtype), device=device))
              for s in SHAPES]
    opt = cls(params, **kwargs)
    for _ in range(steps):
        for p in params:
            p.grad = dg.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype), device=device)
        opt.step()
    out = [p.detach().cpu() for p in params]
    for p in params:
        state = opt.state[p]
        out += [state[k].cpu() for k in sorted(state) if isinstance(state[k], Tensor)]
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_cuda_steps_match_cpu(name, cuda):
    # 7 steps: long enough for RAdam's rectification and ASGD's averaging to start
    want = _run(name, 7, np.float64)
    got = _run(name, 7, np.float64, device=cuda)
    assert_all_close(got, want, rtol=1e-12, atol=1e-12)
    want = _run(name, 2, np.float32)
    got = _run(name, 2, np.float32, device=cuda)
    assert_all_close(got, want, rtol=1e-5, atol=1e-6)


def test_cuda_state_lives_on_the_parameters_device(cuda):
    p = dg.nn.Parameter(dg.ones(3, device=cuda))
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    p.grad = dg.ones(3, device=cuda)
    opt.step()
    state = opt.state[p]
    assert all(state[k].is_cuda for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"))
    assert not state["step"].is_cuda
    assert p.is_cuda and p._version > 0


def test_lbfgs_on_cuda(cuda):
    target = np.array([1.0, -2.0, 0.5], np.float32)
    results = []
    for device in (None, cuda):
        w = dg.nn.Parameter(dg.zeros(3, device=device))
        t = dg.tensor(target, device=device)
        opt = optim.LBFGS([w], max_iter=20, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((w - t) ** 2 * t.abs()).sum()
            loss.backward()
            return loss
        opt.step(closure)
        results.append(w.detach().cpu())
    assert results[1].tolist() == pytest.approx(results[0].tolist(), rel=1e-5, abs=1e-6)
    assert results[1].tolist() == pytest.approx(target.tolist(), abs=1e-4)
