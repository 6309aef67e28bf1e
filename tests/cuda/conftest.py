"""Fixtures for the CUDA suite: the device under test, and the CPU reference helpers."""
import numba
import pytest

import dynagrad as dg

if not dg.cuda.is_available():  # numba-cuda missing: the suite cannot run at all
    raise RuntimeError("tests/cuda needs numba-cuda (pip install -e '.[test]'); with no GPU the "
                       "suite runs on Numba's CUDA simulator")

SIMULATOR = bool(numba.config.ENABLE_CUDASIM)  # no GPU here: kernels run as Python threads


@pytest.fixture
def cuda():
    """The CUDA device under test (the simulator on machines without a GPU)."""
    return dg.device("cuda:0")


def _same(gpu_tensor, cpu_reference, rtol=1e-5, atol=1e-6):
    """A CUDA result equals the CPU result: values (NaN matching NaN), shape and dtype."""
    assert gpu_tensor.is_cuda, f"expected a cuda tensor, got {gpu_tensor.device}"
    dg.testing.assert_close(gpu_tensor.detach().cpu(), cpu_reference.detach(), rtol=rtol,
                            atol=atol, equal_nan=True)


@pytest.fixture
def same():
    """``same(gpu_result, cpu_result)``: assert a CUDA result matches the CPU reference."""
    return _same
