"""Order statistics, NaN-aware reductions, running extremes, sets, histograms, searches and
differences: the records of tests/opinfos/statistics.py (forward against float64 NumPy, gradients
by finite differences, PyTorch parity), then PyTorch parity at ties, NaN and empty inputs,
numerically hard inputs, in-place forms and errors.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import dynagrad as dg
from harness import assert_values, check_op
from opinfo import family, params
from opinfos.statistics import TOL

check = functools.partial(assert_values, tol=TOL)
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("info,dtype", params(family("statistics")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)
