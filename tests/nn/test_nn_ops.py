"""The registered nn ops (family "nn"): each record of tests/opinfos/nn.py checked against torch
in float64 and float32, with gradcheck (and torch's gradients) in float64."""
import pytest

from harness import check_op
from opinfo import family, params


@pytest.mark.parametrize("info,dtype", params(family("nn")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)
