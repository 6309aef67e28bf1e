"""LR schedulers: the lr (and momentum) sequence over 30 steps matches torch.optim.lr_scheduler
for every scheduler and several configurations; state dicts resume identically; errors."""
import copy
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.optim as optim
from dynagrad.optim import lr_scheduler as dsched

torch = pytest.importorskip("torch")
tsched = torch.optim.lr_scheduler

STEPS = 30


def warmup(epoch):
    return min(1.0, (epoch + 1) / 5) * 0.5 ** (epoch // 10)


def shrink(epoch):
    return 0.9 if epoch % 3 else 1.05


class Scale:
    """A callable object: its __dict__ is saved in the scheduler state dict."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, epoch):
        return self.factor ** epoch


def sgd(lib, lrs=(0.1, 0.02)):
    """An SGD optimizer with two groups (for momentum cycling) in dynagrad or torch."""
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    return (optim.SGD if lib is dg else torch.optim.SGD)(groups, lr=0.5, momentum=0.9)


def adam(lib):
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in (0.1, 0.02)]
    return (optim.Adam if lib is dg else torch.optim.Adam)(groups)


# each case builds the scheduler for one library: (module of schedulers, optimizer) -> scheduler
CASES = {
    "LambdaLR": lambda s, o: s.LambdaLR(o, warmup),
    "LambdaLR-list": lambda s, o: s.LambdaLR(o, [warmup, Scale(0.95)]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, shrink),
    "StepLR": lambda s, o: s.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=12),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.93),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=20, power=2.0),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=8, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=4,
                                                                              eta_min=0.01),
    "CosineAnnealingWarmRestarts-mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3,
                                                                                   T_mult=2),
    "CyclicLR-triangular": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4,
                                                   step_size_down=6),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(o, [0.01, 0.001], [0.1, 0.05],
                                                    step_size_up=3, mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=5,
                                                  mode="exp_range", gamma=0.97,
                                                  base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-scale_fn": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                 scale_fn=Scale(0.8), scale_mode="iterations",
                                                 cycle_momentum=False),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=[0.5, 0.1], total_steps=STEPS + 1),
    "OneCycleLR-linear-3phase": lambda s, o: s.OneCycleLR(
        o, max_lr=0.3, epochs=4, steps_per_epoch=8, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, div_factor=10.0, final_div_factor=100.0),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.2, total_iters=5), s.ExponentialLR(o, gamma=0.9),
            s.CosineAnnealingLR(o, T_max=6)], milestones=[5, 15]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.9),
         s.StepLR(o, step_size=7, gamma=0.5)]),
}


def lr_sequence(sched, opt, steps=STEPS):
    """(last lrs, group lrs, momenta) after construction and after each of ``steps`` steps."""
    def snapshot():
        moms = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        return list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups], moms
    out = [snapshot()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(snapshot())
    return out


def assert_same(ours, theirs):
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-13, atol=0, err_msg=f"after step {i}")


# every case with SGD (momentum cycling); the cycling ones with Adam too (beta1 cycling)
PAIRS = [(c, sgd) for c in CASES] + [(c, adam) for c in CASES if c.startswith(("Cyc", "One"))]


@pytest.mark.parametrize("case,make_opt", PAIRS,
                         ids=[f"{c}-{m.__name__}" for c, m in PAIRS])
def test_lr_sequence_matches_torch(case, make_opt):
    opt, topt = make_opt(dg), make_opt(torch)
    sched, tsch = CASES[case](dsched, opt), CASES[case](tsched, topt)
    assert getattr(sched, "last_epoch", None) == getattr(tsch, "last_epoch", None)
    assert [g.get("initial_lr") for g in opt.param_groups] == \
        [g.get("initial_lr") for g in topt.param_groups]
    assert_same(lr_sequence(sched, opt), lr_sequence(tsch, topt))
    assert getattr(sched, "last_epoch", None) == getattr(tsch, "last_epoch", None)


@pytest.mark.parametrize("case", ["LambdaLR-list", "StepLR", "CosineAnnealingLR",
                                  "CosineAnnealingWarmRestarts-mult", "CyclicLR-scale_fn",
                                  "OneCycleLR", "SequentialLR", "ChainedScheduler"])
def test_state_dict_resumes_identically(case):
    opt = sgd(dg)
    sched = CASES[case](dsched, opt)
    lr_sequence(sched, opt, 10)
    saved_sched = copy.deepcopy(sched.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    assert "optimizer" not in saved_sched
    opt2 = sgd(dg, lrs=(0.7, 0.7))
    sched2 = CASES[case](dsched, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert_same(lr_sequence(sched2, opt2, 15), lr_sequence(sched, opt, 15))


def test_state_dict_keys_match_torch():
    opt, topt = sgd(dg), sgd(torch)
    for case in ["StepLR", "CosineAnnealingLR", "ReduceLROnPlateau"]:
        if case == "ReduceLROnPlateau":
            ours, theirs = dsched.ReduceLROnPlateau(opt), tsched.ReduceLROnPlateau(topt)
        else:
            ours, theirs = CASES[case](dsched, opt), CASES[case](tsched, topt)
        public = {k for k in theirs.state_dict() if not k.startswith("_")}
        assert public <= set(ours.state_dict())
        assert ours.state_dict()["last_epoch"] == theirs.state_dict()["last_epoch"]


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.1, threshold_mode="abs", cooldown=2),
    dict(patience=1, cooldown=1, min_lr=[0.01, 0.005], factor=0.3),
    dict(mode="max", patience=0, threshold_mode="rel", eps=0.05),
])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.94, 0.97, 0.5, 0.6, 0.6, 0.6, 0.61, 0.62,
               0.49, 0.49, 0.49, 0.49, 0.49, 0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36,
               0.37, 0.38, 0.39, 0.40, 0.41, 0.42]
    opt, topt = sgd(dg), sgd(torch)
    ours, theirs = dsched.ReduceLROnPlateau(opt, **kwargs), tsched.ReduceLROnPlateau(topt,
                                                                                    **kwargs)
    seq, tseq = [], []
    for i, m in enumerate(metrics):
        ours.step(m)
        # a 0-d tensor metric works too
        theirs.step(m if i % 2 else torch.tensor(m, dtype=torch.float64))
        seq.append((ours.get_last_lr(), ours.num_bad_epochs, ours.cooldown_counter, ours.best))
        tseq.append((theirs.get_last_lr(), theirs.num_bad_epochs, theirs.cooldown_counter,
                     theirs.best))
    assert seq == tseq
    assert ours.last_epoch == theirs.last_epoch == len(metrics)
    saved = copy.deepcopy(ours.state_dict())
    again = dsched.ReduceLROnPlateau(sgd(dg))
    again.load_state_dict(saved)
    assert again.best == ours.best and again.mode == ours.mode


def test_dg_tensor_metric():
    opt = sgd(dg)
    s = dsched.ReduceLROnPlateau(opt, patience=0)
    s.step(dg.tensor(1.0))
    s.step(dg.tensor(2.0))
    assert s.get_last_lr() == [0.010000000000000002, 0.002]


def test_epoch_argument_uses_closed_form_like_torch():
    opt, topt = sgd(dg), sgd(torch)
    ours, theirs = dsched.StepLR(opt, 3, 0.5), tsched.StepLR(topt, 3, 0.5)
    opt.step()
    topt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        ours.step(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.step(7)
    assert ours.get_last_lr() == theirs.get_last_lr()


def test_warns_when_scheduler_steps_before_optimizer():
    opt = sgd(dg)
    sched = dsched.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_resuming_needs_initial_lr_and_last_epoch_resumes():
    with pytest.raises(KeyError, match="initial_lr"):
        dsched.StepLR(sgd(dg), 2, last_epoch=3)
    opt, topt = sgd(dg), sgd(torch)
    for o in (opt, topt):
        for g in o.param_groups:
            g["initial_lr"] = g["lr"]
    ours = dsched.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
    theirs = tsched.CosineAnnealingLR(topt, T_max=10, last_epoch=4)
    assert_same(lr_sequence(ours, opt, 8), lr_sequence(theirs, topt, 8))


def test_scheduler_errors():
    opt = sgd(dg)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        dsched.StepLR([], 2)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        dsched.LambdaLR(opt, [warmup])
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        dsched.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        dsched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        dsched.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        dsched.CyclicLR(opt, 0.1, 1.0, mode="zigzag")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        dsched.CyclicLR(opt, 0.1, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        dsched.CyclicLR(optim.Adagrad([dg.zeros(1, requires_grad=True)]), 0.1, 1.0)
    with pytest.raises(ValueError, match="You must define either total_steps"):
        dsched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        dsched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=2)
    one = dsched.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    opt.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one.step()
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        dsched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode sideways is unknown"):
        dsched.ReduceLROnPlateau(opt, mode="sideways")
    with pytest.raises(ValueError, match="number of milestone points"):
        dsched.SequentialLR(opt, [dsched.StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        dsched.ChainedScheduler([dsched.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="same optimizer"):
        dsched.ChainedScheduler([dsched.StepLR(opt, 2), dsched.StepLR(sgd(dg), 2)])
