"""Records of the discrete Fourier transforms (ops/fft.py, ``dg.fft``): forward against
``numpy.fft`` in float64 / complex128, gradients by finite differences and against torch's, for
several sizes ``n``/``s``, dims and norms. A transform of complex input is called on the
``view_as_complex`` of a real ``(..., 2)`` input. tests/test_fft.py checks the rest (errors,
frequencies, stft).
"""
from __future__ import annotations

import numpy as np
import torch
from opinfo import OpInfo, Sample, sampler, signed, uniform

import dynagrad as dg

TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "complex64": (1e-4, 1e-4),
       "complex128": (1e-10, 1e-10)}
DTYPES = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}
_NORMS = (None, "ortho", "forward")


def _lib(lib):
    return dg if lib == "dg" else torch


def _out_dtype(kind):
    return (lambda dt: dt.to_complex()) if kind == "c" else (lambda dt: dt)


def transform(name, kwargs_list, shape, complex_input, out_kind, np_ref=None):
    """A record of ``<lib>.fft.<name>`` over samples with each of ``kwargs_list`` (and each
    norm); a complex input is the complex view of a real ``shape + (2,)`` array."""
    full = shape + (2,) if complex_input else shape

    def call(lib):
        def run(x, **kw):
            if complex_input:
                x = _lib(lib).view_as_complex(x)
            return getattr(_lib(lib).fft, name)(x, **kw)
        return run

    def ref(x, dim=None, **kw):
        z = x[..., 0] + 1j * x[..., 1] if complex_input else x
        if isinstance(dim, int):
            kw["axis"] = dim
        elif dim is not None or "s" in kw:  # (NumPy wants the axes of s named)
            kw["axes"] = dim if dim is not None else tuple(range(-len(kw["s"]), 0))
        return (np_ref or getattr(np.fft, name))(z, **kw)
    forward = [Sample((uniform(full, k),), dict(kw, norm=norm))
               for k, kw in enumerate(kwargs_list) for norm in _NORMS]
    grad = [Sample((uniform(full, 10 + k),), dict(kw, norm=norm))
            for k, (kw, norm) in enumerate(zip(kwargs_list, _NORMS))]
    cuda = [Sample((signed(full, 20),), kwargs_list[-1])]
    return OpInfo(f"fft_{name}", "fft", sampler(forward, grad, cuda), ref, DTYPES,
                  op=call("dg"), torch=call("torch"), tol=TOL, out_dtype=_out_dtype(out_kind))


def _numpy_hfftn(z, s=None, axes=(-2, -1), norm=None):
    """NumPy has hfft in one dimension only: the n-dimensional one is ``irfftn`` of the
    conjugate, scaled as a forward transform (its "backward" norm is ``irfftn``'s "forward")."""
    swap = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    return np.fft.irfftn(np.conj(z), s=s, axes=axes, norm=swap[norm])


def _numpy_ihfftn(x, s=None, axes=(-2, -1), norm=None):
    swap = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=swap[norm]))


_1D = [{}, {"n": 7, "dim": 0}, {"n": 3, "dim": 1}]
_IRFFT_1D = [{}, {"n": 5, "dim": 0}, {"n": 8}]
_ND = [{}, {"s": (3, 6)}, {"dim": (0, 1)}, {"s": (2, 5), "dim": (1, 0)}]
_2D = [{}, {"s": (3, 6)}, {"dim": (0, 1)}]


def _shift(name):
    forward = [Sample((uniform((4, 5), 1),)), Sample((uniform((4, 5), 2),), {"dim": 1}),
               Sample((uniform((3, 4, 5), 3),), {"dim": (0, 2)})]
    grad = [Sample((uniform((3, 4), 4),), {"dim": 0})]
    cuda = [Sample((signed((3, 4), 5),))]
    return OpInfo(f"fft_{name}", "fft", sampler(forward, grad, cuda),
                  lambda x, dim=None: getattr(np.fft, name)(x, axes=dim), DTYPES,
                  torch=f"fft.{name}", tol=TOL)


RECORDS = [
    transform("fft", _1D, (4, 5), False, "c"),
    transform("ifft", _1D, (4, 5), True, "c"),
    transform("rfft", _1D, (4, 6), False, "c"),
    transform("irfft", _IRFFT_1D, (4, 5), True, "r"),
    transform("hfft", _IRFFT_1D, (4, 5), True, "r"),
    transform("ihfft", _1D, (4, 6), False, "c"),
    transform("fft2", _2D, (2, 4, 5), True, "c"),
    transform("ifft2", _2D, (2, 4, 5), False, "c"),
    transform("fftn", _ND, (4, 5), False, "c"),
    transform("ifftn", _ND, (4, 5), True, "c"),
    transform("rfft2", _2D, (2, 4, 6), False, "c"),
    transform("irfft2", _2D, (2, 4, 5), True, "r"),
    transform("rfftn", _ND, (4, 6), False, "c"),
    transform("irfftn", _ND, (4, 5), True, "r"),
    transform("hfft2", _2D, (2, 4, 5), True, "r", lambda z, **kw: _numpy_hfftn(z, **kw)),
    transform("hfftn", _ND, (4, 5), True, "r", lambda z, **kw: _numpy_hfftn(z, **kw)),
    transform("ihfft2", _2D, (2, 4, 6), False, "c", lambda x, **kw: _numpy_ihfftn(x, **kw)),
    transform("ihfftn", _ND, (4, 6), False, "c", lambda x, **kw: _numpy_ihfftn(x, **kw)),
    _shift("fftshift"),
    _shift("ifftshift"),
]


def _short_time(name, kwargs_list):
    """``stft`` (real signals) and ``istft`` (of the complex view of a real ``(freq, frames,
    2)`` input) with torch as the oracle: ``scipy.signal``'s conventions differ (it scales by the
    window sum), so tests/test_fft.py checks the transform against a direct NumPy framing."""
    def call(lib):
        def run(x, n_fft, window=None, **kw):
            w = None if window is None else getattr(_lib(lib), window)(
                kw.get("win_length", n_fft), dtype=x.dtype, device=x.device)
            if name == "stft":
                return _lib(lib).stft(x, n_fft, window=w, return_complex=True, **kw)
            return _lib(lib).istft(_lib(lib).view_as_complex(x), n_fft, window=w, **kw)
        return run
    shapes = {"stft": [(20,), (2, 19)], "istft": [(5, 11, 2), (2, 5, 9, 2)]}[name]
    forward = [Sample((uniform(shapes[k % 2], k),), kw) for k, kw in enumerate(kwargs_list)]
    grad = [Sample((uniform(shapes[0], 9),), kwargs_list[1]),
            Sample((uniform(shapes[1], 8),), kwargs_list[-1])]
    cuda = [Sample((signed(shapes[0], 7),), kwargs_list[0])]
    return OpInfo(name, "fft", sampler(forward, grad, cuda), None, DTYPES, op=call("dg"),
                  torch=call("torch"), tol=TOL)


RECORDS += [
    _short_time("stft", [{"n_fft": 8}, {"n_fft": 8, "hop_length": 3, "win_length": 5,
                                        "window": "hann_window"},
                         {"n_fft": 6, "center": False, "normalized": True},
                         {"n_fft": 8, "onesided": False, "pad_mode": "constant",
                          "window": "hamming_window"}]),
    _short_time("istft", [{"n_fft": 8, "window": "hann_window"},
                          {"n_fft": 8, "hop_length": 2, "window": "hann_window", "length": 17},
                          {"n_fft": 8, "normalized": True, "window": "blackman_window"},
                          {"n_fft": 8, "hop_length": 3, "win_length": 6,
                           "window": "hann_window"}]),
]
