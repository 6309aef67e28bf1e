"""Records of ``nn.functional`` ops that are not registered ops (yet): the activations, with torch
as the only oracle (``ref=None``).

Each runs in float64 and float32 on one input holding the kinks of the piecewise activations
(0 and +-3), compared with torch's values and input gradients (at the kinks as well); gradcheck
and gradgradcheck in float64 on the same input moved off the kinks. Names are
``nn.functional.<name>``; when an op joins the registry, its record moves to ``RECORDS`` under
the registered name.
"""
from __future__ import annotations

import numpy as np

import dynagrad as dg
import dynagrad.nn.functional as F
from opinfo import OpInfo, Sample

X = np.random.default_rng(0).standard_normal((3, 5)) * 3
X[0, :3] = [0.0, 3.0, -3.0]  # kinks of the piecewise activations

TOL = {"float64": (1e-12, 1e-12), "float32": (2e-6, 2e-6)}


def _off_kinks(x):
    """``x`` moved away from the kinks: finite differences need the distance."""
    x = x.copy()
    x[np.abs(np.abs(x) - 3.0) < 1e-3] += 0.01
    x[np.abs(x) < 1e-3] += 0.01
    return x


def activation(name, *kwargs, grad_tol64=1e-12):
    """``F.<name>`` called with each of ``kwargs`` (the same for torch)."""
    x = X[:2, :4] if name == "glu" else X  # glu needs an even size along dim

    def sampler(dtype, device="cpu", requires_grad=False):
        samples = [Sample((x,), kw, gradcheck=False) for kw in kwargs or [{}]]
        if requires_grad and dtype is dg.float64:
            samples += [Sample((_off_kinks(x),), kw) for kw in kwargs or [{}]]
        return samples
    return OpInfo(f"nn.functional.{name}", "nn", sampler, None,
                  {"cpu": (dg.float64, dg.float32)}, op=getattr(F, name),
                  torch=f"nn.functional.{name}", tol=TOL,
                  grad_tol={"float64": (grad_tol64,) * 2, "float32": TOL["float32"]},
                  gradgrad=True)


NN_RECORDS = [
    activation("relu"), activation("relu6"), activation("leaky_relu", {"negative_slope": 0.1}),
    activation("elu", {"alpha": 0.7}), activation("selu"),
    # torch's celu and hardsigmoid backward use float32 constants (1/alpha, 1/6) even for float64
    # inputs (ours are exact, as gradcheck confirms): agreement to float32 precision only
    activation("celu", {"alpha": 1.3}, grad_tol64=1e-6),
    activation("gelu", {}, {"approximate": "tanh"}), activation("silu"), activation("mish"),
    activation("sigmoid"), activation("tanh"),
    activation("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    activation("hardsigmoid", grad_tol64=1e-6), activation("hardswish"),
    activation("softplus", {}, {"beta": 2.0, "threshold": 3.0}), activation("softsign"),
    activation("softshrink", {"lambd": 0.7}), activation("hardshrink", {"lambd": 0.7}),
    activation("tanhshrink"), activation("threshold", {"threshold": 0.3, "value": -2.0}),
    activation("logsigmoid"), activation("softmax", {"dim": 1}, {"dim": 0}),
    activation("log_softmax", {"dim": 1}, {"dim": 0}), activation("softmin", {"dim": 1}),
    activation("glu", {"dim": 1}, {"dim": 0}),
]
