"""``dg.linalg`` on CUDA: each record of tests/opinfos/decompositions.py's ``LINALG_RECORDS`` gives
the same values and gradients on the device as on the CPU (the factorizations make a host round
trip; the gradient formulas run as device ops). The registered ops' records run in
test_cuda_ops.py.
"""
import pytest

from harness import check_op
from opinfo import params
from opinfos.decompositions import LINALG_RECORDS


@pytest.mark.parametrize("info,dtype", params(LINALG_RECORDS, "cuda"))
def test_linalg_on_cuda_matches_cpu(info, dtype, cuda):
    check_op(info, "cuda", dtype)


def test_every_linalg_record_has_cuda_samples():
    missing = [info.name for info in LINALG_RECORDS if not info.sampler(info.dtypes["cuda"][0],
                                                                       device="cuda")]
    assert not missing, f"records without CUDA samples: {missing}"
