"""The nn functions composed of ops that came with torch's top-level nn names (grid_sample,
affine_grid, embedding_bag, pdist, channel_shuffle, rrelu, the dropout variants, torch.gru) on a
CUDA device (Numba's simulator here: tiny shapes) against the same calls on the CPU, values and
gradients in float32."""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F

RNG = np.random.default_rng(3)


def f32(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype(np.float32)


CASES = {
    "grid_sample_bicubic_reflection": (
        lambda x, g: F.grid_sample(x, g, "bicubic", "reflection", align_corners=False),
        [f32(1, 2, 3, 3), f32(1, 2, 2, 2, low=-1.2, high=1.2)]),
    "grid_sample_3d_border": (
        lambda x, g: F.grid_sample(x, g, "bilinear", "border", align_corners=True),
        [f32(1, 1, 2, 2, 3), f32(1, 1, 2, 2, 3, low=-1.2, high=1.2)]),
    "affine_grid": (lambda t: F.affine_grid(t, (1, 1, 2, 3), align_corners=False),
                    [f32(1, 2, 3)]),
    "embedding_bag_max": (lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
                          [f32(4, 2), np.array([1, 2, 0, 3]), np.array([0, 1])]),
    "embedding_bag_mean_padding": (
        lambda w, i, o: F.embedding_bag(i, w, o, mode="mean", padding_idx=0),
        [f32(4, 2), np.array([1, 2, 0, 3]), np.array([0, 1])]),
    "pdist": (lambda x: F.pdist(x), [f32(3, 2)]),
    "channel_shuffle": (lambda x: F.channel_shuffle(x, 2), [f32(1, 4, 2)]),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), [f32(3, 2)]),
    "max_pool3d_indices": (lambda x: F.max_pool3d(x, 2, return_indices=True)[0],
                           [f32(1, 1, 2, 2, 4)]),
}


def _run(fn, arrays, device):
    tensors = [dg.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(*tensors)
    (out * dg.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape),
                     device=device)).sum().backward()
    return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in tensors
                                           if t.grad is not None]


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_matches_cpu(name, cuda):
    fn, arrays = CASES[name]
    for got, want in zip(_run(fn, arrays, cuda), _run(fn, arrays, None), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_dropout_variants_and_gru_run_on_cuda(cuda):
    for y in (F.alpha_dropout(dg.ones(3, 4, device=cuda), 0.5, True),
              F.feature_alpha_dropout(dg.ones(3, 4, 2, device=cuda), 0.5, True),
              dg.feature_dropout(dg.ones(3, 4, device=cuda), 0.5, True),
              F.rrelu(-dg.ones(3, 4, device=cuda), training=True)):
        assert y.device == cuda and y.shape == (3, 4) + (() if y.ndim == 2 else (2,))
    gru = dg.nn.GRU(2, 3)
    x, h = f32(4, 1, 2), np.zeros((1, 1, 3), np.float32)
    want = dg.gru(dg.tensor(x), dg.tensor(h), gru._flat_weights, True, 1, 0.0, False, False,
                  False)[0]
    gru = gru.to(cuda)
    got = dg.gru(dg.tensor(x, device=cuda), dg.tensor(h, device=cuda), gru._flat_weights, True,
                 1, 0.0, False, False, False)[0]
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
