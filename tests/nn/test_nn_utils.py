"""nn.utils: clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters vs
PyTorch 2.13."""
import math

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn
from dynagrad.nn import utils

torch = pytest.importorskip("torch")
tutils = torch.nn.utils

RNG = np.random.default_rng(3)


def _params_with_grads(scale=1.0, dtype=np.float32):
    shapes = [(3, 4), (4,), (2, 2, 2)]
    values = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    grads = [scale * RNG.standard_normal(s).astype(dtype) for s in shapes]
    ours, theirs = [], []
    for v, g in zip(values, grads):
        p = nn.Parameter(dg.tensor(v))
        p.grad = dg.tensor(g)
        q = torch.nn.Parameter(torch.tensor(v))
        q.grad = torch.tensor(g)
        ours.append(p)
        theirs.append(q)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf, "inf", 0.0, -math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, theirs = _params_with_grads()
    total = utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    total_t = tutils.clip_grad_norm_(theirs, max_norm, norm_type=float(norm_type))
    assert total.dtype is dg.float32 and total.ndim == 0
    np.testing.assert_allclose(total.item(), total_t.item(), rtol=1e-6)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_skips_missing_grads_and_accepts_one_tensor():
    ours, theirs = _params_with_grads()
    ours[1].grad = None
    theirs[1].grad = None
    np.testing.assert_allclose(utils.clip_grad_norm_(iter(ours), 0.1).item(),
                               tutils.clip_grad_norm_(iter(theirs), 0.1).item(), rtol=1e-6)
    assert ours[1].grad is None
    p = nn.Parameter(dg.zeros(2))
    p.grad = dg.tensor([3.0, 4.0])
    assert utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    assert utils.clip_grad_norm_([nn.Parameter(dg.zeros(2))], 1.0).item() == 0.0


def test_clip_grad_norm_float64():
    ours, theirs = _params_with_grads(dtype=np.float64)
    total = utils.clip_grad_norm_(ours, 0.3)
    total_t = tutils.clip_grad_norm_(theirs, 0.3)
    assert total.dtype is dg.float64
    np.testing.assert_allclose(total.item(), total_t.item(), rtol=1e-13)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-13)


def test_clip_grad_norm_nonfinite():
    ours, theirs = _params_with_grads()
    ours[0].grad[0, 0] = float("nan")
    theirs[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError) as e_ours:
        utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as e_theirs:
        tutils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    assert str(e_ours.value) == str(e_theirs.value)
    # without the flag, the gradients are scaled by the non-finite norm, as in PyTorch
    assert math.isnan(utils.clip_grad_norm_(ours, 1.0).item())
    assert np.isnan(ours[1].grad.numpy()).all()


def test_clip_grad_norm_on_a_model_after_backward():
    m = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2))
    t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    (m(dg.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    np.testing.assert_allclose(utils.clip_grad_norm_(m.parameters(), 0.5).item(),
                               tutils.clip_grad_norm_(t.parameters(), 0.5).item(), rtol=1e-5)
    for p, q in zip(m.parameters(), t.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_get_total_norm_and_clip_grads_with_norm():
    ours, theirs = _params_with_grads()
    total = utils.get_total_norm([p.grad for p in ours], 2.0)
    total_t = tutils.get_total_norm([q.grad for q in theirs], 2.0)
    np.testing.assert_allclose(total.item(), total_t.item(), rtol=1e-6)
    utils.clip_grads_with_norm_(ours, 1.0, total)
    tutils.clip_grads_with_norm_(theirs, 1.0, total_t)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_matches_torch():
    ours, theirs = _params_with_grads(scale=3.0)
    assert utils.clip_grad_value_(ours, 1.5) is None
    tutils.clip_grad_value_(theirs, 1.5)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
        assert np.abs(p.grad.numpy()).max() <= 1.5


def test_parameters_to_vector_is_differentiable():
    m = nn.Linear(3, 2)
    t = torch.nn.Linear(3, 2)
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    v, vt = utils.parameters_to_vector(m.parameters()), tutils.parameters_to_vector(t.parameters())
    np.testing.assert_array_equal(v.detach().numpy(), vt.detach().numpy())
    w = dg.arange(8.0)
    (v * w).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(m.bias.grad.numpy(), [6.0, 7.0])


def test_vector_to_parameters_matches_torch():
    m, t = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    vec = RNG.standard_normal(8).astype(np.float32)
    vo = dg.tensor(vec)
    utils.vector_to_parameters(vo, m.parameters())
    tutils.vector_to_parameters(torch.tensor(vec), t.parameters())
    for p, q in zip(m.parameters(), t.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert isinstance(p, nn.Parameter) and p.requires_grad
    vo[0] = 100.0  # the parameters view the vector's memory, as in PyTorch
    assert m.weight[0, 0].item() == 100.0
    with pytest.raises(TypeError, match="expected dynagrad.Tensor"):
        utils.vector_to_parameters([1.0], m.parameters())
    with pytest.raises(RuntimeError, match="expected a 1-D vector of 8 elements"):
        utils.vector_to_parameters(dg.zeros(7), m.parameters())
