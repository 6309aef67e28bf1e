"""Numba's start-up BLAS probe answers without importing SciPy; jitted np.dot still works."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from dynagrad._runtime import blas_probe as _blas_probe

# a fresh process: the first kernel (Numba's CPU target starts), then a jitted np.dot
_PROBE = """
import json, sys
import numpy as np
import dynagrad as dg
(dg.ones(3) + 1).tolist()
report = {"linalg_after_kernel": "scipy.linalg" in sys.modules}
import numba
import numba.np.arraymath
report["have_blas"] = numba.np.arraymath._HAVE_BLAS
report["check_restored"] = numba.np.linalg.ensure_blas.__name__ == "ensure_blas"

@numba.njit
def dot(a, b):
    return np.dot(a, b)

report["dot"] = dot(np.arange(4.0).reshape(2, 2), np.ones((2, 2))).tolist()
report["linalg_after_dot"] = "scipy.linalg" in sys.modules
print(json.dumps(report))
"""


def _scipy_blas_importable() -> bool:
    try:
        return importlib.util.find_spec("scipy.linalg.cython_blas") is not None
    except ImportError:
        return False


def test_finds_scipy_blas_as_importing_would():
    assert _blas_probe._scipy_blas_on_disk() == _scipy_blas_importable()


@pytest.mark.skipif(not _scipy_blas_importable(), reason="SciPy (Numba's BLAS for np.dot)")
def test_first_kernel_skips_scipy_and_jitted_dot_still_uses_blas():
    # (the test run's kernel cache: the add kernel is likely on disk already)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=dict(os.environ), text=True,
                         capture_output=True, check=True).stdout
    assert json.loads(out) == {"linalg_after_kernel": False, "have_blas": True,
                               "check_restored": True, "dot": [[1.0, 1.0], [5.0, 5.0]],
                               "linalg_after_dot": True}
