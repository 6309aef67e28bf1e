"""Records of the complex-number ops (ops/complex.py).

The harness's inputs under test are real arrays, so an op that takes a complex tensor is called
on ``view_as_complex`` of a real ``(..., 2)`` input (its real and imaginary parts) and, where it
returns a complex tensor, compared through ``view_as_real``: forward against NumPy complex128,
gradients by finite differences and against torch's (the conjugate Wirtinger convention). The
complex outputs of ``complex``, ``polar`` and ``view_as_complex`` are compared as they are.
tests/test_complex.py checks the complex behaviour directly (dtypes, printing, errors).
"""
from __future__ import annotations

import numpy as np
import torch
from opinfo import OpInfo, Sample, sampler, signed, uniform

import dynagrad as dg

TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12), "complex64": (1e-5, 1e-5),
       "complex128": (1e-12, 1e-12)}
DTYPES = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}


def _to_complex(dt):
    return dt.to_complex()


def _z(x):
    """The complex values a real ``(..., 2)`` array holds."""
    return x[..., 0] + 1j * x[..., 1]


def _parts(z):
    return np.stack([z.real, z.imag], -1)


def _lib(lib):
    return dg if lib == "dg" else torch


def through_complex(name, fn, ref, real_out=False, differentiable=True):
    """A record of ``fn(lib, z)`` on the complex view of a real ``(..., 2)`` input; a complex
    result is compared as its ``view_as_real``."""
    def call(lib):
        def run(x):
            out = fn(_lib(lib), _lib(lib).view_as_complex(x))
            return out if real_out else _lib(lib).view_as_real(out.resolve_conj())
        return run
    forward = [Sample((uniform((3, 4, 2), 1),)), Sample((uniform((2, 5, 2), 2),))]
    grad = [Sample((uniform((3, 4, 2), 3),))]
    cuda = [Sample((signed((2, 3, 2), 4),))]
    return OpInfo(name, "complex", sampler(forward, grad, cuda),
                  lambda x: ref(_z(x)) if real_out else _parts(ref(_z(x))), DTYPES,
                  op=call("dg"), torch=call("torch"), tol=TOL, differentiable=differentiable)


def _real_pair(name, ref):
    """An op of two real float tensors with a complex result (``complex``, ``polar``)."""
    forward = [Sample((uniform((3, 4), 1, 0.1, 2), uniform((3, 4), 2))),
               Sample((uniform((3, 1), 3, 0.1, 2), uniform((4,), 4)))]
    grad = [Sample((uniform((2, 3), 5, 0.1, 2), uniform((2, 3), 6)))]
    cuda = [Sample((signed((2, 3), 7), signed((2, 3), 8)))]
    return OpInfo(name, "complex", sampler(forward, grad, cuda), ref, DTYPES, tol=TOL,
                  out_dtype=_to_complex)


def _flag(name):
    """A bool query (``is_conj``...) as a one-element tensor, for the harness."""
    def call(lib):
        return lambda x: _lib(lib).tensor([getattr(_lib(lib), name)(x)], device=x.device)
    forward = [Sample((uniform((3,), 1),))]
    return OpInfo(name, "complex", sampler(forward, (), forward), lambda x: np.array(
        [name == "is_complex" and False]), DTYPES, op=call("dg"), torch=call("torch"),
        differentiable=False)


_SGN = np.vectorize(lambda z: 0j if z == 0 else z / abs(z))

RECORDS = [
    _real_pair("complex", lambda re, im: re + 1j * im),
    _real_pair("polar", lambda a, t: a * np.exp(1j * t)),
    through_complex("view_as_real", lambda lib, z: z, lambda z: z),
    OpInfo("view_as_complex", "complex", sampler(
        [Sample((uniform((3, 4, 2), 1),))], [Sample((uniform((2, 3, 2), 2),))],
        [Sample((signed((2, 3, 2), 3),))]), _z, DTYPES, tol=TOL, out_dtype=_to_complex),
    through_complex("real", lambda lib, z: lib.real(z), lambda z: z.real, real_out=True),
    through_complex("imag", lambda lib, z: lib.imag(z), lambda z: z.imag, real_out=True),
    through_complex("conj", lambda lib, z: z.conj(), np.conj),
    through_complex("conj_physical", lambda lib, z: lib.conj_physical(z), np.conj),
    through_complex("resolve_conj", lambda lib, z: lib.resolve_conj(z.conj()), np.conj),
    through_complex("resolve_neg", lambda lib, z: lib.resolve_neg(z), lambda z: z),
    through_complex("adjoint", lambda lib, z: z.adjoint(), lambda z: np.conj(np.swapaxes(z, -1, -2))),
    through_complex("angle", lambda lib, z: lib.angle(z), np.angle, real_out=True),
    through_complex("sgn", lambda lib, z: lib.sgn(z), _SGN),
    through_complex("isreal", lambda lib, z: lib.isreal(z * (z.real > 0)),
                    lambda z: (z * (z.real > 0)).imag == 0, real_out=True, differentiable=False),
    _flag("is_conj"), _flag("is_neg"), _flag("is_complex"),
]
