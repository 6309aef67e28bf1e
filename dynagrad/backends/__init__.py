"""``torch.backends`` as scripts touch it. dynagrad's kernels are its own (Numba-generated), not
cuDNN, MKL, oneDNN or OpenMP ones, so most of these flags are accepted and recorded with no
effect; the one that matters is ``backends.cuda.matmul.allow_tf32``, which reads and sets
``dg.get/set_float32_matmul_precision`` as in PyTorch. As in PyTorch,
``backends.cudnn.deterministic`` does NOT switch on ``use_deterministic_algorithms``.

Example:
    >>> import dynagrad as dg
    >>> dg.backends.cudnn.benchmark = True   # accepted, no effect
    >>> dg.backends.mps.is_available()
    False
"""
from . import cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
