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
import scipy.fft as sfft

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..kernels.buffers import device_index, host, move_array
from ..tensor import Tensor, _wrap
from ._util import as_tensor_arg
from .complex import conj, real
from .registry import register

_TORCH_NAMES = {"float16": "Half", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


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
    fn = sfft.fftn if forward else sfft.ifftn
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
    res = sfft.rfftn(host(x._data), axes=dims, norm="backward")
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
    res = sfft.irfftn(host(x._data), s=sizes, axes=dims, norm="forward")
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
              hfft, ihfft, fftshift, ifftshift)
for _fn in TRANSFORMS:
    # registered as PyTorch's internal names (torch._C._fft.fft_rfft): dg.fft is a namespace,
    # so these are neither dg.<name> nor Tensor methods
    register(f"fft_{_fn.__name__}", _fn, "fft", method=False, functional=False)
