"""Fixtures for the CUDA suite: the device under test, and the CPU reference helpers."""
import numba
import pytest

import dynagrad as dg
from harness import assert_same_on_device

if not dg.cuda.is_available():  # numba-cuda missing: the suite cannot run at all
    raise RuntimeError("tests/cuda needs numba-cuda (pip install -e '.[test]'); with no GPU the "
                       "suite runs on Numba's CUDA simulator")

SIMULATOR = bool(numba.config.ENABLE_CUDASIM)  # no GPU here: kernels run as Python threads


@pytest.fixture
def cuda():
    """The CUDA device under test (the simulator on machines without a GPU)."""
    return dg.device("cuda:0")


@pytest.fixture
def same():
    """``same(gpu_result, cpu_result)``: assert a CUDA result matches the CPU reference."""
    return assert_same_on_device
