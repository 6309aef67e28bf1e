"""Records of the nn ops (family "nn"), with torch as the only oracle (``ref=None``): the
registered ones in ``RECORDS``, the ``nn.functional`` compositions that are not registered ops in
``NN_RECORDS``.

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


def activation(name, *kwargs, grad_tol64=1e-12, registered=False):
    """``F.<name>`` called with each of ``kwargs`` (the same for torch); a registered op's record
    takes its registered name."""
    x = X[:2, :4] if name == "glu" else X  # glu needs an even size along dim

    def sampler(dtype, device="cpu", requires_grad=False):
        samples = [Sample((x,), kw, gradcheck=False) for kw in kwargs or [{}]]
        if requires_grad and dtype is dg.float64:
            samples += [Sample((_off_kinks(x),), kw) for kw in kwargs or [{}]]
        return samples
    return OpInfo(name if registered else f"nn.functional.{name}", "nn", sampler, None,
                  {"cpu": (dg.float64, dg.float32), "cuda": (dg.float32,) if registered else ()},
                  op=getattr(F, name),
                  torch=f"nn.functional.{name}", tol=TOL,
                  grad_tol={"float64": (grad_tol64,) * 2, "float32": TOL["float32"]},
                  gradgrad=True)


def _registered(name, *kwargs, **kw):
    return activation(name, *kwargs, registered=True, **kw)


NN_RECORDS = [
    activation("relu"), activation("relu6"), activation("sigmoid"), activation("tanh"),
    activation("tanhshrink"), activation("softmin", {"dim": 1}),
    activation("glu", {"dim": 1}, {"dim": 0}),
]

ACTIVATIONS = [
    _registered("leaky_relu", {"negative_slope": 0.1}), _registered("elu", {"alpha": 0.7}),
    _registered("selu"),
    # torch's celu and hardsigmoid backward use float32 constants (1/alpha, 1/6) even for float64
    # inputs (ours are exact, as gradcheck confirms): agreement to float32 precision only
    _registered("celu", {"alpha": 1.3}, grad_tol64=1e-6),
    _registered("gelu", {}, {"approximate": "tanh"}), _registered("silu"), _registered("mish"),
    _registered("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    _registered("hardsigmoid", grad_tol64=1e-6), _registered("hardswish"),
    _registered("softplus", {}, {"beta": 2.0, "threshold": 3.0}), _registered("softsign"),
    _registered("softshrink", {"lambd": 0.7}), _registered("hardshrink", {"lambd": 0.7}),
    _registered("threshold", {"threshold": 0.3, "value": -2.0}), _registered("logsigmoid"),
    _registered("softmax", {"dim": 1}, {"dim": 0}),
    _registered("log_softmax", {"dim": 1}, {"dim": 0}),
]


# --- the layers: small samples, torch's values and gradients, gradcheck in float64 -------------

LAYER_TOL = {"float64": (1e-10, 1e-10), "float32": (3e-5, 3e-5)}


def _rand(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed + len(shape)).uniform(low, high, shape)


def _ints(values):
    return np.asarray(values, dtype=np.int64)


def layer(name, make, torch_name=None, differentiable=True):
    """The record of nn op ``name``: ``make(dtype)`` gives its samples (float arrays are the
    inputs under test, differentiated in float64; int arrays and tensors fixed operands)."""
    def sampler(dtype, device="cpu", requires_grad=False):
        if requires_grad and dtype is not dg.float64:
            return []
        return list(make(dtype))  # (tiny: the same samples serve the CUDA simulator)
    return OpInfo(name, "nn", sampler, None,
                  {"cpu": (dg.float64, dg.float32), "cuda": (dg.float32,)},
                  torch=torch_name or f"nn.functional.{name}", differentiable=differentiable,
                  tol=LAYER_TOL, grad_tol=LAYER_TOL)


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _fixed(values, dtype):
    """A fixed float operand (a target) in the dtype under test."""
    return dg.tensor(np.asarray(values), dtype=dtype)


S = Sample
LAYERS = [
    layer("conv1d", lambda dt: [S((_rand(2, 2, 7), _rand(3, 2, 3, seed=1), _rand(3, seed=2)),
                                  {"padding": 1, "stride": 2})]),
    layer("conv2d", lambda dt: [S((_rand(1, 2, 5, 5), _rand(3, 2, 3, 3, seed=1), _rand(3, seed=2)),
                                  {"padding": 1}),
                                S((_rand(1, 4, 4, 4), _rand(4, 2, 2, 2, seed=3)),
                                  {"stride": 2, "groups": 2})]),
    layer("conv3d", lambda dt: [S((_rand(1, 2, 3, 4, 4), _rand(2, 2, 2, 2, 2, seed=1),
                                   _rand(2, seed=2)), {"padding": 1})]),
    layer("conv_transpose1d", lambda dt: [S((_rand(1, 2, 5), _rand(2, 3, 3, seed=1),
                                             _rand(3, seed=2)), {"stride": 2, "padding": 1})]),
    layer("conv_transpose2d", lambda dt: [S((_rand(1, 2, 3, 3), _rand(2, 3, 2, 2, seed=1),
                                             _rand(3, seed=2)), {"stride": 2})]),
    layer("conv_transpose3d", lambda dt: [S((_rand(1, 2, 2, 2, 3), _rand(2, 2, 2, 1, 2, seed=1),
                                             _rand(2, seed=2)),
                                            {"stride": (2, 1, 2), "padding": (1, 0, 0),
                                             "output_padding": (1, 0, 1)})]),
    layer("unfold", lambda dt: [S((_rand(1, 2, 4, 4),), {"kernel_size": 2, "padding": 1})]),
    layer("fold", lambda dt: [S((_rand(1, 8, 9),), {"output_size": (4, 4), "kernel_size": 2})]),
    layer("max_pool1d", lambda dt: [S((_rand(2, 2, 7),), {"kernel_size": 2})]),
    layer("max_pool2d", lambda dt: [S((_rand(1, 2, 5, 6),), {"kernel_size": 2}),
                                    S((_rand(1, 1, 5, 5),), {"kernel_size": 3, "stride": 1,
                                                             "padding": 1})]),
    layer("max_pool3d", lambda dt: [S((_rand(1, 2, 3, 4, 5),), {"kernel_size": 2}),
                                    S((_rand(2, 3, 3, 4),), {"kernel_size": (3, 2, 2), "stride": 1,
                                                             "padding": (1, 0, 1),
                                                             "dilation": (1, 2, 1)})]),
    layer("avg_pool1d", lambda dt: [S((_rand(2, 2, 7),), {"kernel_size": 3, "stride": 2})]),
    layer("avg_pool2d", lambda dt: [S((_rand(1, 2, 4, 6),), {"kernel_size": 2}),
                                    S((_rand(1, 1, 5, 5),), {"kernel_size": 3, "padding": 1,
                                                             "stride": 2})]),
    layer("avg_pool3d", lambda dt: [S((_rand(1, 2, 3, 4, 4),), {"kernel_size": 2}),
                                    S((_rand(1, 3, 4, 3),), {"kernel_size": 3, "stride": 2,
                                                             "padding": 1, "ceil_mode": True,
                                                             "count_include_pad": False})]),
    layer("adaptive_avg_pool1d", lambda dt: [S((_rand(2, 2, 7),), {"output_size": 3})]),
    layer("adaptive_avg_pool2d", lambda dt: [S((_rand(1, 2, 5, 7),), {"output_size": (2, 3)})]),
    layer("adaptive_max_pool1d", lambda dt: [S((_rand(2, 2, 7),), {"output_size": 3})]),
    layer("adaptive_max_pool2d", lambda dt: [S((_rand(1, 2, 5, 7),), {"output_size": (2, 3)})]),
    layer("batch_norm", lambda dt: [
        S((_rand(4, 3, 2), None, None, _rand(3, seed=1), _rand(3, seed=2)), {"training": True}),
        S((_rand(4, 3), _fixed([0.1, -0.2, 0.3], dt), _fixed([1.5, 0.5, 2.0], dt),
           _rand(3, seed=1), _rand(3, seed=2)), {"training": False})]),
    layer("instance_norm", lambda dt: [S((_rand(2, 3, 5), None, None, _rand(3, seed=1),
                                          _rand(3, seed=2)))]),
    layer("layer_norm", lambda dt: [S((_rand(3, 4), (4,), _rand(4, seed=1), _rand(4, seed=2)))]),
    layer("group_norm", lambda dt: [S((_rand(2, 4, 3), 2, _rand(4, seed=1), _rand(4, seed=2)))]),
    layer("rms_norm", lambda dt: [S((_rand(3, 4), (4,), _rand(4, seed=1)), {"eps": 1e-6})]),
    layer("prelu", lambda dt: [S((_rand(2, 3, 4), _rand(3, seed=1))),
                               S((_rand(5,), _rand(1, seed=1)))], torch_name="prelu"),
    layer("linear", lambda dt: [S((_rand(3, 4), _rand(2, 4, seed=1), _rand(2, seed=2))),
                                S((_rand(2, 3, 4), _rand(2, 4, seed=1)))]),
    layer("cross_entropy", lambda dt: [S((_rand(4, 5), _ints([0, 3, 4, 1]))),
                                       S((_rand(4, 5), _ints([2, 3, 0, 1])),
                                         {"reduction": "sum", "label_smoothing": 0.1})]),
    layer("nll_loss", lambda dt: [S((_rand(4, 5), _ints([0, 3, 4, 1]))),
                                  S((_rand(4, 5), _ints([2, -100, 0, 1])),
                                    {"reduction": "none"})]),
    layer("binary_cross_entropy", lambda dt: [
        S((_rand(3, 4, low=0.05, high=0.95), _fixed(_rand(3, 4, seed=5, low=0, high=1), dt)))]),
    layer("binary_cross_entropy_with_logits", lambda dt: [
        S((_rand(3, 4), _fixed(_rand(3, 4, seed=5, low=0, high=1), dt)))]),
    layer("mse_loss", lambda dt: [S((_rand(3, 4), _fixed(_rand(3, 4, seed=5), dt)))]),
    layer("huber_loss", lambda dt: [S((_rand(3, 4, low=-2, high=2),
                                       _fixed(_rand(3, 4, seed=5), dt)), {"delta": 0.5})]),
    layer("smooth_l1_loss", lambda dt: [S((_rand(3, 4, low=-2, high=2),
                                           _fixed(_rand(3, 4, seed=5), dt)), {"beta": 0.5})]),
    # CTC's gradient (PyTorch's formula, and ours) takes log_probs to be log-softmax outputs:
    # finite differences leave that set, so its gradients are compared with torch's only
    layer("ctc_loss", lambda dt: [S((_log_softmax(_rand(6, 2, 4)), _ints([[1, 2, 1], [3, 1, 0]]),
                                     _ints([6, 5]), _ints([3, 2])), gradcheck=False)]),
    # dropout draws differ from torch's generator: the records check the identity cases, the
    # draws themselves are tested in tests/nn/test_dropout_embedding.py
    layer("dropout", lambda dt: [S((_rand(3, 4),), {"p": 0.3, "training": False}),
                                 S((_rand(3, 4),), {"p": 0.0, "training": True})]),
    layer("dropout1d", lambda dt: [S((_rand(2, 3, 4),), {"p": 0.3, "training": False})]),
    layer("dropout2d", lambda dt: [S((_rand(2, 3, 2, 2),), {"p": 0.3, "training": False})]),
    layer("dropout3d", lambda dt: [S((_rand(1, 2, 2, 2, 2),), {"p": 0.3, "training": False})]),
    layer("embedding", lambda dt: [S((_ints([[0, 2], [3, 0]]), _rand(4, 3)))]),
    layer("interpolate", lambda dt: [S((_rand(1, 2, 3, 3),), {"scale_factor": 2}),
                                     S((_rand(1, 1, 3, 4),), {"size": (5, 6), "mode": "bilinear",
                                                              "align_corners": False})]),
    layer("rnn_tanh_cell", lambda dt: [S((_rand(2, 3), _rand(2, 4, seed=1), _rand(4, 3, seed=2),
                                          _rand(4, 4, seed=3), _rand(4, seed=4),
                                          _rand(4, seed=5)))], torch_name="rnn_tanh_cell"),
    layer("rnn_relu_cell", lambda dt: [S((_rand(2, 3), _rand(2, 4, seed=1), _rand(4, 3, seed=2),
                                          _rand(4, 4, seed=3), _rand(4, seed=4),
                                          _rand(4, seed=5)))], torch_name="rnn_relu_cell"),
    layer("lstm_cell", lambda dt: [S((_rand(2, 3), (_rand(2, 4, seed=1), _rand(2, 4, seed=6)),
                                      _rand(16, 3, seed=2), _rand(16, 4, seed=3),
                                      _rand(16, seed=4), _rand(16, seed=5)))],
          torch_name="lstm_cell"),
    layer("gru_cell", lambda dt: [S((_rand(2, 3), _rand(2, 4, seed=1), _rand(12, 3, seed=2),
                                     _rand(12, 4, seed=3), _rand(12, seed=4),
                                     _rand(12, seed=5)))], torch_name="gru_cell"),
]

RECORDS = ACTIVATIONS + LAYERS
