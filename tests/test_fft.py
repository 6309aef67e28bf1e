"""dg.fft: the records of tests/opinfos/fft.py (every transform against numpy.fft in float64 and
complex128 for several n/s, dims and norms; gradients by finite differences and against torch's),
then dtype rules, errors, frequencies and shifts against torch.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from harness import check_op
from opinfo import family, params

import dynagrad as dg


@pytest.mark.parametrize("info,dtype", params(family("fft")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


@pytest.mark.parametrize("name,dtype,want", [
    ("fft", "float32", "complex64"), ("fft", "float64", "complex128"), ("fft", "int64", "complex64"),
    ("rfft", "float64", "complex128"), ("irfft", "complex64", "float32"),
    ("hfft", "complex128", "float64"), ("ihfft", "float32", "complex64"),
    ("fftn", "complex128", "complex128"), ("irfft", "float64", "float64")])
def test_dtype_rules_match_torch(name, dtype, want):
    x = np.arange(1, 7).astype(getattr(np, dtype) if dtype != "int64" else np.int64)
    d = getattr(dg.fft, name)(dg.tensor(x))
    t = getattr(torch.fft, name)(torch.tensor(x))
    assert d.dtype.name == want == str(t.dtype).replace("torch.", "")
    np.testing.assert_allclose(d.numpy(), t.resolve_conj().numpy(), rtol=1e-5, atol=1e-5)


def test_round_trips_and_complex_gradient_by_finite_differences():
    x = dg.tensor(np.random.default_rng(1).standard_normal((3, 8)), dtype=dg.float64)
    np.testing.assert_allclose(dg.fft.irfft(dg.fft.rfft(x)).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(dg.fft.ifftn(dg.fft.fftn(x)).real.numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(dg.fft.hfft(dg.fft.ihfft(x)).numpy(), x.numpy(), atol=1e-12)
    # a real loss of a complex leaf: grad = dL/dx + i dL/dy
    z0 = np.random.default_rng(2).standard_normal(5) * (1 + 0.5j)

    def loss(z):
        return float(dg.fft.irfft(dg.tensor(z), n=7).square().sum()
                     + dg.fft.fft(dg.tensor(z), norm="ortho").abs().sum())
    z = dg.tensor(z0, requires_grad=True)
    (dg.fft.irfft(z, n=7).square().sum() + dg.fft.fft(z, norm="ortho").abs().sum()).backward()
    eps, fd = 1e-6, np.zeros(5, complex)
    for i in range(5):
        for step in (1, 1j):
            e = np.zeros(5, complex)
            e[i] = eps * step
            fd[i] += step * (loss(z0 + e) - loss(z0 - e)) / (2 * eps)
    np.testing.assert_allclose(z.grad.numpy(), fd, rtol=1e-6, atol=1e-6)


def test_double_backward_matches_torch():
    x0 = np.random.default_rng(3).standard_normal(6)
    grads = []
    for lib in (dg, torch):
        x = lib.tensor(x0, requires_grad=True)
        (g,) = (dg.autograd.grad if lib is dg else torch.autograd.grad)(
            lib.fft.rfft(x).abs().square().sum(), x, create_graph=True)
        (g * g).sum().backward()
        grads.append(x.grad.numpy() if lib is dg else x.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kwargs", [{}, {"d": 0.5}, {"dtype": "float64"}])
@pytest.mark.parametrize("name,n", [("fftfreq", 5), ("fftfreq", 6), ("rfftfreq", 5),
                                    ("rfftfreq", 6)])
def test_frequencies_match_torch(name, n, kwargs):
    kw_dg = {k: getattr(dg, v) if k == "dtype" else v for k, v in kwargs.items()}
    kw_t = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    d, t = getattr(dg.fft, name)(n, **kw_dg), getattr(torch.fft, name)(n, **kw_t)
    assert d.dtype.name == str(t.dtype).replace("torch.", "") and not d.requires_grad
    np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-7)


def test_shifts_of_integers_match_torch():
    for name in ("fftshift", "ifftshift"):
        for dim in (None, 0, (0, 1), -1):
            x = np.arange(12).reshape(3, 4)
            d = getattr(dg.fft, name)(dg.tensor(x), dim=dim)
            t = getattr(torch.fft, name)(torch.tensor(x), dim=dim)
            assert d.tolist() == t.tolist() and d.dtype is dg.int64


@pytest.mark.parametrize("call,exc,msg", [
    (lambda lib, x: lib.fft.fft(x, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    (lambda lib, x: lib.fft.fft(x, n=0), RuntimeError,
     "Invalid number of data points (0) specified"),
    (lambda lib, x: lib.fft.rfft(x * 1j), RuntimeError,
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda lib, x: lib.fft.ihfft(x * 1j), RuntimeError,
     "ihfft expects a real input tensor, but got ComplexFloat"),
    (lambda lib, x: lib.fft.fft(x, dim=3), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    (lambda lib, x: lib.fft.fftn(x, s=(4,), dim=(0, 1)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    (lambda lib, x: lib.fft.fftn(x, s=(4, 5, 6)), RuntimeError,
     "Got shape with 3 values but input tensor only has 2 dimensions."),
    (lambda lib, x: lib.fft.rfftn(x, dim=()), RuntimeError,
     "rfftn must transform at least one axis"),
    (lambda lib, x: lib.fft.fftn(x, dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
    (lambda lib, x: lib.fft.irfft(x[:, :1].to(lib.complex64)), RuntimeError,
     "Invalid number of data points (0) specified"),
    (lambda lib, x: lib.fft.fft(x.half()), RuntimeError, "Unsupported dtype Half"),
    (lambda lib, x: lib.fft.ihfftn(x * 1j), RuntimeError,
     "Only supports floating-point dtypes, but found: ComplexFloat"),
    (lambda lib, x: lib.fft.hfftn(x, dim=()), RuntimeError, "hfftn must transform at least one axis"),
    (lambda lib, x: lib.fft.fft(x.sum()), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
])
def test_errors_match_torch(call, exc, msg):
    for lib in (dg, torch):
        with pytest.raises(exc) as info:
            call(lib, lib.ones(2, 3))
        assert msg in str(info.value), lib


def test_empty_dims_copy_and_scalars():
    x = dg.tensor([[1.0, 2.0]])
    y = dg.fft.fftn(x, dim=())
    assert y.dtype is dg.complex64 and y.tolist() == [[1 + 0j, 2 + 0j]]
    assert dg.fft.fftn(dg.tensor(3.0)).item() == 3 + 0j
    assert dg.fft.Tensor is dg.Tensor


# --- windows, stft, istft -----------------------------------------------------------------

_SCIPY_WINDOWS = {"hann_window": "hann", "hamming_window": "hamming",
                  "blackman_window": "blackman", "bartlett_window": "bartlett",
                  "kaiser_window": ("kaiser", 12.0)}


@pytest.mark.parametrize("name", sorted(_SCIPY_WINDOWS))
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch_and_scipy(name, n, periodic):
    from scipy.signal import get_window
    d = getattr(dg, name)(n, periodic, dtype=dg.float64)
    t = getattr(torch, name)(n, periodic, dtype=torch.float64)
    np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
    if n > 1:
        want = get_window(_SCIPY_WINDOWS[name], n, fftbins=periodic)
        np.testing.assert_allclose(d.numpy(), want, rtol=1e-12, atol=1e-12)
    assert getattr(dg, name)(n).dtype is dg.float32


def test_window_arguments():
    np.testing.assert_allclose(dg.hamming_window(6, True, 0.5, 0.5).numpy(),
                               torch.hamming_window(6, True, 0.5, 0.5).numpy(), atol=1e-7)
    np.testing.assert_allclose(dg.kaiser_window(6, False, 3.0).numpy(),
                               torch.kaiser_window(6, False, 3.0).numpy(), atol=1e-6)
    assert dg.hann_window(4, requires_grad=True).requires_grad
    for lib in (dg, torch):
        with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
            lib.hann_window(4, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="requires non-negative window_length"):
            lib.hann_window(-1)


def test_stft_against_direct_framing():
    x = np.random.default_rng(4).standard_normal(30)
    w = np.hanning(9)[:-1]  # periodic Hann of 8 points
    got = dg.stft(dg.tensor(x), 8, hop_length=3, window=dg.tensor(w), return_complex=True,
                  center=False)
    frames = np.stack([x[k:k + 8] * w for k in range(0, 30 - 8 + 1, 3)])
    np.testing.assert_allclose(got.numpy(), np.fft.rfft(frames, axis=-1).T, atol=1e-12)


def test_stft_istft_round_trip():
    x = np.random.default_rng(5).standard_normal((2, 40))
    w = dg.hann_window(16, dtype=dg.float64)
    spec = dg.stft(dg.tensor(x), 16, hop_length=4, window=w, return_complex=True)
    back = dg.istft(spec, 16, hop_length=4, window=w, length=40)
    np.testing.assert_allclose(back.numpy(), x, atol=1e-12)
    real_form = dg.stft(dg.tensor(x), 16, hop_length=4, window=w, return_complex=False)
    np.testing.assert_allclose(dg.view_as_complex(real_form).numpy(), spec.numpy())
    assert dg.tensor(x).stft(16, window=w, return_complex=True).shape == (2, 9, 11)


@pytest.mark.parametrize("call,msg", [
    (lambda lib, x: lib.stft(x, 8), "stft requires the return_complex parameter be given"),
    (lambda lib, x: lib.stft(x, 8, hop_length=0, return_complex=True),
     "expected hop_length > 0, but got hop_length=0"),
    (lambda lib, x: lib.stft(x, 8, win_length=9, return_complex=True),
     "expected 0 < win_length <= n_fft, but got win_length=9"),
    (lambda lib, x: lib.stft(x, 8, window=lib.ones(7), return_complex=True),
     "expected a 1D window tensor of size equal to win_length=8, but got window with size [7]"),
    (lambda lib, x: lib.istft(lib.stft(x, 8, return_complex=True), 8, window=lib.zeros(8)),
     "window overlap add min"),
])
def test_stft_errors_match_torch(call, msg):
    for lib in (dg, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib, lib.ones(16, dtype=lib.float64))
        assert msg in str(info.value), lib
