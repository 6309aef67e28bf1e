"""Special functions on CUDA (Numba's simulator without a GPU). They compute on the host (a
round trip, see dynagrad/ops/special.py): results must come back to the tensors' device with the
CPU's values, in place as out of place, and gradients (double backward included) stay on the
device. Each op's record also runs its CUDA sample in test_cuda_ops.py.
"""
import numpy as np
import pytest
from harness import assert_same_on_device
from opinfo import uniform

import dynagrad as dg

CALLS = {  # name: the call on tensors of one device (x in (0.2, 0.8), n a small int tensor)
    "lgamma": lambda x, n: dg.lgamma(x),
    "polygamma": lambda x, n: dg.polygamma(2, x),
    "xlogy_scalar": lambda x, n: dg.xlogy(2.0, x),
    "igamma_broadcast": lambda x, n: dg.igamma(x, x[:1] + 1),
    "logit_eps": lambda x, n: dg.logit(x, 0.3),
    "mvlgamma": lambda x, n: dg.mvlgamma(x + 1, 2),
    "ndtri": lambda x, n: dg.special.ndtri(x),
    "bessel_j0": lambda x, n: dg.special.bessel_j0(x),
    "chebyshev_device_n": lambda x, n: dg.special.chebyshev_polynomial_t(x, n),
    "zeta_scalar": lambda x, n: dg.special.zeta(3.0, x),
    "transposed": lambda x, n: dg.erfinv(x.t()),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_come_back_to_the_device(name, cuda):
    x, n = uniform((2, 3), 1, 0.2, 0.8).astype(np.float32), np.array([0, 2, 5])
    got = CALLS[name](dg.tensor(x, device=cuda), dg.tensor(n, device=cuda))
    want = CALLS[name](dg.tensor(x), dg.tensor(n))
    assert got.device == cuda
    assert_same_on_device(got, want)


def test_inplace_on_the_device(cuda):
    x = uniform((2, 3), 2, 0.2, 0.8).astype(np.float32)
    got, want = dg.tensor(x, device=cuda), dg.tensor(x)
    assert got.digamma_() is got and got.device == cuda
    assert_same_on_device(got, want.digamma_())
    got.xlogy_(dg.tensor([1.0, 2.0, 3.0], device=cuda))
    assert_same_on_device(got, want.xlogy_(dg.tensor([1.0, 2.0, 3.0])))


def test_gradients_of_gradients_on_the_device(cuda):
    x = uniform((2, 3), 3, 0.3, 0.8).astype(np.float32)
    grads = {}
    for dev in ("cpu", cuda):
        t = dg.tensor(x, device=dev, requires_grad=True)
        y = (dg.lgamma(t) + dg.special.i1(t) + dg.sinc(t)).sum()
        (g,) = dg.autograd.grad(y, t, create_graph=True)
        g.sum().backward()
        grads[str(dev)] = (g, t.grad)
    assert grads["cuda:0"][1].device == cuda
    for got, want in zip(grads["cuda:0"], grads["cpu"]):
        assert_same_on_device(got, want)


def test_operands_on_two_devices_are_refused(cuda):
    with pytest.raises(RuntimeError, match="same device"):
        dg.xlogy(dg.ones(2), dg.ones(2, device=cuda))
