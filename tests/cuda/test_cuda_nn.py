"""nn functional ops and modules on CUDA: the composed forms against the fused CPU kernels.

CUDA tensors take the decompositions written next to each fused CPU kernel (``softmax_composite``,
``conv_composite``, ``recurrent_composite``, ...). Two kinds of checks:

* ``test_composite_matches_fused``: each decomposition runs on CPU tensors (inside
  ``ops.nn.composed_on_cpu``: every nn op takes its composed path while the data stays in NumPy)
  in float64 and must equal the fused CPU path, outputs and gradients, to 1e-10. Cheap, and it
  covers every case in ``CASES``.
* ``test_cuda_matches_cpu`` and the module tests: the same calls on a CUDA device (Numba's simulator
  here, so shapes are tiny) in float32 against the CPU.
"""
import contextlib
import copy
import functools

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.ops.nn.rnn import recurrent
from dynagrad.ops.nn import composed_on_cpu
from dynagrad.tensor import Tensor

from harness import assert_all_close

RNG = np.random.default_rng(0)


def f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, size=shape).astype(np.float32)


def ints(*shape, hi):
    return RNG.integers(0, hi, size=shape).astype(np.int64)


class Const:
    """A float input that does not require grad (weights of a loss, running statistics)."""

    def __init__(self, arr):
        self.arr = arr


def _tensors(arrays, device, dtype):
    out = []
    for a in arrays:
        const = isinstance(a, Const)
        a = a.arr if const else a
        if a.dtype.kind == "f":
            a = a.astype(dtype)
        t = dg.tensor(a, device=device)
        if a.dtype.kind == "f" and not const:
            t.requires_grad_()
        out.append(t)
    return out


def _upstream(o: Tensor) -> Tensor:
    g = np.random.default_rng(o.numel()).standard_normal(tuple(o.shape))
    return dg.tensor(g, dtype=o.dtype, device=o.device)


def evaluate(fn, arrays, device=None, dtype=np.float64, composite=False):
    """``(outputs, input gradients)`` on the CPU after ``fn`` and a backward pass of a fixed
    random weighting of its float outputs."""
    tensors = _tensors(arrays, device, dtype)
    with composed_on_cpu() if composite else contextlib.nullcontext():
        outs = fn(*tensors)
        outs = outs if isinstance(outs, tuple) else (outs,)
        terms = [(o * _upstream(o)).sum() for o in outs if o.requires_grad]
        if terms:
            sum(terms[1:], terms[0]).backward()
    return ([o.detach().cpu() for o in outs],
            [None if t.grad is None else t.grad.cpu() for t in tensors])


assert_same = functools.partial(assert_all_close, check_device=False)


def _running(fn):
    """``fn(x, w, b, running_mean, running_var)``'s output plus the updated running stats."""
    def run(x, w, b, rm, rv):
        return fn(x, w, b, rm, rv), rm, rv
    return run


def _embedding_renorm(w, i):
    y = F.embedding(i, w, max_norm=1.0)
    return y, w.detach().clone()


# name -> (function of tensors, inputs); float arrays become leaves that require grad
CASES = {
    "softmax": (lambda x: F.softmax(x, 1), [f(2, 4, 3)]),
    "log_softmax": (lambda x: F.log_softmax(x, 0), [f(3, 4)]),
    "softmin_scalar": (lambda x: F.softmin(x, 0), [f(1).reshape(())]),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), [f(4, 5), ints(4, hi=5)]),
    "cross_entropy_weight_ignore_smooth": (
        lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=2, label_smoothing=0.2),
        [f(6, 5), np.array([0, 2, 4, 1, 2, 3]), Const(pos(5))]),
    "cross_entropy_nd_sum": (lambda x, t: F.cross_entropy(x, t, reduction="sum"),
                             [f(2, 4, 3), ints(2, 3, hi=4)]),
    "cross_entropy_none_1d": (lambda x, t: F.cross_entropy(x, t, reduction="none",
                                                           label_smoothing=0.1),
                              [f(5), np.array(3)]),
    "nll_loss": (lambda x, t, w: F.nll_loss(x, t, w, ignore_index=0),
                 [f(4, 3), ints(4, hi=3), Const(pos(3))]),
    "linear": (F.linear, [f(2, 3, 4), f(5, 4), f(5)]),
    "linear_no_bias": (F.linear, [f(3, 4), f(2, 4)]),
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [f(2, 3, 7), f(4, 3, 3),
                                                                         f(4)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [f(2, 2, 4, 4), f(3, 2, 3, 3),
                                                              f(3)]),
    "conv2d_groups_dilation": (
        lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(2, 1), dilation=(2, 1), groups=2),
        [f(1, 4, 6, 5), f(4, 2, 3, 2)]),
    "conv2d_same_even_kernel": (lambda x, w: F.conv2d(x, w, padding="same", dilation=2),
                                [f(1, 2, 5, 5), f(2, 2, 2, 3)]),
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, stride=2, padding=1),
               [f(1, 2, 3, 4, 4), f(2, 2, 2, 2, 2), f(2)]),
    "conv2d_unbatched": (F.conv2d, [f(2, 3, 3), f(1, 2, 2, 2)]),
    "conv_transpose1d": (
        lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
        [f(2, 3, 4), f(3, 2, 3), f(2)]),
    "conv_transpose2d_groups": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                           groups=2),
        [f(1, 4, 3, 3), f(4, 1, 3, 3), f(2)]),
    "conv_transpose2d_dilation": (lambda x, w: F.conv_transpose2d(x, w, dilation=2),
                                  [f(2, 2, 3, 2), f(2, 3, 2, 2)]),
    "unfold": (lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
               [f(2, 2, 4, 5)]),
    "fold": (lambda x: F.fold(x, (4, 5), (2, 2), padding=1, stride=2), [f(2, 8, 9)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1), [f(2, 2, 5, 5)]),
    "max_pool2d_indices_ceil_dilation": (
        lambda x: F.max_pool2d(x, 2, 2, 1, dilation=2, ceil_mode=True, return_indices=True),
        [f(1, 2, 6, 7)]),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, padding=1), [f(2, 3, 8)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                   [f(2, 2, 6, 5)]),
    "avg_pool2d_divisor": (lambda x: F.avg_pool2d(x, 2, 1, 1, divisor_override=3),
                           [f(1, 2, 4, 4)]),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, 1), [f(2, 3, 7)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [f(2, 2, 5, 7)]),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3), [f(2, 2, 7)]),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True),
                            [f(1, 2, 5, 7)]),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3), [f(2, 2, 7)]),
    "batch_norm_train": (_running(lambda x, w, b, rm, rv: F.batch_norm(
        x, rm, rv, w, b, training=True, momentum=0.3)),
        [f(3, 2, 4), f(2), f(2), Const(f(2)), Const(pos(2))]),
    "batch_norm_eval": (_running(lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b)),
                        [f(2, 3, 2, 2), f(3), f(3), Const(f(3)), Const(pos(3))]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (3, 4), w, b), [f(2, 3, 4), f(3, 4),
                                                                   f(3, 4)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [f(2, 4, 3), f(4), f(4)]),
    "instance_norm": (_running(lambda x, w, b, rm, rv: F.instance_norm(
        x, rm, rv, w, b, use_input_stats=True, momentum=0.2)),
        [f(2, 3, 4), f(3), f(3), Const(f(3)), Const(pos(3))]),
    "lstm_reverse": (lambda x, h, c, wi, wh, bi, bh: recurrent("lstm", x, h, c, wi, wh, bi, bh,
                                                               True),
                     [f(3, 2, 4), f(2, 3), f(2, 3), f(12, 4), f(12, 3), f(12), f(12)]),
    "gru": (lambda x, h, wi, wh, bi, bh: recurrent("gru", x, h, None, wi, wh, bi, bh, False),
            [f(3, 2, 4), f(2, 3), f(9, 4), f(9, 3), f(9), f(9)]),
    "gru_no_bias_no_h0": (lambda x, wi, wh: recurrent("gru", x, None, None, wi, wh, None, None,
                                                      False), [f(2, 2, 3), f(6, 3), f(6, 2)]),
    "rnn_tanh": (lambda x, wi, wh, b: recurrent("rnn_tanh", x, None, None, wi, wh, b, None,
                                                False), [f(3, 2, 2), f(3, 2), f(3, 3), f(3)]),
    "rnn_relu_cell": (F.rnn_relu_cell, [f(2, 3), f(2, 4), f(4, 3), f(4, 4)]),
    "lstm_cell": (lambda x, h, c, wi, wh: F.lstm_cell(x, (h, c), wi, wh),
                  [f(3), f(2), f(2), f(8, 3), f(8, 2)]),
    "embedding": (lambda w, i: F.embedding(i, w, padding_idx=1, scale_grad_by_freq=True),
                  [f(5, 3), np.array([[1, 0, 3], [0, 1, 0]])]),
    "embedding_max_norm": (_embedding_renorm, [f(5, 3) * 2, np.array([4, 0, 4])]),
    "embedding_on_device": (lambda w, i: F.embedding(i, w, padding_idx=1),  # indices stay there
                            [f(5, 3), np.array([[1, 0, 3], [0, 1, 4]])]),
    "dropout": (lambda x: (dg.manual_seed(3), F.dropout(x, 0.4))[1], [f(4, 5)]),
    "dropout2d": (lambda x: (dg.manual_seed(4), F.dropout2d(x, 0.5))[1], [f(2, 4, 2, 2)]),
}
# ops with no fused CPU kernel of their own: one line each so that they run on CUDA too
_ACTIVATIONS = {
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
    "mish": F.mish, "softplus": lambda x: F.softplus(x, 2.0, 1.0), "elu": F.elu, "selu": F.selu,
    "celu": lambda x: F.celu(x, 0.5), "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "relu6": lambda x: F.relu6(x * 4), "hardtanh": F.hardtanh, "hardsigmoid": F.hardsigmoid,
    "hardswish": lambda x: F.hardswish(x * 4), "softsign": F.softsign,
    "softshrink": F.softshrink, "hardshrink": F.hardshrink, "tanhshrink": F.tanhshrink,
    "threshold": lambda x: F.threshold(x, 0.1, -1.0), "logsigmoid": F.logsigmoid,
    "glu": F.glu, "sigmoid_tanh_relu": lambda x: (F.sigmoid(x), F.tanh(x), F.relu(x))}
CASES.update({name: (fn, [f(2, 4)]) for name, fn in _ACTIVATIONS.items()})
CASES.update({
    "prelu": (F.prelu, [f(2, 3, 2), pos(3) * 0.1]),
    "rms_norm": (lambda x, w: F.rms_norm(x, (3,), w), [f(2, 3), f(3)]),
    "l1_mse_huber_smooth_l1": (lambda x, t: (F.l1_loss(x, t), F.mse_loss(x, t, reduction="sum"),
                                             F.huber_loss(x, t, delta=0.5),
                                             F.smooth_l1_loss(x, t, beta=0.5)), [f(3, 4), f(3, 4)]),
    "soft_margin_kl_poisson": (lambda x, t: (F.soft_margin_loss(x, t.sign()),
                                             F.kl_div(x, t.abs(), reduction="batchmean"),
                                             F.poisson_nll_loss(x, t.abs(), full=True)),
                               [f(3, 4), Const(f(3, 4) * 2)]),
    "gaussian_nll": (F.gaussian_nll_loss, [f(3, 2), f(3, 2), pos(3, 1)]),
    "binary_cross_entropy": (lambda x, t, w: (F.binary_cross_entropy(x.sigmoid(), t, w),
                                              F.binary_cross_entropy_with_logits(
                                                  x, t, pos_weight=w.reshape(-1)[:4])),
                             [f(3, 4), Const(pos(3, 4) / 2), Const(pos(3, 4))]),
    "multi_margin_multilabel": (lambda x, t, w, m: (
        F.multi_margin_loss(x, t, p=2, weight=w), F.multilabel_soft_margin_loss(x, m)),
        [f(3, 4), ints(3, hi=4), Const(pos(4)), Const((f(3, 4) > 0).astype(np.float32))]),
    "ranking_hinge_cosine_triplet": (lambda a, b, c, y: (
        F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.1),
        F.hinge_embedding_loss(a, y.reshape(-1, 1).expand(3, 4)),
        F.cosine_embedding_loss(a, b, y), F.triplet_margin_loss(a, b, c, swap=True),
        F.cosine_similarity(a, c), F.normalize(b, 1.0)),
        [f(3, 4), f(3, 4), f(3, 4), Const(np.array([1.0, -1.0, 1.0], np.float32))]),
    "one_hot": (lambda t: F.one_hot(t, 4), [ints(2, 3, hi=4)]),
    "ctc_loss": (lambda lp, tg: F.ctc_loss(lp.log_softmax(2), tg, [4, 3], [2, 1]),
                 [f(4, 2, 3), np.array([[1, 2], [2, 0]])]),
    "interpolate": (lambda x: (F.interpolate(x, scale_factor=2), F.interpolate(
        x, size=(3, 5), mode="bilinear", align_corners=True), F.pixel_shuffle(x, 1)),
        [f(1, 2, 2, 3)]),
    "pad_modes": (lambda x: (F.pad(x, (1, 2), mode="reflect"), F.pad(x, (1, 1, 0, 1), value=2.0),
                             F.pad(x, (2, 1), mode="circular")), [f(1, 2, 4)]),
    "bilinear": (F.bilinear, [f(2, 3), f(2, 2), f(4, 3, 2), f(4)]),
    "attention_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                         [f(2, 3, 4), f(2, 3, 4), f(2, 3, 2)]),
    "attention_bool_mask": (lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [f(3, 4), f(2, 4), f(2, 2), np.array([[1, 0], [0, 0], [1, 1]],
                                                                    bool)]),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_matches_fused(name):
    fn, arrays = CASES[name]
    want = evaluate(fn, arrays)
    got = evaluate(fn, arrays, composite=True)
    for g, w in zip(got, want):
        assert_same(g, w, rtol=1e-10, atol=1e-10)


# the CASES that also run on the CUDA device (each costs launches on the simulator)
CUDA_CASES = sorted(CASES)


@pytest.mark.parametrize("name", CUDA_CASES)
def test_cuda_matches_cpu(name, cuda):
    fn, arrays = CASES[name]
    want = evaluate(fn, arrays, dtype=np.float32)
    got = evaluate(fn, arrays, device=cuda, dtype=np.float32)
    for g, w in zip(got, want):
        assert_same(g, w, rtol=1e-4, atol=1e-5)


# --- modules on CUDA against the same modules on the CPU -----------------------------------------

def _pairs(module: nn.Module, cuda):
    """The CPU module and a deep copy moved to ``cuda``."""
    return ((module, None), (copy.deepcopy(module).to(cuda), cuda))


def _forward_backward(module, device, *inputs):
    """Output, input gradients and parameter gradients of one forward and backward pass."""
    tensors = _tensors(inputs, device, np.float32)
    out = module(*tensors)
    out = out[0] if isinstance(out, tuple) else out
    (out * _upstream(out)).sum().backward()
    params = module.parameters() if isinstance(module, nn.Module) else ()
    return ([out.detach().cpu()] + [t.grad.cpu() for t in tensors if t.grad is not None]
            + [p.grad.cpu() for p in params])


def _same_module_results(module, cuda, *inputs):
    (m_cpu, _), (m_gpu, dev) = _pairs(module, cuda)
    want = _forward_backward(m_cpu, None, *inputs)
    got = _forward_backward(m_gpu, dev, *inputs)
    assert all(p.is_cuda for p in m_gpu.parameters())
    assert_same(got, want, rtol=1e-4, atol=1e-5)
    return m_cpu, m_gpu


def test_conv_block_forward_backward(cuda):
    dg.manual_seed(0)
    block = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Dropout(0.0))
    m_cpu, m_gpu = _same_module_results(block, cuda, f(2, 1, 4, 4))
    bn_cpu, bn_gpu = m_cpu[1], m_gpu[1]
    assert_same([bn_gpu.running_mean.cpu(), bn_gpu.running_var.cpu()],
                [bn_cpu.running_mean, bn_cpu.running_var], rtol=1e-5, atol=1e-6)
    assert int(bn_gpu.num_batches_tracked) == 1 and bn_gpu.num_batches_tracked.is_cuda
    x = f(1, 1, 4, 4)  # evaluation: normalised by the running statistics
    with dg.no_grad():
        want = m_cpu.eval()(dg.tensor(x))
        got = m_gpu.eval()(dg.tensor(x, device=cuda))
    assert_same([got.cpu()], [want], rtol=1e-4, atol=1e-5)


def test_layer_norm_and_embedding_modules(cuda):
    dg.manual_seed(1)
    _same_module_results(nn.LayerNorm(3), cuda, f(2, 3))
    _same_module_results(nn.Embedding(5, 3, padding_idx=0), cuda, np.array([[0, 2], [4, 2]]))


@pytest.mark.parametrize("cls, kwargs", [(nn.LSTM, {}), (nn.GRU, {"batch_first": True})])
def test_recurrent_modules(cls, kwargs, cuda):
    dg.manual_seed(2)
    _same_module_results(cls(2, 3, **kwargs), cuda, f(2, 2, 2))


# --- training ------------------------------------------------------------------------------------

X_TRAIN, Y_TRAIN = f(5, 4), ints(5, hi=3)


def _mlp() -> nn.Module:
    dg.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))


def _train(model, opt, device, steps=3) -> list:
    x, y = dg.tensor(X_TRAIN, device=device), dg.tensor(Y_TRAIN, device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("opt_cls, kwargs", [(dg.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
                                             (dg.optim.Adam, {"lr": 0.05})])
def test_mlp_training_matches_cpu(opt_cls, kwargs, cuda):
    results = []
    for model, device in _pairs(_mlp(), cuda):
        losses = _train(model, opt_cls(model.parameters(), **kwargs), device)
        results.append((losses, [p.detach().cpu() for p in model.parameters()]))
    (want_losses, want_params), (got_losses, got_params) = results
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    assert got_losses[-1] < got_losses[0]
    assert_same(got_params, want_params, rtol=1e-4, atol=1e-5)


def test_module_to_cuda_keeps_parameters_and_optimizers(cuda):
    model = _mlp()
    params = list(model.parameters())
    before = dg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # built before the move
    assert model.to(cuda) is model
    assert all(a is b for a, b in zip(model.parameters(), params))
    assert all(p.is_cuda for p in params)
    start = [p.detach().cpu() for p in params]
    _train(model, before, cuda, steps=1)
    assert before.state[params[0]]["momentum_buffer"].is_cuda
    after = dg.optim.Adam(model.parameters(), lr=0.01)  # built after the move
    _train(model, after, cuda, steps=1)
    assert after.state[params[0]]["exp_avg"].is_cuda
    assert not after.state[params[0]]["step"].is_cuda  # step counts stay on the host
    assert all(not bool((p.detach().cpu() == s).all()) for p, s in zip(params, start))
    model.cpu()
    assert all(a is b and not a.is_cuda for a, b in zip(model.parameters(), params))


def test_optimizer_state_loads_onto_the_parameters_device(cuda):
    cpu_model = _mlp()
    cpu_opt = dg.optim.Adam(cpu_model.parameters(), lr=0.05)
    _train(cpu_model, cpu_opt, None, steps=1)
    gpu_model = copy.deepcopy(cpu_model).to(cuda)
    gpu_opt = dg.optim.Adam(gpu_model.parameters(), lr=0.05)
    gpu_opt.load_state_dict(cpu_opt.state_dict())
    state = gpu_opt.state[next(iter(gpu_model.parameters()))]
    assert state["exp_avg"].is_cuda and not state["step"].is_cuda
    want = _train(cpu_model, cpu_opt, None, steps=1)
    got = _train(gpu_model, gpu_opt, cuda, steps=1)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert_same([p.detach().cpu() for p in gpu_model.parameters()],
                [p.detach() for p in cpu_model.parameters()], rtol=1e-4, atol=1e-5)


def test_clip_grad_norm_on_cuda(cuda):
    grads = [f(3), f(2, 2)]
    totals, clipped = [], []
    for device in (None, cuda):
        ps = [nn.Parameter(dg.zeros(g.shape, device=device)) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = dg.tensor(g, device=device)
        total = nn.utils.clip_grad_norm_(ps, 0.5)
        assert total.device == ps[0].device
        totals.append(total.cpu())
        clipped.append([p.grad.cpu() for p in ps])
    assert_same([totals[1]] + clipped[1], [totals[0]] + clipped[0], rtol=1e-5, atol=1e-6)


def test_transformer_encoder_layer(cuda):
    dg.manual_seed(3)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0)
    mask = nn.generate_square_subsequent_mask(3, device=cuda)
    assert mask.is_cuda
    (m_cpu, _), (m_gpu, dev) = _pairs(layer, cuda)
    x = f(3, 2, 4)
    want = _forward_backward(lambda t: m_cpu(t, src_mask=mask.cpu()), None, x)
    got = _forward_backward(lambda t: m_gpu(t, src_mask=mask), dev, x)
    assert_same(got[:2], want[:2], rtol=1e-4, atol=1e-5)


def test_mixed_devices_raise_naming_both(cuda):
    x = dg.ones(2, 3)
    with pytest.raises(RuntimeError, match="cuda:0") as info:
        F.linear(x, dg.ones(4, 3, device=cuda))
    assert "cpu" in str(info.value)
    with pytest.raises(RuntimeError, match="cuda:0"):
        F.conv2d(dg.ones(1, 1, 3, 3), dg.ones(1, 1, 2, 2, device=cuda))


MODULES = [
    lambda device: nn.Linear(3, 2, device=device),
    lambda device: nn.Conv2d(2, 2, 2, device=device),
    lambda device: nn.BatchNorm2d(2, device=device),
    lambda device: nn.LayerNorm(3, device=device),
    lambda device: nn.GroupNorm(1, 2, device=device),
    lambda device: nn.Embedding(4, 2, padding_idx=1, device=device),
    lambda device: nn.PReLU(2, device=device),
    lambda device: nn.LSTM(2, 2, device=device),
]


@pytest.mark.parametrize("make", MODULES)
def test_modules_built_on_cuda_match_cpu_init(make, cuda):
    dg.manual_seed(5)
    want = make(None).state_dict()
    dg.manual_seed(5)
    got = make(cuda).state_dict()
    assert all(t.is_cuda for t in got.values())
    assert_same([t.cpu() for t in got.values()], list(want.values()), rtol=0, atol=0)


@pytest.mark.parametrize("init", [
    lambda t: nn.init.trunc_normal_(t, std=0.5), nn.init.orthogonal_, nn.init.eye_,
    nn.init.xavier_normal_, lambda t: nn.init.kaiming_uniform_(t, nonlinearity="relu"),
    lambda t: nn.init.dirac_(t.reshape(2, 3, 1, 1).clone())])
def test_init_on_cuda_matches_cpu(init, cuda):
    values = []
    for device in (None, cuda):
        dg.manual_seed(6)
        values.append(init(dg.empty(2, 3, device=device)))
    assert values[1].is_cuda
    assert_same([values[1].cpu()], [values[0]], rtol=0, atol=0)
