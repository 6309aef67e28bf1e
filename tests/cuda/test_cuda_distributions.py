"""dg.distributions on a CUDA device (the simulator without a GPU): tiny shapes, results equal
to the CPU's for the same parameters and seed."""
import numpy as np

import dynagrad as dg
import dynagrad.distributions as D


def on(dev, *values):
    return [dg.tensor(np.asarray(v, dtype=np.float32), device=dev) for v in values]


def test_families_on_cuda_match_cpu(cuda):
    x = [0.3, 1.2]
    makers = [
        lambda dev: D.Normal(*on(dev, [0.0, 1.0], [1.0, 2.0])),
        lambda dev: D.Gamma(*on(dev, [0.7, 2.0], [1.0, 0.5])),
        lambda dev: D.Beta(*on(dev, [0.7, 2.0], [1.5, 0.5])),
        lambda dev: D.Poisson(*on(dev, [0.7, 2.0])),
    ]
    values = {"Normal": x, "Gamma": x, "Beta": [0.3, 0.6], "Poisson": [0.0, 2.0]}
    for make in makers:
        outputs = {}
        for dev in ("cpu", cuda):
            d = make(dev)
            (v,) = on(dev, values[type(d).__name__])
            dg.manual_seed(11)
            outputs[str(dev)] = (d.log_prob(v), d.sample((2,)))
        for c, g in zip(outputs["cpu"], outputs["cuda:0"]):
            assert g.is_cuda
            np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-5)


def test_multivariate_normal_and_kl_on_cuda(cuda):
    loc, cov = on(cuda, [0.5, -1.0], [[2.0, 0.3], [0.3, 1.0]])
    d = D.MultivariateNormal(loc, covariance_matrix=cov)
    cpu = D.MultivariateNormal(loc.cpu(), covariance_matrix=cov.cpu())
    (x,) = on(cuda, [0.1, 0.2])
    assert d.log_prob(x).is_cuda
    np.testing.assert_allclose(d.log_prob(x).cpu().numpy(), cpu.log_prob(x.cpu()).numpy(),
                               rtol=1e-5)
    q = D.Normal(*on(cuda, [0.0, 1.0], [1.0, 2.0]))
    p = D.Normal(*on(cuda, [0.5, 0.5], [1.5, 1.0]))
    kl = D.kl_divergence(p, q)
    assert kl.is_cuda and (kl.cpu().numpy() > 0).all()
