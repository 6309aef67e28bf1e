"""The composed nn additions on CUDA (Numba's simulator here: tiny shapes) against the CPU in
float32, outputs and input gradients: 3-D adaptive pooling, fractional max pooling, LP pooling,
max unpooling, local response norm, padding layers, multilabel margin loss, LSTM proj_size."""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

RNG = np.random.default_rng(0)


def _run(fn, arr, device):
    x = dg.tensor(arr, device=device, requires_grad=True)
    out = fn(x)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return out.detach().cpu().numpy(), x.grad.cpu().numpy()


SAMPLES = np.array([[[0.3, 0.7]]], dtype=np.float32)

CASES = {
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, (2, 1, 2)), (1, 1, 3, 2, 3)),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 1, 2)), (1, 1, 3, 2, 3)),
    "fractional_max_pool2d": (lambda x: F.fractional_max_pool2d(
        x, 2, output_size=2, _random_samples=dg.tensor(SAMPLES, device=x.device)), (1, 1, 4, 5)),
    "lp_pool2d": (lambda x: F.lp_pool2d(x.abs() + 0.5, 2, 2), (1, 1, 2, 4)),
    "max_unpool2d": (lambda x: F.max_unpool2d(x, dg.tensor([[[[0, 3]]]], device=x.device), 2),
                     (1, 1, 1, 2)),
    "local_response_norm": (lambda x: F.local_response_norm(x, 2), (1, 3, 2)),
    "reflection_pad2d": (lambda x: nn.ReflectionPad2d(1)(x), (1, 1, 2, 2)),
    "multilabel_margin_loss": (lambda x: F.multilabel_margin_loss(
        x, dg.tensor([[2, 0, -1]], device=x.device)), (1, 3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu(name, cuda):
    fn, shape = CASES[name]
    arr = RNG.standard_normal(shape).astype(np.float32)
    out_g, grad_g = _run(fn, arr, cuda)
    out_c, grad_c = _run(fn, arr, "cpu")
    np.testing.assert_allclose(out_g, out_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_g, grad_c, rtol=1e-5, atol=1e-6)


def test_cuda_lstm_proj_size(cuda):
    dg.manual_seed(0)
    cpu = nn.LSTM(2, 3, proj_size=1)
    gpu = nn.LSTM(2, 3, proj_size=1, device=cuda)
    gpu.load_state_dict(cpu.state_dict())
    arr = RNG.standard_normal((2, 1, 2)).astype(np.float32)
    out_c = cpu(dg.tensor(arr))[0]
    out_g = gpu(dg.tensor(arr, device=cuda))[0]
    np.testing.assert_allclose(out_g.detach().cpu().numpy(), out_c.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
