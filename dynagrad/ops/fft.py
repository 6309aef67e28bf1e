"""Discrete Fourier transforms (``dg.fft``), the short-time transforms ``stft``/``istft`` and the
window functions.

Every transform is one of three primitives, each one ``scipy.fft`` call on the host buffer (a host
round trip on CUDA: the buffer is copied to the host, transformed and copied back):
``_c2c`` (complex to complex, forward or inverse), ``_r2c`` (real to the one-sided half spectrum of
the last transformed dim) and ``_c2r`` (its inverse), each with an explicit scale, so the norm
modes are only a choice of scale. Their gradients are primitives again (PyTorch's formulas: the
adjoint of a c2c is the other direction with the same scale; of an r2c, the inverse c2c of the
zero-padded gradient, real part; of a c2r, the r2c of the gradient with the bins that stand for
two conjugate bins doubled), so double backward and every device work.

Example:
    >>> import dynagrad as dg
    >>> dg.fft.rfft(dg.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..kernels.buffers import device_index, host, move_array
from ..tensor import Tensor, _wrap
from ._util import as_tensor_arg
from .complex import conj, real
from .registry import register

_TORCH_NAMES = {"float16": "Half", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _scipy_fft():
    """``scipy.fft``, imported on the first transform: importing it takes a large share of
    ``import dynagrad``'s time, which a program without FFTs should not pay."""
    import scipy.fft
    return scipy.fft


# --- the primitives -----------------------------------------------------------------------

def _result(res: np.ndarray, dt, like: Tensor) -> Tensor:
    res = np.asarray(res, dtype=dt.np, order="C")
    return _wrap(move_array(res, device_index(like._data)), dt)


def _record(cls, x: Tensor, out: Tensor, **attrs) -> Tensor:
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = cls()
        node.__dict__.update(attrs)
        record(node, (x,), (out,))
    return out


_C2CNode = node_class("FftC2CBackward0", lambda node, g: (
    _c2c(g, node.dims, node.scale, not node.forward),))


def _c2c(x: Tensor, dims: tuple, scale: float, forward: bool) -> Tensor:
    """``scale`` times the unnormalized forward (or inverse) DFT of complex ``x`` over ``dims``."""
    fn = _scipy_fft().fftn if forward else _scipy_fft().ifftn
    res = fn(host(x._data), axes=dims, norm="backward" if forward else "forward")
    out = _result(res * scale if scale != 1 else res, x.dtype, x)
    return _record(_C2CNode, x, out, dims=dims, scale=scale, forward=forward)


def _r2c_back(node, g):
    last = node.dims[-1]
    pad = node.n - g.shape[last]
    if pad > 0:  # the bins the one-sided spectrum leaves out: zero
        shape = list(g.shape)
        shape[last] = pad
        from .movement import cat
        g = cat([g, g.new_zeros(tuple(shape))], last)
    return (real(_c2c(g, node.dims, node.scale, False)),)


_R2CNode = node_class("FftR2CBackward0", _r2c_back)


def _r2c(x: Tensor, dims: tuple, scale: float) -> Tensor:
    """``scale`` times the DFT of real ``x`` over ``dims``, the last of them one-sided."""
    res = _scipy_fft().rfftn(host(x._data), axes=dims, norm="backward")
    out = _result(res * scale if scale != 1 else res, x.dtype.to_complex(), x)
    return _record(_R2CNode, x, out, dims=dims, scale=scale, n=x.shape[dims[-1]])


def _c2r_back(node, g):
    gi = _r2c(g, node.dims, node.scale)
    last = node.dims[-1]
    double = node.n - gi.shape[last]  # bins 1 .. double each stand for a conjugate pair
    if double > 0:
        w = np.ones(gi.shape[last], gi.dtype.to_real().np)
        w[1:1 + double] = 2.0
        w = w.reshape((-1,) + (1,) * (gi.ndim - 1 - last))
        gi = gi * _result(w, gi.dtype.to_real(), gi)
    return (gi,)


_C2RNode = node_class("FftC2RBackward0", _c2r_back)


def _c2r(x: Tensor, dims: tuple, scale: float, n: int) -> Tensor:
    """``scale`` times the unnormalized inverse DFT over ``dims`` of a one-sided spectrum ``x``
    (last dim ``n // 2 + 1`` long), a real result whose last transformed dim has ``n`` points."""
    sizes = [x.shape[d] for d in dims[:-1]] + [n]
    res = _scipy_fft().irfftn(host(x._data), s=sizes, axes=dims, norm="forward")
    out = _result(res * scale if scale != 1 else res, x.dtype.to_real(), x)
    return _record(_C2RNode, x, out, dims=dims, scale=scale, n=n)


# --- arguments ----------------------------------------------------------------------------

def _scale(norm, n: int, forward: bool) -> float:
    """The factor a transform of ``n`` points applies in norm mode ``norm`` (None: "backward")."""
    mode = "backward" if norm is None else norm
    if mode not in ("backward", "ortho", "forward"):
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if mode == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 if (mode == "backward") == forward else 1.0 / n


def _type_name(dt) -> str:
    return _TORCH_NAMES.get(dt.name, dt.name)


def _as_complex(x: Tensor) -> Tensor:
    """``x`` in the complex dtype its transform runs in (integers: the default's)."""
    if x.dtype.is_complex:
        return x
    if x.dtype is dtypes.float16:
        raise RuntimeError("Unsupported dtype Half")
    dt = x.dtype if x.dtype.is_floating_point else dtypes.get_default_dtype()
    return x.to(dt.to_complex())


def _as_real(x: Tensor, name: str) -> Tensor:
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_type_name(x.dtype)}")
    if x.dtype is dtypes.float16:
        raise RuntimeError("Unsupported dtype Half")
    return x if x.dtype.is_floating_point else x.to(dtypes.get_default_dtype())


def _dim(x: Tensor, dim, name: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, "
                         f"{x.ndim - 1}], but got {dim})")
    return int(dim) % x.ndim


def _dims(x: Tensor, s, dim, name: str) -> tuple:
    """(dims, sizes) of an n-dimensional transform: PyTorch's rules for ``s`` and ``dim``
    (sizes -1 or None keep the input's)."""
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    if s is not None:
        s = tuple(s)
        if dim is None:
            if len(s) > x.ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                                   f"{x.ndim} dimensions.")
            dim = tuple(range(x.ndim - len(s), x.ndim))
        elif len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    dims = tuple(range(x.ndim)) if dim is None else tuple(_dim(x, d, name) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = tuple(x.shape[d] if s is None or s[k] in (-1, None) else int(s[k])
                  for k, d in enumerate(dims))
    return dims, sizes


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: tuple, sizes: tuple) -> Tensor:
    """``x`` cut or zero-padded at the end of each of ``dims`` to ``sizes`` (differentiable)."""
    for d, n in zip(dims, sizes):
        _check_points(n)
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            shape = list(x.shape)
            shape[d] = n - have
            from .movement import cat
            x = cat([x, x.new_zeros(tuple(shape))], d)
    return x


# --- the transforms -----------------------------------------------------------------------

def fft(input, n=None, dim: int = -1, norm=None) -> Tensor:
    """The one-dimensional DFT over ``dim`` (``n`` points: cut or zero-padded); real input gives
    the complex dtype of its precision.

    Example: ``dg.fft.fft(dg.tensor([1.0, 0.0]))`` is ``tensor([1.+0.j, 1.+0.j])``.
    """
    x = _as_complex(as_tensor_arg(input, "fft"))
    d = _dim(x, dim, "fft_fft")
    x = _resize(x, (d,), (x.shape[d] if n is None else n,))
    return _c2c(x, (d,), _scale(norm, x.shape[d], True), True)


def ifft(input, n=None, dim: int = -1, norm=None) -> Tensor:
    """The one-dimensional inverse DFT over ``dim``."""
    x = _as_complex(as_tensor_arg(input, "ifft"))
    d = _dim(x, dim, "fft_ifft")
    x = _resize(x, (d,), (x.shape[d] if n is None else n,))
    return _c2c(x, (d,), _scale(norm, x.shape[d], False), False)


def _c2c_n(input, s, dim, norm, forward: bool, name: str) -> Tensor:
    x = _as_complex(as_tensor_arg(input, name))
    dims, sizes = _dims(x, s, dim, name)
    x = _resize(x, dims, sizes)
    if not dims:  # nothing to transform: a copy in the complex dtype
        return x.clone() if x is input else x
    return _c2c(x, dims, _scale(norm, math.prod(sizes), forward), forward)


def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional DFT over ``dim`` (all dims, or the last ``len(s)``, by default)."""
    return _c2c_n(input, s, dim, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional inverse DFT."""
    return _c2c_n(input, s, dim, norm, False, "ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional DFT over the last two dims."""
    return _c2c_n(input, s, dim, norm, True, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional inverse DFT over the last two dims."""
    return _c2c_n(input, s, dim, norm, False, "ifft2")


def rfft(input, n=None, dim: int = -1, norm=None) -> Tensor:
    """The DFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    x = _as_real(as_tensor_arg(input, "rfft"), "rfft")
    d = _dim(x, dim, "fft_rfft")
    x = _resize(x, (d,), (x.shape[d] if n is None else n,))
    return _r2c(x, (d,), _scale(norm, x.shape[d], True))


def _r2c_n(input, s, dim, norm, name: str) -> Tensor:
    x = _as_real(as_tensor_arg(input, name), name)
    dims, sizes = _dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(x, dims, sizes)
    return _r2c(x, dims, _scale(norm, math.prod(sizes), True))


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional DFT of a real signal, one-sided in the last transformed dim."""
    return _r2c_n(input, s, dim, norm, "rfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional DFT of a real signal, one-sided in the last dim."""
    return _r2c_n(input, s, dim, norm, "rfft2")


def irfft(input, n=None, dim: int = -1, norm=None) -> Tensor:
    """The inverse of ``rfft``: a real signal of ``n`` points (default ``2 * (m - 1)`` for ``m``
    input bins) from its one-sided spectrum."""
    x = _as_complex(as_tensor_arg(input, "irfft"))
    d = _dim(x, dim, "fft_irfft")
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(n)
    x = _resize(x, (d,), (n // 2 + 1,))
    return _c2r(x, (d,), _scale(norm, n, False), n)


def _c2r_n(input, s, dim, norm, name: str) -> Tensor:
    x = _as_complex(as_tensor_arg(input, name))
    dims, sizes = _dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = dims[-1]
    n = 2 * (x.shape[last] - 1) if s is None or s[-1] in (-1, None) else sizes[-1]
    _check_points(n)
    x = _resize(x, dims, sizes[:-1] + (n // 2 + 1,))
    return _c2r(x, dims, _scale(norm, math.prod(sizes[:-1]) * n, False), n)


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``rfftn``."""
    return _c2r_n(input, s, dim, norm, "irfftn")


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The inverse of ``rfft2``."""
    return _c2r_n(input, s, dim, norm, "irfft2")


def hfft(input, n=None, dim: int = -1, norm=None) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: a real spectrum of ``n``
    points (``irfft`` of the conjugate, scaled as a forward transform)."""
    x = _as_complex(as_tensor_arg(input, "hfft"))
    d = _dim(x, dim, "fft_hfft")
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(n)
    x = _resize(x, (d,), (n // 2 + 1,))
    return _c2r(conj(x), (d,), _scale(norm, n, True), n)


def ihfft(input, n=None, dim: int = -1, norm=None) -> Tensor:
    """The inverse of ``hfft``: the first half of the Hermitian spectrum of a real signal."""
    x = _as_real(as_tensor_arg(input, "ihfft"), "ihfft")
    d = _dim(x, dim, "fft_ihfft")
    x = _resize(x, (d,), (x.shape[d] if n is None else n,))
    return conj(_r2c(x, (d,), _scale(norm, x.shape[d], False)))


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional ``hfft``: a real spectrum from the half of a Hermitian-symmetric
    signal (one-sided in the last dim)."""
    return _hermitian_n(input, s, dim, norm, "hfftn")


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional ``hfft``."""
    return _hermitian_n(input, s, dim, norm, "hfft2")


def _hermitian_n(input, s, dim, norm, name: str) -> Tensor:
    x = _as_complex(as_tensor_arg(input, name))
    dims, sizes = _dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    n = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] in (-1, None) else sizes[-1]
    _check_points(n)
    x = _resize(x, dims, sizes[:-1] + (n // 2 + 1,))
    return _c2r(conj(x), dims, _scale(norm, math.prod(sizes[:-1]) * n, True), n)


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``hfftn``: the one-sided Hermitian spectrum of a real signal."""
    return _inverse_hermitian_n(input, s, dim, norm, "ihfftn")


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The inverse of ``hfft2``."""
    return _inverse_hermitian_n(input, s, dim, norm, "ihfft2")


def _inverse_hermitian_n(input, s, dim, norm, name: str) -> Tensor:
    x = as_tensor_arg(input, name)
    if x.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{_type_name(x.dtype)}")
    x = _as_real(x, name)
    dims, sizes = _dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(x, dims, sizes)
    return conj(_r2c(x, dims, _scale(norm, math.prod(sizes), False)))


# --- frequencies and shifts ---------------------------------------------------------------

def _frequencies(values: np.ndarray, dtype, device, requires_grad) -> Tensor:
    from ..creation import tensor
    return tensor(values, dtype=dtype or dtypes.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``: ``[0, 1, ...,
    -2, -1] / (d * n)``."""
    return _frequencies(np.fft.fftfreq(n, d), dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point ``rfft``."""
    return _frequencies(np.fft.rfftfreq(n, d), dtype, device, requires_grad)


def _shift(input, dim, sign: int, name: str) -> Tensor:
    x = as_tensor_arg(input, name)
    if dim is None:
        dims = tuple(range(x.ndim))
    else:
        dims = tuple(_dim(x, d, name) for d in ((dim,) if isinstance(dim, int) else dim))
    if not dims:
        return x.clone()
    from .movement import roll
    return roll(x, tuple(sign * (x.shape[d] // 2) for d in dims), dims)


def fftshift(input, dim=None) -> Tensor:
    """Move the zero frequency to the centre of ``dim`` (all dims by default)."""
    return _shift(input, dim, 1, "fftshift")


def ifftshift(input, dim=None) -> Tensor:
    """The inverse of ``fftshift``."""
    return _shift(input, dim, -1, "ifftshift")


TRANSFORMS = (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn,
              hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn, fftshift, ifftshift)
for _fn in TRANSFORMS:
    # registered as PyTorch's internal names (torch._C._fft.fft_rfft): dg.fft is a namespace,
    # so these are neither dg.<name> nor Tensor methods
    register(f"fft_{_fn.__name__}", _fn, "fft", method=False, functional=False)


# --- windows ------------------------------------------------------------------------------

def _window(name: str, window_length: int, periodic: bool, values, dtype, device,
            requires_grad: bool) -> Tensor:
    """A window of ``window_length`` points from ``values(n)`` (the symmetric window of ``n``
    points, float64); a periodic window is the symmetric one of ``window_length + 1`` points
    without its last."""
    dt = dtypes.get_default_dtype() if dtype is None else dtype
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt.name}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        w = np.ones(window_length)
    else:
        w = values(window_length + 1)[:-1] if periodic else values(window_length)
    from ..creation import tensor
    return tensor(w, dtype=dt, device=device, requires_grad=requires_grad)


def _cosine_sum(*coefficients):
    """``sum_k (-1)^k a_k cos(2 pi k n / (N - 1))``: the generalized cosine windows."""
    def values(n):
        phase = 2.0 * np.pi * np.arange(n) / (n - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))
    return values


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (periodic: ``N = length + 1``).

    Example: ``dg.hann_window(4)`` is ``tensor([0.0000, 0.5000, 1.0000, 0.5000])``.
    """
    return _window("hann_window", window_length, periodic, _cosine_sum(0.5, 0.5), dtype,
                   device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, _cosine_sum(alpha, beta), dtype,
                   device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, _cosine_sum(0.42, 0.5, 0.08),
                   dtype, device, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The triangular Bartlett window ``1 - |2n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic,
                   lambda n: 1.0 - np.abs(2.0 * np.arange(n) / (n - 1) - 1.0), dtype, device,
                   requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)``, ``a = (N - 1) / 2``."""
    def values(n):
        a = (n - 1) / 2.0
        return np.i0(beta * np.sqrt(np.clip(1.0 - ((np.arange(n) - a) / a) ** 2, 0.0, None))) \
            / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, values, dtype, device,
                   requires_grad)


WINDOWS = (bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window)


# --- short-time transforms ----------------------------------------------------------------

def _describe_call(name: str, x: Tensor, n_fft, hop, win, window, **flags) -> str:
    w = "None" if window is None else f"Tensor{list(window.shape)}"
    rest = ", ".join(f"{k}={v}" for k, v in flags.items())
    return (f"{name}(Tensor{list(x.shape)} {x.dtype.name}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, {rest})")


def _stft_window(name, x, n_fft, hop, win, window, flags) -> Tensor:
    """The window padded to ``n_fft`` points, centred (a rectangle when None), after checking
    the arguments as PyTorch does."""
    what = _describe_call(name, x, n_fft, hop, win, window, **flags)
    if not 0 < n_fft:
        raise RuntimeError(f"{what}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{what}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{what}: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is None:
        from ..creation import ones
        window = ones(win, dtype=x.dtype.to_real(), device=x.device)
    elif window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(f"{what}: expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size {list(window.shape)}")
    left = (n_fft - win) // 2
    if left or n_fft - win - left:
        from .movement import pad
        window = pad(window, (left, n_fft - win - left))
    return window


def _frame_index(n_frames: int, n_fft: int, hop: int, device) -> Tensor:
    from ..creation import tensor
    idx = np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]
    return tensor(idx, dtype=dtypes.int64, device=device)


def stft(input, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided=None, return_complex=None,
         align_to_window=None) -> Tensor:
    """The short-time Fourier transform, as ``torch.stft``: frames of ``n_fft`` points every
    ``hop_length`` (default ``n_fft // 4``), each times the window (centred and zero-padded to
    ``n_fft``), transformed; shape ``(batch?, freq, frames)``. Composed of ops (padding,
    indexing, ``fft.rfft``/``fft.fft``), so it is differentiable and runs on every device.

    Example: ``dg.stft(x, 8, window=dg.hann_window(8), return_complex=True)``.
    """
    x = as_tensor_arg(input, "stft")
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    flags = {"normalized": int(normalized), "onesided": onesided,
             "return_complex": None if return_complex is None else int(return_complex)}
    if return_complex is None:
        if not (x.dtype.is_complex or (window is not None and window.dtype.is_complex)):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    if align_to_window:
        raise NotImplementedError("stft: align_to_window=True is not supported")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, got {x.ndim}D")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(dtypes.get_default_dtype())
    w = _stft_window("stft", x, n_fft, hop, win, window, flags)
    batched = x.ndim == 2
    if not batched:
        x = x.unsqueeze(0)
    if center:
        from .movement import pad
        p = n_fft // 2
        if x.dtype.is_complex:  # (pad the real and imaginary parts as a real tensor)
            x = view_as_complex_contiguous(pad(real_parts_first(x), (p, p), mode=pad_mode))
        else:
            x = pad(x.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{_describe_call('stft', x, n_fft, hop, win, window, **flags)}: "
                           f"expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    n_frames = 1 + (length - n_fft) // hop
    idx = _frame_index(n_frames, n_fft, hop, x.device)
    if x.dtype.is_complex:
        from .complex import view_as_complex, view_as_real
        frames = view_as_complex(view_as_real(x)[:, idx].contiguous())
    else:
        frames = x[:, idx]  # (batch, frames, n_fft)
    frames = frames * w
    side = onesided if onesided is not None else not (x.dtype.is_complex or w.dtype.is_complex)
    if side and frames.dtype.is_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = (rfft if side else fft)(frames, dim=-1, norm=norm).transpose(1, 2)
    if not batched:
        spec = spec.squeeze(0)
    if not return_complex:
        from .complex import view_as_real
        return view_as_real(spec.contiguous())
    return spec


def real_parts_first(z: Tensor) -> Tensor:
    """A complex ``(..., n)`` tensor as a real ``(..., 2, n)`` one: parts along a new dim."""
    from .complex import view_as_real
    return view_as_real(z).movedim(-1, -2)


def view_as_complex_contiguous(x: Tensor) -> Tensor:
    """The inverse of ``real_parts_first`` (a contiguous copy where the layout needs one)."""
    from .complex import view_as_complex
    return view_as_complex(x.movedim(-2, -1).contiguous())


def istft(input, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
          normalized: bool = False, onesided=None, length=None,
          return_complex: bool = False) -> Tensor:
    """The inverse of ``stft`` by overlap-add, divided by the summed squared window, as
    ``torch.istft``; input ``(batch?, freq, frames)`` complex. Composed of ops (``fft.irfft``,
    ``scatter_add``), so it is differentiable and runs on every device."""
    z = as_tensor_arg(input, "istft")
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    flags = {"center": int(center), "normalized": int(normalized), "onesided": onesided,
             "length": length, "return_complex": int(return_complex)}
    if not z.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor")
    if z.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"dtype, but got {z.ndim}")
    w = _stft_window("istft", z, n_fft, hop, win, window, flags)
    batched = z.ndim == 3
    if not batched:
        z = z.unsqueeze(0)
    side = onesided if onesided is not None else z.shape[-2] != n_fft
    if side:
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        if z.shape[-2] != n_fft // 2 + 1:
            raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of "
                               f"the input tensor to match n_fft / 2 + 1 when onesided=True, but "
                               f"got {z.shape[-2]}")
    elif z.shape[-2] != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{z.shape[-2]}")
    norm = "ortho" if normalized else "backward"
    spec = z.transpose(1, 2)  # (batch, frames, freq)
    if return_complex:
        frames = ifft(spec, dim=-1, norm=norm)
    else:  # a real signal: the one-sided half (of a two-sided input too, as PyTorch)
        frames = irfft(spec.narrow(-1, 0, n_fft // 2 + 1), n=n_fft, dim=-1, norm=norm)
    frames = frames * w
    batch, n_frames = frames.shape[0], frames.shape[1]
    total = n_fft + hop * (n_frames - 1)
    idx = _frame_index(n_frames, n_fft, hop, None).reshape(-1)
    # the window envelope: the summed squared window under each output point (no gradient)
    env = np.zeros(total)
    np.add.at(env, host(idx._data), np.tile(host(w.detach()._data).astype(np.float64) ** 2,
                                            n_frames).real)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    stop = min(end, total)
    if np.abs(env[start:stop]).min(initial=np.inf) < 1e-11:
        raise RuntimeError(f"{_describe_call('istft', z, n_fft, hop, win, window, **flags)} "
                           f"window overlap add min: {np.abs(env[start:stop]).min()}")
    y = _overlap_add(frames.reshape(batch, -1), idx.to(frames.device), total)
    from ..creation import tensor
    y = y[:, start:stop] / tensor(env[start:stop], dtype=y.dtype.to_real(), device=y.device)
    if end > total:  # a requested length past the signal: zeros
        from .movement import pad
        y = pad(y, (0, end - total))
    return y if batched else y.squeeze(0)


def _overlap_add(flat: Tensor, idx: Tensor, total: int) -> Tensor:
    """``out[:, idx[k]] += flat[:, k]``, an output of ``total`` points per row (scatter_add;
    a complex input adds its real and imaginary parts separately)."""
    if flat.dtype.is_complex:
        from .complex import complex as make_complex
        from .complex import imag
        return make_complex(_overlap_add(real(flat), idx, total),
                            _overlap_add(imag(flat), idx, total))
    out = flat.new_zeros((flat.shape[0], total))
    return out.scatter_add(1, idx.unsqueeze(0).expand(flat.shape[0], idx.shape[0]), flat)


register("stft", stft, "fft")
register("istft", istft, "fft")
