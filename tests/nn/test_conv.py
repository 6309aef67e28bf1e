"""Convolutions (functional and modules): parity with torch 2.13 for outputs and the gradients of
input, weight and bias, float64 gradcheck, error messages, reprs and default initialisation."""
import math

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.ops.nn import conv as conv_ops

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "unfold",
              "fold"}

# torch warns that it pads a copy for 'same' with even kernels; that is its business, not ours
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def _pair(shapes, seed=0, dtype=np.float64):
    """The same random arrays as dynagrad and torch leaves that require grad."""
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([dg.tensor(a, requires_grad=True) for a in arrs],
            [torch.tensor(a, requires_grad=True) for a in arrs])


def _check(name, shapes, kwargs, dtype=np.float64, rtol=1e-10, atol=1e-10):
    d, t = _pair(shapes, dtype=dtype)
    yd, yt = getattr(F, name)(*d, **kwargs), getattr(TF, name)(*t, **kwargs)
    assert tuple(yd.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(dtype)
    yd.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(d, t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


# (function, [input, weight, bias?] shapes, kwargs)
CONV_CASES = [
    ("conv1d", [(2, 3, 9), (4, 3, 3), (4,)], {}),
    ("conv1d", [(2, 4, 10), (6, 2, 4)], dict(stride=3, padding=2, dilation=2, groups=2)),
    ("conv1d", [(2, 3, 9), (4, 3, 4), (4,)], dict(padding="same", dilation=2)),
    ("conv1d", [(3, 9), (4, 3, 3), (4,)], dict(padding="valid")),          # unbatched
    ("conv2d", [(2, 3, 7, 6), (5, 3, 3, 3), (5,)], {}),
    ("conv2d", [(2, 4, 7, 6), (6, 2, 3, 2), (6,)],
     dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    ("conv2d", [(2, 3, 8, 7), (3, 1, 3, 3)], dict(padding=1, groups=3)),    # depthwise
    ("conv2d", [(2, 2, 6, 6), (3, 2, 2, 4), (3,)], dict(padding="same")),  # even kernel: asym pad
    ("conv2d", [(2, 2, 9, 9), (3, 2, 3, 3)], dict(stride=3, padding=2)),   # pad wider than stride
    ("conv2d", [(2, 3, 9, 7), (4, 3, 3, 2), (4,)], dict(stride=(2, 1), padding=(2, 1))),  # H only
    ("conv2d", [(1, 1, 5, 5), (2, 1, 5, 5), (2,)], {}),                    # 1x1 output
    ("conv2d", [(3, 6, 5), (4, 3, 2, 2), (4,)], dict(stride=2)),          # unbatched
    ("conv2d", [(2, 3, 5, 5), (4, 3, 1, 1), (4,)], {}),                    # pointwise
    ("conv2d", [(2, 2, 3, 4), (3, 2, 2, 3), (3,)], dict(padding=3)),  # whole rows, runs of padding
    ("conv3d", [(2, 2, 5, 4, 6), (3, 2, 2, 3, 2), (3,)], dict(stride=2, padding=1)),
    ("conv3d", [(1, 4, 4, 5, 5), (4, 2, 3, 3, 3)],
     dict(padding="same", dilation=(1, 2, 1), groups=2)),
]


@pytest.mark.parametrize("name,shapes,kwargs", CONV_CASES)
def test_conv_parity_float64(name, shapes, kwargs):
    _check(name, shapes, kwargs)


TRANSPOSE_CASES = [
    ("conv_transpose1d", [(2, 3, 5), (3, 2, 3), (2,)], {}),
    ("conv_transpose1d", [(2, 3, 5), (3, 2, 3)], dict(stride=3, padding=2, output_padding=2)),
    ("conv_transpose1d", [(3, 5), (3, 2, 3), (2,)], dict(stride=2, dilation=2)),
    ("conv_transpose2d", [(2, 4, 3, 4), (4, 3, 3, 2), (6,)],
     dict(stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))),
    ("conv_transpose2d", [(2, 2, 4, 4), (2, 3, 4, 4), (3,)], dict(stride=2, padding=1)),
    ("conv_transpose2d", [(1, 2, 3, 3), (2, 1, 2, 3)], dict(stride=(1, 3), output_padding=(0, 2))),
    # output_padding >= stride is allowed when smaller than the dilation
    ("conv_transpose2d", [(2, 2, 3, 3), (2, 2, 3, 3), (2,)], dict(output_padding=1, dilation=2)),
]


@pytest.mark.parametrize("name,shapes,kwargs", TRANSPOSE_CASES)
def test_conv_transpose_parity_float64(name, shapes, kwargs):
    _check(name, shapes, kwargs)


@pytest.mark.parametrize("name,shapes,kwargs", [
    ("unfold", [(2, 3, 6, 5)], dict(kernel_size=(2, 3), padding=1, stride=(2, 1),
                                    dilation=(2, 1))),
    ("unfold", [(3, 4, 4)], dict(kernel_size=2)),
    ("fold", [(2, 12, 8)], dict(output_size=(4, 5), kernel_size=(2, 2), stride=(2, 1))),
    ("fold", [(8, 9)], dict(output_size=5, kernel_size=2, padding=1, stride=2, dilation=2)),
])
def test_unfold_fold_parity(name, shapes, kwargs):
    _check(name, shapes, kwargs)


def test_conv2d_float32_lenet_shapes():
    _check("conv2d", [(8, 1, 28, 28), (6, 1, 5, 5), (6,)], {}, np.float32, 1e-4, 1e-4)
    _check("conv2d", [(4, 6, 12, 12), (16, 6, 5, 5), (16,)], {}, np.float32, 1e-4, 1e-4)
    _check("conv_transpose2d", [(2, 6, 5, 5), (6, 4, 3, 3), (4,)], dict(stride=2),
           np.float32, 1e-4, 1e-4)


def _check_float32(name, shapes, kwargs, grads=None):
    """float32 outputs and gradients against PyTorch's float64 run on the same values, within
    1e-5 of each result's largest entry; ``grads``: which inputs require grad (default all)."""
    d, _ = _pair(shapes, dtype=np.float32)
    grads = grads or [True] * len(d)
    for a, wanted in zip(d, grads):
        a.requires_grad_(wanted)
    t = [torch.tensor(a.detach().numpy().astype(np.float64), requires_grad=wanted)
         for a, wanted in zip(d, grads)]
    yd, yt = getattr(F, name)(*d, **kwargs), getattr(TF, name)(*t, **kwargs)
    assert yd.dtype is dg.float32
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-5,
                               atol=1e-5 * float(yt.detach().abs().max()))
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    yd.backward(dg.tensor(g))
    yt.backward(torch.tensor(g, dtype=torch.float64))
    for a, b, wanted in zip(d, t, grads):
        assert (a.grad is not None) == wanted
        if wanted:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5,
                                       atol=1e-5 * float(b.grad.abs().max()))


# float32 on AVX-512 runs on register tiles (kernels/conv_tiles.py): every geometry above, and
# shapes that reach the tiles' edges: more output channels than one row block, a last strip of
# fewer than 32 columns, k in two passes (over 1024 taps x channels), a batch split across
# threads (with groups too)
TILE_CASES = CONV_CASES + TRANSPOSE_CASES + [
    ("conv2d", [(6, 5, 11, 13), (40, 5, 3, 3), (40,)], dict(padding=1)),
    ("conv2d", [(2, 120, 6, 6), (20, 120, 3, 3), (20,)], {}),
    ("conv2d", [(8, 4, 16, 16), (64, 2, 3, 3), (64,)], dict(padding=2, dilation=2, groups=2)),
    ("conv1d", [(9, 3, 200), (17, 3, 5)], dict(stride=2)),
    ("conv_transpose2d", [(6, 24, 9, 9), (24, 20, 3, 3), (20,)], dict(stride=2)),
]


@pytest.mark.parametrize("name,shapes,kwargs", TILE_CASES)
def test_conv_float32_matches_float64(name, shapes, kwargs):
    _check_float32(name, shapes, kwargs)


@pytest.mark.parametrize("grads", [[False, True, True], [True, False, False],
                                   [True, True, False]])
def test_conv_float32_gradients_of_some_inputs(grads):
    # each gradient is computed only where wanted (a first layer's input needs none)
    _check_float32("conv2d", [(6, 3, 10, 10), (24, 3, 3, 3), (24,)], dict(padding=1), grads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,shapes,kwargs", [
    ("conv2d", [(0, 3, 5, 5), (4, 3, 3, 3), (4,)], dict(padding=1)),
    ("conv1d", [(0, 4, 9), (6, 2, 3)], dict(groups=2)),
    ("conv_transpose2d", [(0, 3, 4, 4), (3, 2, 3, 3), (2,)], dict(stride=2)),
])
def test_empty_batch(name, shapes, kwargs, dtype):
    # no samples: an empty output, an empty input gradient and zero weight and bias gradients
    _check(name, shapes, kwargs, dtype)


def test_conv_many_samples_cross_chunks():
    # more samples than fit one im2col chunk: the per-chunk loops must cover every sample
    big_chunk = conv_ops.CHUNK_BYTES // (8 * 4 * 9 * 36) + 3
    _check("conv2d", [(big_chunk, 4, 8, 8), (5, 4, 3, 3), (5,)], dict(groups=1), np.float64)


@pytest.mark.parametrize("keep_bytes", [0, 1 << 30])
def test_weight_gradient_from_kept_or_recomputed_columns(monkeypatch, keep_bytes):
    # small batches keep the forward's im2col columns for the weight gradient, large ones
    # recompute them chunk by chunk: both must give PyTorch's gradients, across chunks too
    monkeypatch.setattr(conv_ops, "KEEP_COLS_BYTES", keep_bytes)
    big_chunk = conv_ops.CHUNK_BYTES // (8 * 4 * 9 * 36) + 3
    _check("conv2d", [(big_chunk, 4, 8, 8), (5, 4, 3, 3), (5,)], dict(padding=1))
    _check("conv2d", [(2, 4, 7, 6), (6, 2, 3, 2), (6,)],
           dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2))
    _check_float32("conv2d", [(big_chunk, 4, 8, 8), (5, 4, 3, 3), (5,)], dict(padding=1))


@pytest.mark.parametrize("groups", [1, 2])
def test_one_sample_chunks_in_float32(monkeypatch, groups):
    # a large sample fills a chunk alone: one product per group, no batch to sum
    monkeypatch.setattr(conv_ops, "CHUNK_BYTES", 1)
    _check("conv2d", [(3, 32, 12, 12), (64, 32 // groups, 3, 3), (64,)],
           dict(padding=1, groups=groups), np.float32, 1e-4, 1e-4)


def test_non_contiguous_inputs():
    d, t = _pair([(2, 6, 7, 3), (4, 3, 3, 3)])
    xd, xt = d[0].permute(0, 3, 2, 1), t[0].permute(0, 3, 2, 1)    # (2, 3, 7, 6), strided
    wd, wt = d[1].transpose(2, 3), t[1].transpose(2, 3)
    yd, yt = F.conv2d(xd, wd, padding=1), TF.conv2d(xt, wt, padding=1)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    yd.sum().backward()
    yt.sum().backward()    # the incoming gradient is an expanded (stride-0) tensor
    for a, b in zip(d, t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_only_needed_gradients_and_grad_fn():
    x = dg.randn(2, 3, 5, 5, dtype=dg.float64)
    w = dg.randn(4, 3, 3, 3, dtype=dg.float64, requires_grad=True)
    y = F.conv2d(x, w)
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    y.sum().backward()
    assert x.grad is None and w.grad is not None
    with dg.no_grad():
        assert F.conv2d(x, w).grad_fn is None


@pytest.mark.parametrize("fn,shapes,kwargs", [
    (F.conv2d, [(2, 4, 5, 4), (4, 2, 2, 3), (4,)], dict(stride=2, padding=1, groups=2)),
    (F.conv1d, [(1, 2, 6), (3, 2, 2), (3,)], dict(padding="same", dilation=3)),
    (F.conv3d, [(1, 2, 3, 3, 4), (2, 1, 2, 2, 2), (2,)], dict(groups=2, padding=(0, 1, 0))),
    (F.conv_transpose2d, [(1, 2, 3, 2), (2, 2, 2, 3), (4,)],
     dict(stride=2, padding=1, output_padding=1, groups=2)),
    (F.conv_transpose1d, [(2, 2, 3), (2, 3, 3), (3,)], dict(stride=2, dilation=2)),
    (F.unfold, [(1, 2, 4, 4)], dict(kernel_size=2, padding=1, stride=2)),
    (F.fold, [(1, 8, 4)], dict(output_size=3, kernel_size=2)),
])
def test_gradcheck(fn, shapes, kwargs):
    d, _ = _pair(shapes, seed=3)
    assert dg.autograd.gradcheck(lambda *a: fn(*a, **kwargs), d)


def test_double_backward_raises():
    x = dg.randn(1, 1, 4, 4, dtype=dg.float64, requires_grad=True)
    w = dg.randn(1, 1, 2, 2, dtype=dg.float64, requires_grad=True)
    y = F.conv2d(x, w).sum()
    with pytest.raises(RuntimeError, match="double backward"):
        dg.autograd.grad(y, x, create_graph=True)


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call,match", [
    (lambda: F.conv2d(dg.randn(1, 1, 28, 28), dg.randn(6, 3, 5, 5)),
     r"expected input\[1, 1, 28, 28\] to have 3 channels, but got 1 channels"),
    (lambda: F.conv2d(dg.randn(1, 1, 4, 4), dg.randn(2, 1, 5, 5)),
     r"Calculated padded input size per channel: \(4 x 4\). Kernel size: \(5 x 5\)"),
    (lambda: F.conv2d(dg.randn(1, 4, 6, 6), dg.randn(3, 2, 3, 3), groups=2),
     r"Given groups=2, expected weight to be divisible by 2 at dimension 0"),
    (lambda: F.conv2d(dg.randn(1, 4, 6, 6), dg.randn(4, 2, 3, 3), groups=0),
     "non-positive groups"),
    (lambda: F.conv2d(dg.randn(1, 2, 6, 6), dg.randn(4, 2, 3, 3), dg.randn(3)),
     "expected bias to be 1-dimensional with 4 elements"),
    (lambda: F.conv2d(dg.randn(1, 2, 6, 6), dg.randn(4, 2, 3, 3), stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(dg.randn(2, 6, 6), dg.randn(4, 2, 3)), "expected weight to be 4-dimensional"),
    (lambda: F.conv2d(dg.randn(6, 6), dg.randn(4, 2, 3, 3)),
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d"),
    (lambda: F.conv2d(dg.randn(1, 2, 6, 6), dg.randn(4, 2, 3, 3), stride=0), "non-positive stride"),
    (lambda: F.conv2d(dg.randn(1, 2, 6, 6), dg.randn(4, 2, 3, 3), padding=-1), "negative padding"),
    (lambda: F.conv2d(dg.randn(1, 2, 6, 6), dg.randn(4, 2, 3, 3), stride=(1, 1, 1)),
     "expected stride to be a single integer value or a list of 2 values"),
    (lambda: F.conv2d(dg.ones(1, 2, 6, 6, dtype=dg.int64), dg.randn(4, 2, 3, 3)),
     "input must be float32 or float64"),
    (lambda: F.conv2d(dg.randn(1, 2, 6, 6, dtype=dg.float64), dg.randn(4, 2, 3, 3)),
     "input and weight must have the same dtype"),
    (lambda: F.conv_transpose2d(dg.randn(1, 2, 4, 4), dg.randn(3, 2, 3, 3)),
     r"Given transposed=1, weight of size \[3, 2, 3, 3\], expected input\[1, 2, 4, 4\] to have 3"),
    (lambda: F.conv_transpose2d(dg.randn(1, 2, 4, 4), dg.randn(2, 2, 3, 3), output_padding=1),
     "output padding must be smaller than either stride or dilation"),
    (lambda: F.fold(dg.randn(1, 7, 4), 3, 2), "divisible by the product of kernel_size"),
    (lambda: F.fold(dg.randn(1, 8, 5), 3, 2), "calculated number of sliding blocks 2 \\* 2 = 4"),
    (lambda: F.unfold(dg.randn(1, 1, 2, 2), 3), "calculated shape of the array of sliding blocks"),
])
def test_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_error_names_op_and_does_not_leave_state():
    with pytest.raises(RuntimeError, match=r"^conv1d: "):
        F.conv1d(dg.randn(1, 3, 2), dg.randn(2, 3, 3))


# --- modules --------------------------------------------------------------------------------

@pytest.mark.parametrize("make,text", [
    (lambda: nn.Conv2d(1, 6, 5), "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))"),
    (lambda: nn.Conv2d(4, 8, (3, 2), stride=2, padding=1, dilation=2, groups=2, bias=False,
                       padding_mode="reflect"),
     "Conv2d(4, 8, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "groups=2, bias=False, padding_mode=reflect)"),
    (lambda: nn.Conv1d(3, 4, 3, padding="same"),
     "Conv1d(3, 4, kernel_size=(3,), stride=(1,), padding=same)"),
    (lambda: nn.Conv3d(2, 2, 3), "Conv3d(2, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1))"),
    (lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
     "output_padding=(1, 1))"),
    (lambda: nn.ConvTranspose1d(2, 3, 2), "ConvTranspose1d(2, 3, kernel_size=(2,), stride=(1,))"),
])
def test_module_repr_matches_torch(make, text):
    assert repr(make()) == text


def _torch_twin(module, torch_cls, *args, **kwargs):
    tm = torch_cls(*args, **kwargs).double()
    tm.load_state_dict({k: torch.tensor(v.detach().numpy())
                        for k, v in module.state_dict().items()})
    return tm


@pytest.mark.parametrize("cls,args,kwargs,in_shape", [
    ("Conv2d", (3, 4, 3), dict(padding=1, padding_mode="reflect"), (2, 3, 6, 5)),
    ("Conv2d", (3, 4, (2, 3)), dict(padding=(1, 2), padding_mode="replicate", stride=2),
     (2, 3, 6, 5)),
    ("Conv2d", (2, 4, 4), dict(padding="same", padding_mode="circular", groups=2), (1, 2, 6, 6)),
    ("Conv1d", (2, 3, 4), dict(padding="same", padding_mode="reflect", dilation=2), (2, 2, 9)),
    ("Conv1d", (2, 3, 3), dict(bias=False), (2, 7)),
    ("Conv3d", (2, 3, 2), dict(padding=1, padding_mode="circular"), (1, 2, 3, 4, 3)),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, padding=1, output_padding=1), (2, 4, 3, 3)),
    ("ConvTranspose1d", (2, 4, 3), dict(stride=3, groups=2), (2, 2, 4)),
])
def test_module_parity(cls, args, kwargs, in_shape):
    dg.manual_seed(0)
    m = getattr(nn, cls)(*args, **kwargs).double()
    tm = _torch_twin(m, getattr(torch.nn, cls), *args, **kwargs)
    (xd,), (xt,) = _pair([in_shape])
    yd, yt = m(xd), tm(xt)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    (yd * yd).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-9)
    for (name, p), tp in zip(m.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-9,
                                   err_msg=name)


def test_conv_transpose_output_size():
    m = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    x = dg.randn(1, 4, 5, 5)
    assert tuple(m(x).shape) == (1, 2, 9, 9)
    assert tuple(m(x, output_size=(10, 10)).shape) == (1, 2, 10, 10)
    assert tuple(m(x, output_size=[1, 2, 10, 9]).shape) == (1, 2, 10, 9)
    with pytest.raises(ValueError, match="valid sizes range from 9 to 10"):
        m(x, output_size=(11, 11))


def test_module_argument_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="not supported for strided convolutions"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def test_module_attributes_and_parameters():
    m = nn.Conv2d(4, 6, 3, groups=2)
    assert m.kernel_size == (3, 3) and m.stride == (1, 1) and m.padding == (0, 0)
    assert m.dilation == (1, 1) and m.groups == 2 and m.transposed is False
    assert tuple(m.weight.shape) == (6, 2, 3, 3) and tuple(m.bias.shape) == (6,)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    t = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 3, 3) and t.transposed is True
    assert nn.Conv1d(2, 2, 3, bias=False).bias is None


@pytest.mark.parametrize("make,fan_in", [
    (lambda: nn.Conv2d(16, 64, 5), 16 * 25),
    (lambda: nn.Conv1d(8, 256, 3, groups=2), 4 * 3),
    (lambda: nn.ConvTranspose2d(64, 32, 4), 32 * 16),   # fan_in of a transposed weight: dim 1
])
def test_default_init_statistics(make, fan_in):
    dg.manual_seed(0)
    m = make()
    w = m.weight.detach().numpy()
    bound = 1 / math.sqrt(fan_in)    # kaiming_uniform(a=sqrt(5)): sqrt(6 / (6 * fan_in))
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound / math.sqrt(3)
    assert abs(w.mean()) < 0.05 * bound
    b = m.bias.detach().numpy()
    assert np.abs(b).max() <= bound and b.std() > 0.3 * bound


def test_lenet_style_stack_trains_like_torch():
    dg.manual_seed(1)
    conv, pool = nn.Conv2d(1, 6, 5), nn.MaxPool2d(2)
    tconv = _torch_twin(conv, torch.nn.Conv2d, 1, 6, 5).float()
    (xd,), (xt,) = _pair([(4, 1, 12, 12)], dtype=np.float32)
    yd = pool(conv(xd).relu()).sum()
    yt = torch.nn.MaxPool2d(2)(tconv(xt).relu()).sum()
    np.testing.assert_allclose(yd.item(), yt.item(), rtol=1e-5)
    yd.backward()
    yt.backward()
    np.testing.assert_allclose(conv.weight.grad.numpy(), tconv.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
