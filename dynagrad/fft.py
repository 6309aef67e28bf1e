"""``dg.fft``: PyTorch's ``torch.fft`` namespace (discrete Fourier transforms, their sample
frequencies and shifts). The transforms live in ``ops/fft.py``; see there for how they run
(``scipy.fft`` on the host buffer; a host round trip on CUDA) and their gradients.

Example:
    >>> import dynagrad as dg
    >>> dg.fft.irfft(dg.fft.rfft(dg.tensor([1.0, 2.0, 3.0, 4.0])))
    tensor([1., 2., 3., 4.])
"""
from .ops.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)
from .tensor import Tensor

__all__ = [
    "Tensor",
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
