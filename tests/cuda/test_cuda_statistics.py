"""Order statistics, sets, histograms and searches on CUDA (Numba's simulator without a GPU).
Their indices and counts come from NumPy on the host (a round trip, see dynagrad/ops/statistics.py
and ops/sets.py): every result, integer ones included, must come back to the tensors' device with
the CPU's values, in-place forms must write the device tensor, and gradients stay on the device.
Each op's record also runs its CUDA sample in test_cuda_ops.py.
"""
import numpy as np
import pytest
from harness import assert_same_on_device
from opinfo import signed

import dynagrad as dg

CALLS = {  # name: the call on tensors of one device (x float32 (2, 3), distinct; n small ints)
    "median_dim": lambda x, n: x.median(1),
    "median": lambda x, n: x.median(),
    "nanmedian_transposed": lambda x, n: x.t().nanmedian(1, keepdim=True),
    "kthvalue": lambda x, n: x.kthvalue(2, 0),
    "mode": lambda x, n: n.mode(),
    "quantile_tensor_q": lambda x, n: dg.quantile(x, x.new_tensor([0.2, 0.9]), 1),
    "cummax": lambda x, n: x.cummax(1),
    "cummin_int": lambda x, n: n.cummin(0),
    "logcumsumexp": lambda x, n: x.logcumsumexp(0),
    "aminmax": lambda x, n: x.aminmax(dim=0),
    "unique": lambda x, n: n.unique(return_inverse=True, return_counts=True),
    "unique_consecutive_dim": lambda x, n: (x > 0).long().unique_consecutive(dim=1),
    "isin": lambda x, n: dg.isin(n, n[:2]),
    "bincount_weights": lambda x, n: n.bincount(x.reshape(-1)[:5], minlength=7),
    "histc": lambda x, n: x.histc(4, -1, 1),
    "histogram_edges": lambda x, n: x.histogram(x.new_tensor([-1.0, 0.0, 0.5, 1.0])),
    "searchsorted_sorter": lambda x, n: dg.searchsorted(n, x, sorter=n.argsort()),
    "bucketize": lambda x, n: dg.bucketize(x, x.new_tensor([-0.5, 0.0, 0.5]), right=True),
    "diff_append": lambda x, n: x.diff(append=x[:, :1]),
    "trapezoid_x": lambda x, n: dg.trapezoid(x, x.new_tensor([0.0, 0.5, 2.0])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_come_back_to_the_device(name, cuda):
    x, n = signed((2, 3), 3).astype(np.float32), np.array([3, 0, 2, 0, 5])
    got = CALLS[name](dg.tensor(x, device=cuda), dg.tensor(n, device=cuda))
    want = CALLS[name](dg.tensor(x), dg.tensor(n))
    got, want = (list(got), list(want)) if isinstance(want, tuple) else ([got], [want])
    for g, w in zip(got, want):
        assert g.device == cuda
        assert_same_on_device(g, w)


def test_in_place_forms_on_the_device(cuda):
    x = signed((2, 3), 4).astype(np.float32)
    for name, args in (("cumsum_", (1,)), ("cumprod_", (0,)), ("renorm_", (2, 0, 0.5))):
        got, want = dg.tensor(x, device=cuda), dg.tensor(x)
        assert getattr(got, name)(*args) is got and got.device == cuda
        getattr(want, name)(*args)
        assert_same_on_device(got, want)


def test_gradients_stay_on_the_device(cuda):
    x = signed((2, 3), 5).astype(np.float32)
    for call in (lambda t: t.median(1).values, lambda t: t.median(), lambda t: t.cummax(0).values,
                 lambda t: t.logcumsumexp(1), lambda t: dg.quantile(t, 0.3, 1),
                 lambda t: t.renorm(2, 0, 0.5)):
        grads = []
        for device in (cuda, "cpu"):
            t = dg.tensor(x, device=device, requires_grad=True)
            call(t).sum().backward()
            grads.append(t.grad)
        assert grads[0].device == cuda
        assert_same_on_device(*grads)
