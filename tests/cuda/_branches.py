"""``cuda_branch()``: run code with every tensor claiming ``is_cuda`` while its data stays on the
CPU, so the CUDA branches of nn ops (their compositions of ops) run here in float64 and can be
checked against the fused CPU kernels cheaply. Buffers still dispatch by their real type."""
import contextlib

from dynagrad.tensor import Tensor


@contextlib.contextmanager
def cuda_branch():
    saved = Tensor.__dict__["is_cuda"]
    Tensor.is_cuda = property(lambda self: True)
    try:
        yield
    finally:
        Tensor.is_cuda = saved
