"""Complex tensors and dg.fft on CUDA (the simulator where there is no GPU): tiny shapes, the
same values and gradients as on the CPU. (The records of the complex and fft families run here
too, through test_cuda_ops.py.)"""
from __future__ import annotations

import numpy as np
import pytest

import dynagrad as dg

Z = np.array([[1 + 2j, -0.5 + 1j, 3j], [2 - 1j, 0.25 + 0j, -1 - 1j]], np.complex64)
W = np.array([[0.5 - 1j, 2 + 0j, 1 + 1j], [-1j, 1 + 0.5j, 2 - 2j]], np.complex64)

_CASES = {
    "arithmetic": lambda z, w: (z * w - z / (w + 3) + 1j) ** 2,
    "unary": lambda z, w: z.exp() + z.sqrt() + z.tanh() - z.reciprocal(),
    "abs_angle_sgn": lambda z, w: dg.complex(z.abs() + z.angle(), z.sgn().real),
    "reductions": lambda z, w: z.sum(0) + z.mean(1).sum() + z.prod(1).sum(),
    "matmul": lambda z, w: z @ w.mT + dg.einsum("ij,ij->i", z, w).sum(),
    "views": lambda z, w: dg.view_as_complex(dg.view_as_real(z) * 2) + z.conj() + z.imag,
    "fft": lambda z, w: dg.fft.fft(z, norm="ortho") + dg.fft.ifft2(w),
    "rfft_irfft": lambda z, w: dg.fft.irfft(z, n=4) + dg.fft.rfft(w.real, n=6).abs().sum(),
    "hfft": lambda z, w: dg.fft.hfft(z) + dg.fft.ihfft(w.imag).sum().real,
}


def _run(fn, device):
    z = dg.tensor(Z, device=device, requires_grad=True)
    w = dg.tensor(W, device=device, requires_grad=True)
    out = fn(z, w)
    parts = dg.view_as_real(out) if out.is_complex() else out
    weights = np.linspace(0.5, 1.5, parts.numel()).reshape(tuple(parts.shape))
    (parts * dg.tensor(weights, dtype=parts.dtype, device=device)).sum().backward()
    return out, z.grad, w.grad


@pytest.mark.parametrize("name", sorted(_CASES))
def test_complex_on_cuda_matches_cpu(name, cuda, same):
    got, want = _run(_CASES[name], cuda), _run(_CASES[name], "cpu")
    for g, w in zip(got, want):
        if w is None:  # an input the case does not use
            assert g is None
            continue
        assert g.dtype is w.dtype
        same(dg.view_as_real(g) if g.is_complex() else g,
             dg.view_as_real(w) if w.is_complex() else w)


def test_complex_printing_and_transfer_on_cuda(cuda):
    z = dg.tensor([1 + 2j, -1j], device=cuda)
    assert repr(z) == "tensor([1.+2.j, -0.-1.j], device='cuda:0')"  # (torch's print)
    assert z.cpu().tolist() == [1 + 2j, -1j] and z.real.is_cuda and z.imag.cpu().tolist() == [2, -1]
    assert (z == z.clone()).all().item() and z.abs().dtype is dg.float32
