"""nn.Transformer (encoder-decoder) against torch 2.13 with torch's state_dict loaded: outputs,
input and parameter gradients in float64 with every mask kind in both batch layouts and both
norm placements, unbatched inputs, custom encoder/decoder, errors, init, causal-mask helper."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn

torch = pytest.importorskip("torch")
# torch notes that mixing float attention masks and bool padding masks is deprecated; the mix is
# what this file checks
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched")

KW = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1,
      "dim_feedforward": 12, "dropout": 0.0}
S, T, N = 5, 4, 2


def _pair_models(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch's nested-tensor notice for norm_first
        mt = torch.nn.Transformer(**KW, **kw).double()
    md = nn.Transformer(**KW, **kw, dtype=dg.float64)
    assert repr(md) == repr(mt)
    assert list(md.state_dict()) == list(mt.state_dict())
    md.load_state_dict({k: dg.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return md, mt


def _inputs(batch_first, batched=True, seed=0):
    rng = np.random.default_rng(seed)
    shape = (lambda L: (N, L, 8) if batch_first else (L, N, 8)) if batched else \
        (lambda L: (L, 8))
    src, tgt = rng.standard_normal(shape(S)), rng.standard_normal(shape(T))
    return ((dg.tensor(src, requires_grad=True), dg.tensor(tgt, requires_grad=True)),
            (torch.tensor(src, requires_grad=True), torch.tensor(tgt, requires_grad=True)))


def _masks(rng):
    src_mask = rng.standard_normal((S, S))                       # float (additive)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    memory_mask = np.zeros((T, S), dtype=bool)
    memory_mask[0, -1] = memory_mask[2, 1] = True                 # bool: True = not allowed
    src_kpm = np.zeros((N, S), dtype=bool)
    src_kpm[1, -2:] = True
    tgt_kpm = np.zeros((N, T), dtype=bool)
    tgt_kpm[0, -1] = True
    named = {"src_mask": src_mask, "tgt_mask": tgt_mask.numpy(), "memory_mask": memory_mask,
             "src_key_padding_mask": src_kpm, "tgt_key_padding_mask": tgt_kpm,
             "memory_key_padding_mask": src_kpm}
    return ({k: dg.tensor(v) for k, v in named.items()},
            {k: torch.tensor(v) for k, v in named.items()})


def _check(md, mt, d_in, t_in, d_kw, t_kw, tol=1e-10):
    yd, yt = md(*d_in, **d_kw), mt(*t_in, **t_kw)
    assert tuple(yd.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(7).standard_normal(tuple(yt.shape))
    yd.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    for d, t in zip(d_in, t_in):
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)
    td = dict(mt.named_parameters())
    for name, p in md.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), td[name].grad.numpy(), rtol=1e-8, atol=tol,
                                   err_msg=name)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch_with_masks(batch_first, norm_first):
    md, mt = _pair_models(batch_first=batch_first, norm_first=norm_first)
    d_in, t_in = _inputs(batch_first)
    d_kw, t_kw = _masks(np.random.default_rng(1))
    _check(md, mt, d_in, t_in, d_kw, t_kw)


def test_transformer_causal_hints_unbatched_and_gelu():
    md, mt = _pair_models(activation="gelu")
    d_in, t_in = _inputs(False, batched=False)
    mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=dg.float64)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), tmask.numpy())
    _check(md, mt, d_in, t_in, {"tgt_mask": mask, "tgt_is_causal": True},
           {"tgt_mask": tmask, "tgt_is_causal": True})


def test_transformer_custom_encoder_decoder_and_errors():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 12, 0.0), 1)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 12, 0.0), 1)
    model = nn.Transformer(d_model=8, nhead=2, custom_encoder=enc, custom_decoder=dec)
    assert model.encoder is enc and model.decoder is dec
    out = model(dg.randn(S, N, 8), dg.randn(T, N, 8))
    assert tuple(out.shape) == (T, N, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(dg.randn(S, N, 8), dg.randn(T, N + 1, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to "
                                           "d_model"):
        model(dg.randn(S, N, 8), dg.randn(T, N, 6))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        torch.nn.Transformer(8, 2, 1, 1, 12)(torch.randn(S, N, 8), torch.randn(T, N + 1, 8))


def test_transformer_init_is_xavier_uniform():
    dg.manual_seed(0)
    model = nn.Transformer(**KW)
    for name, p in model.named_parameters():
        if p.ndim > 1:
            fan_out, fan_in = p.shape[0], p.shape[1]
            bound = float(np.sqrt(6.0 / (fan_in + fan_out)))
            values = p.detach().numpy()
            assert np.abs(values).max() <= bound, name
            assert np.abs(values).max() > 0.5 * bound, name
        elif "norm" in name and name.endswith("weight"):
            np.testing.assert_array_equal(p.detach().numpy(), 1.0)
