"""The Optimizer base class: construction errors, param groups, zero_grad, hooks, version
counters, strided parameters and gradients, state-dict errors, and the fused-kernel count."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.optim as optim
from dynagrad.kernels import cache as kcache

torch = pytest.importorskip("torch")


def leaf(values, dtype=dg.float32):
    return dg.tensor(values, dtype=dtype, requires_grad=True)


# --- construction errors (messages as PyTorch's) ---------------------------------------------
@pytest.mark.parametrize("cls,kwargs,message", [
    (optim.SGD, dict(lr=-0.1), "Invalid learning rate: -0.1"),
    (optim.SGD, dict(lr=0.1, momentum=-1), "Invalid momentum value: -1"),
    (optim.SGD, dict(lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
    (optim.SGD, dict(lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero "
                                             "dampening"),
    (optim.Adam, dict(lr=-1.0), "Invalid learning rate: -1.0"),
    (optim.Adam, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (optim.AdamW, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (optim.Adam, dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (optim.RMSprop, dict(alpha=-0.5), "Invalid alpha value: -0.5"),
    (optim.Adagrad, dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    (optim.Adadelta, dict(rho=1.5), "Invalid rho value: 1.5"),
    (optim.NAdam, dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (optim.Rprop, dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (optim.LBFGS, dict(lr=-1), "Invalid learning rate: -1"),
])
def test_invalid_hyper_parameters(cls, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        cls([leaf([1.0])], **kwargs)


def test_invalid_lr_message_matches_torch():
    with pytest.raises(ValueError) as ours:
        optim.Adam([leaf([1.0])], lr=-0.5)
    with pytest.raises(ValueError) as theirs:
        torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=-0.5)
    assert str(ours.value) == str(theirs.value)


def test_params_must_be_an_iterable_of_tensors():
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got "
                                        "dynagrad.Tensor"):
        optim.SGD(leaf([1.0]), lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is builtins.float"):
        optim.SGD([leaf([1.0]), 3.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {leaf([1.0])}}], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([leaf([1.0]) * 2], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        optim.SGD([leaf([1.0])], lr=0.1).add_param_group([leaf([2.0])])


def test_duplicate_parameters():
    w = leaf([1.0])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    opt = optim.SGD([w], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": w})
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([w, w], lr=0.1)


def test_required_option_and_group_defaults():
    class Plain(optim.Optimizer):
        def __init__(self, params, lr=optim.optimizer.required, scale=2.0):
            super().__init__(params, dict(lr=lr, scale=scale))

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p._data[...] -= group["lr"] * group["scale"]

    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Plain([leaf([1.0])])
    a, b = leaf([1.0]), leaf([1.0])
    opt = Plain([{"params": [a], "lr": 0.5}], scale=3.0)
    opt.add_param_group({"params": [b], "lr": 0.1, "scale": 1.0})
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    assert opt.param_groups[0]["scale"] == 3.0
    opt.step()
    assert a.tolist() == [-0.5] and abs(b.item() - 0.9) < 1e-6
    assert "Plain (" in repr(opt) and "lr: 0.5" in repr(opt)


def test_named_parameters_are_kept_in_state_dict():
    w, b = leaf([1.0]), leaf([2.0])
    opt = optim.SGD([("w", w), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["params"] == [w, b]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [leaf([3.0])]})


# --- zero_grad, steps, versions ----------------------------------------------------------------
def test_zero_grad_set_to_none_and_zero_fill():
    w = leaf([1.0, 2.0])
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no gradient: nothing moves, no state is made
    assert w.tolist() == [1.0, 2.0] and len(opt.state) == 0


def test_step_bumps_version_and_runs_without_recording_history():
    w = leaf([1.0, 2.0])
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    before = w._version
    opt.step()
    assert w._version == before + 1
    assert w.grad_fn is None and w.requires_grad
    assert opt.state[w]["exp_avg"]._version >= 1
    # a graph that saved w before the in-place update notices the modification
    y = (w * w).sum()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_strided_parameter_and_gradient_take_the_copy_path():
    base = dg.tensor(np.arange(12.0).reshape(3, 4), dtype=dg.float64)
    w = base.t()  # a non-contiguous leaf: the kernel updates a copy that is written back
    w.requires_grad_(True)
    assert not w.is_contiguous()
    tw = torch.tensor(np.arange(12.0).reshape(3, 4)).t().requires_grad_(True)
    opt, topt = optim.Adam([w], lr=0.1), torch.optim.Adam([tw], lr=0.1)
    g = np.linspace(-1, 1, 12).reshape(3, 4)
    for _ in range(3):
        w.grad = dg.tensor(g, dtype=dg.float64).t()  # a strided gradient
        tw.grad = torch.tensor(g).t()
        opt.step()
        topt.step()
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(base.numpy(), tw.detach().numpy().T, rtol=1e-12)


def test_non_float_kernel_dtype_is_refused_with_a_clear_error():
    w = dg.tensor([1.0, 2.0], dtype=dg.float16, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    w.grad = dg.tensor([1.0, 1.0], dtype=dg.float16)
    with pytest.raises(TypeError, match=r"SGD: parameters must be float32 or float64, but got a "
                                        r"parameter of shape \(2,\) and dtype float16"):
        opt.step()


def test_unsupported_torch_options_are_rejected():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adam([leaf([1.0])], differentiable=True)
    with pytest.raises(NotImplementedError, match="capturable=True"):
        optim.RMSprop([leaf([1.0])], capturable=True)


def test_hooks_run_around_step_and_can_be_removed():
    w = leaf([1.0])
    opt = optim.SGD([w], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", w.item())))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", round(w.item(), 4))))
    (w * w).sum().backward()
    opt.step()
    pre.remove()
    opt.step()
    assert calls == [("pre", 1.0), ("post", 0.8), ("post", 0.6)]


def test_one_kernel_per_optimizer_configuration():
    """All tensors of a group share one fused kernel; shapes never make new kernels."""
    params = [leaf(np.ones(s)) for s in [(3, 2), (5,), (2, 2, 2), ()]]
    opt = optim.Adam(params, lr=0.1)
    for p in params:
        p.grad = dg.ones(p.shape)
    opt.step()
    keys = [k for k in kcache._memory if k[:2] == ("optim", "adam")]
    assert ("optim", "adam", "float32", False) in keys
    n = len(kcache._memory)
    opt.step()
    assert len(kcache._memory) == n


# --- state dict errors ---------------------------------------------------------------------------
def test_load_state_dict_errors():
    a, b = leaf([1.0]), leaf([2.0])
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    sd = opt.state_dict()
    other = optim.SGD([{"params": [leaf([1.0])]}, {"params": [leaf([2.0])]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict(sd)
    single = optim.SGD([leaf([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        single.load_state_dict(sd)


def test_state_dict_shares_tensors_and_load_casts_dtype():
    w = leaf([1.0, 2.0], dg.float64)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    sd = opt.state_dict()
    assert sd["state"][0]["momentum_buffer"] is opt.state[w]["momentum_buffer"]
    sd["state"][0]["momentum_buffer"] = dg.tensor([1.0, 1.0], dtype=dg.float32)
    w2 = leaf([0.0, 0.0], dg.float64)
    opt2 = optim.SGD([w2], lr=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.load_state_dict(sd)
    assert opt2.state[w2]["momentum_buffer"].dtype is dg.float64
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["params"] == [w2]
