"""``F.grid_sample`` / ``F.affine_grid`` and ``torch.grid_sampler*`` against torch 2.13: values
and the gradients of input and grid in float64 for every mode, padding mode and ``align_corners``
(2-D and 3-D), finite differences, errors and warnings."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(11)


def _compare(ours, theirs, x, g, tol=1e-12):
    """``ours(x, g)`` against ``theirs``: values and the gradients of both arguments."""
    xd, gd = dg.tensor(x, requires_grad=True), dg.tensor(g, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    yd, yt = ours(xd, gd), theirs(xt, gt)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    w = RNG.standard_normal(tuple(yt.shape))
    yd.backward(dg.tensor(w))
    yt.backward(torch.tensor(w))
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(gd.grad.numpy(), gt.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_matches_torch(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 2, 3, 4))
    g = RNG.uniform(-1.4, 1.4, (2, 3, 5, 2))   # some points outside: the padding matters
    _compare(lambda a, b: F.grid_sample(a, b, mode, padding_mode, align_corners),
             lambda a, b: TF.grid_sample(a, b, mode, padding_mode, align_corners), x, g)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d_matches_torch(mode, padding_mode):
    x = RNG.standard_normal((1, 2, 2, 3, 4))
    g = RNG.uniform(-1.3, 1.3, (1, 2, 3, 2, 3))
    for align_corners in (False, True):
        _compare(lambda a, b, ac=align_corners: F.grid_sample(a, b, mode, padding_mode, ac),
                 lambda a, b, ac=align_corners: TF.grid_sample(a, b, mode, padding_mode, ac), x, g)


def test_grid_sampler_aten_forms_match_torch():
    x2, g2 = RNG.standard_normal((1, 2, 3, 3)), RNG.uniform(-1.2, 1.2, (1, 2, 2, 2))
    x3, g3 = RNG.standard_normal((1, 1, 2, 3, 3)), RNG.uniform(-1.2, 1.2, (1, 1, 2, 2, 3))
    for name, x, g, modes in (("grid_sampler", x2, g2, (2, 1, True)),
                              ("grid_sampler_2d", x2, g2, (0, 2, False)),
                              ("grid_sampler_3d", x3, g3, (1, 1, True)),
                              ("grid_sampler", x3, g3, (0, 0, False))):
        ours, theirs = getattr(dg, name), getattr(torch, name)
        _compare(lambda a, b, f=ours, m=modes: f(a, b, *m),
                 lambda a, b, f=theirs, m=modes: f(a, b, *m), x, g)
    with pytest.raises(RuntimeError, match="expected 4D input and grid"):
        dg.grid_sampler_2d(dg.tensor(x3), dg.tensor(g3), 0, 0, False)
    with pytest.raises(RuntimeError, match="expected 5D input and grid"):
        dg.grid_sampler_3d(dg.tensor(x2), dg.tensor(g2), 0, 0, False)


def test_grid_sample_gradcheck():
    # points away from pixel boundaries and from the reflection folds: differentiable there
    x = dg.tensor(RNG.standard_normal((1, 2, 3, 3)), requires_grad=True)
    g = dg.tensor(np.array([[[[0.11, -0.37], [0.52, 0.83]], [[-1.21, 0.27], [0.93, -0.61]]]]),
                  requires_grad=True)
    for mode, padding_mode in (("bilinear", "reflection"), ("bicubic", "border"),
                               ("bilinear", "zeros")):
        assert dg.autograd.gradcheck(
            lambda a, b, m=mode, p=padding_mode: F.grid_sample(a, b, m, p, align_corners=False),
            (x, g))


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(align_corners):
    for theta_shape, size in (((2, 2, 3), (2, 3, 4, 5)), ((1, 3, 4), (1, 2, 2, 3, 4))):
        theta = RNG.standard_normal(theta_shape)
        td, tt = dg.tensor(theta, requires_grad=True), torch.tensor(theta, requires_grad=True)
        got, want = F.affine_grid(td, size, align_corners), TF.affine_grid(tt, size,
                                                                          align_corners)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)
        w = RNG.standard_normal(tuple(want.shape))
        got.backward(dg.tensor(w))
        want.backward(torch.tensor(w))
        np.testing.assert_allclose(td.grad.numpy(), tt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_spatial_transformer_round_trip():
    # the identity affine grid samples the input back exactly (align_corners=False)
    x = dg.tensor(RNG.standard_normal((2, 3, 4, 5)))
    theta = dg.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=False)
    np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=False).numpy(), x.numpy(),
                               rtol=1e-12, atol=1e-12)


def test_grid_sample_errors_and_warnings_match_torch():
    x, g = np.zeros((2, 3, 4, 5)), np.zeros((2, 3, 3, 2))
    cases = [
        ((x, g[..., :1]), {}, RuntimeError, "expected grid to have size 2 in last dimension"),
        ((x, g[:1]), {}, RuntimeError, "expected grid and input to have same batch size"),
        ((x, g), {"mode": "x"}, ValueError, "expected mode to be 'bilinear', 'nearest' or"),
        ((x, g), {"padding_mode": "x"}, ValueError, "expected padding_mode to be 'zeros'"),
        ((np.zeros((1, 1, 2, 2, 2)), np.zeros((1, 1, 1, 1, 3))), {"mode": "bicubic"},
         RuntimeError, "bicubic interpolation only supports 4D input"),
    ]
    for (a, b), kw, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            F.grid_sample(dg.tensor(a), dg.tensor(b), align_corners=False, **kw)
        with pytest.raises(exc, match=msg):
            TF.grid_sample(torch.tensor(a), torch.tensor(b), align_corners=False, **kw)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.grid_sample(dg.zeros(1, 1, 2, 2), dg.zeros(1, 1, 1, 2, dtype=dg.float64),
                      align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(dg.zeros(1, 1, 2, 2), dg.zeros(1, 1, 1, 2))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(dg.zeros(1, 2, 3), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.affine_grid(dg.zeros(1, 2, 3), (1, 1, 2, 2), align_corners=True)
    for theta, size, exc, msg in (((2, 2, 3), (2, 3, 4), NotImplementedError,
                                   "only supports 4D and 5D sizes"),
                                  ((2, 3, 3), (2, 3, 4, 5), ValueError,
                                   "Expected a batch of 2D affine matrices of shape Nx2x3")):
        with pytest.raises(exc, match=msg):
            F.affine_grid(dg.zeros(*theta), size, align_corners=False)
        with pytest.raises(exc, match=msg):
            TF.affine_grid(torch.zeros(*theta), size, align_corners=False)
