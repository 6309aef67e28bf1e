"""interpolate / Upsample (nearest, nearest-exact, linear, bilinear, trilinear; size, scale_factor,
align_corners), pixel_shuffle / pixel_unshuffle and ZeroPad2d against PyTorch 2.13."""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

torch = pytest.importorskip("torch")

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"interpolate"}

tnn = torch.nn
TF = torch.nn.functional


def _check(fn_ours, fn_torch, x, rtol=1e-5, atol=1e-6):
    """Same output and same input gradient (for a random upstream gradient)."""
    xo, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = fn_ours(xo), fn_torch(xt)
    assert tuple(yo.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(x.dtype)
    yo.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)


_SIZES = [dict(size=(8, 9)), dict(size=(3, 2)), dict(size=5), dict(size=(1, 1)),
          dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=(0.5, 3)),
          dict(scale_factor=2.3, recompute_scale_factor=True)]


@pytest.mark.parametrize("kw", _SIZES, ids=str)
@pytest.mark.parametrize("mode,align", [("nearest", None), ("nearest-exact", None),
                                        ("bilinear", False), ("bilinear", True)])
def test_interpolate_4d_matches_torch(kw, mode, align):
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 7)).astype(np.float32)
    _check(lambda t: F.interpolate(t, mode=mode, align_corners=align, **kw),
           lambda t: TF.interpolate(t, mode=mode, align_corners=align, **kw), x)


@pytest.mark.parametrize("kw", [dict(size=4), dict(size=11), dict(scale_factor=2.5),
                                dict(scale_factor=0.6)], ids=str)
@pytest.mark.parametrize("mode,align", [("nearest", None), ("linear", False), ("linear", True)])
def test_interpolate_3d_matches_torch(kw, mode, align):
    x = np.random.default_rng(2).standard_normal((2, 3, 7)).astype(np.float32)
    _check(lambda t: F.interpolate(t, mode=mode, align_corners=align, **kw),
           lambda t: TF.interpolate(t, mode=mode, align_corners=align, **kw), x)


@pytest.mark.parametrize("mode,align", [("nearest", None), ("trilinear", False),
                                        ("trilinear", True)])
def test_interpolate_5d_matches_torch(mode, align):
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4, 2)).astype(np.float32)
    _check(lambda t: F.interpolate(t, size=(5, 3, 4), mode=mode, align_corners=align),
           lambda t: TF.interpolate(t, size=(5, 3, 4), mode=mode, align_corners=align), x)


def test_interpolate_float64_and_gradcheck():
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 4))
    _check(lambda t: F.interpolate(t, scale_factor=1.5, mode="bilinear"),
           lambda t: TF.interpolate(t, scale_factor=1.5, mode="bilinear"), x, 1e-12, 1e-12)
    xo = dg.tensor(x, requires_grad=True)
    assert dg.autograd.gradcheck(
        lambda t: F.interpolate(t, size=(5, 3), mode="bilinear", align_corners=True), (xo,))
    assert dg.autograd.gradcheck(lambda t: F.interpolate(t, size=(7, 2)), (xo,))


def test_interpolate_same_size_returns_new_tensor():
    x = dg.randn(1, 1, 3, 3)
    y = F.interpolate(x, size=(3, 3))
    assert y is not x
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_interpolate_errors():
    x3, x4 = dg.randn(1, 1, 5), dg.randn(1, 1, 2, 2)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(x3, scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x3, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x3)
    with pytest.raises(ValueError, match="align_corners option can only be set with the "
                                         "interpolating modes"):
        F.interpolate(x4, size=3, align_corners=True)
    with pytest.raises(ValueError, match=r"same number of spatial dimensions, but got input with "
                                         r"spatial dimensions of \[5\] and output size of "
                                         r"\(3, 3\)"):
        F.interpolate(x3, size=(3, 3))
    with pytest.raises(ValueError, match="scale_factor must have the same number"):
        F.interpolate(x4, scale_factor=(2, 2, 2))
    with pytest.raises(NotImplementedError, match="mode 'bicubic' is not supported"):
        F.interpolate(x4, size=3, mode="bicubic")
    with pytest.raises(RuntimeError, match="floating point"):
        F.interpolate(dg.ones(1, 1, 2, dtype=dg.int64), size=3)


@pytest.mark.parametrize("args,kw", [((), dict(scale_factor=2)),
                                     ((), dict(size=(4, 6), mode="bilinear")),
                                     ((), dict(scale_factor=(2.0, 1.5), mode="bilinear",
                                               align_corners=True))], ids=str)
def test_upsample_module_matches_torch(args, kw):
    ours, theirs = nn.Upsample(*args, **kw), tnn.Upsample(*args, **kw)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(5).standard_normal((2, 2, 3, 4)).astype(np.float32)
    _check(ours, theirs, x)
    np.testing.assert_allclose(F.upsample(dg.tensor(x), **kw).numpy(),
                               theirs(torch.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_upsampling_aliases():
    x = np.random.default_rng(6).standard_normal((1, 2, 3, 3)).astype(np.float32)
    _check(nn.UpsamplingBilinear2d(scale_factor=2), tnn.UpsamplingBilinear2d(scale_factor=2), x)
    _check(nn.UpsamplingNearest2d(size=(5, 4)), tnn.UpsamplingNearest2d(size=(5, 4)), x)


# --- pixel shuffle ------------------------------------------------------------------------

@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((9, 2, 2), 3), ((2, 1, 4, 1, 1), 1)])
def test_pixel_shuffle_matches_torch(shape, r):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    _check(lambda t: F.pixel_shuffle(t, r), lambda t: TF.pixel_shuffle(t, r), x)
    m, tm = nn.PixelShuffle(r), tnn.PixelShuffle(r)
    assert repr(m) == repr(tm)


@pytest.mark.parametrize("shape,r", [((2, 2, 4, 6), 2), ((1, 6, 6), 3)])
def test_pixel_unshuffle_matches_torch_and_inverts(shape, r):
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    _check(lambda t: F.pixel_unshuffle(t, r), lambda t: TF.pixel_unshuffle(t, r), x)
    assert repr(nn.PixelUnshuffle(r)) == repr(tnn.PixelUnshuffle(r))
    xt = dg.tensor(x)
    np.testing.assert_array_equal(F.pixel_shuffle(F.pixel_unshuffle(xt, r), r).numpy(), x)


def test_pixel_shuffle_errors():
    with pytest.raises(RuntimeError, match=r"divisible by the square of upscale_factor, but "
                                           r"input.size\(-3\)=3 is not divisible by 4"):
        F.pixel_shuffle(dg.randn(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match=r"height to be divisible by downscale_factor, but "
                                           r"input.size\(-2\)=3 is not divisible by 2"):
        F.pixel_unshuffle(dg.randn(1, 3, 3, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(dg.randn(4, 2), 2)


# --- ZeroPad2d ----------------------------------------------------------------------------

@pytest.mark.parametrize("padding", [2, (1, 0, 3, 2), (0, 1, 0, 0)])
def test_zero_pad2d_matches_torch(padding):
    ours, theirs = nn.ZeroPad2d(padding), tnn.ZeroPad2d(padding)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(9).standard_normal((2, 3, 4, 5)).astype(np.float32)
    _check(ours, theirs, x)
    x3 = np.random.default_rng(10).standard_normal((3, 2, 2)).astype(np.float32)
    _check(ours, theirs, x3)


def test_zero_pad2d_bad_padding():
    with pytest.raises(ValueError, match="4-tuple"):
        nn.ZeroPad2d((1, 2))
