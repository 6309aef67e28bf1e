"""scaled_dot_product_attention, MultiheadAttention and Transformer layers vs PyTorch 2.13."""
import math

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

RNG = np.random.default_rng(5)
TOL64 = dict(rtol=1e-9, atol=1e-11)
TOL32 = dict(rtol=1e-4, atol=1e-5)


def _arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _leaves(*arrays):
    ours = [dg.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    return ours, theirs


def _backward_both(yo, yt):
    g = RNG.standard_normal(tuple(yt.shape))
    yo.backward(dg.tensor(g, dtype=yo.dtype))
    yt.backward(torch.tensor(g, dtype=yt.dtype))


def _close(a, b, tol=TOL64, what=""):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol, err_msg=what)


def _pair(ours, theirs, dtype=torch.float64):
    theirs.to(dtype)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


def _check_param_grads(ours, theirs, tol=TOL64):
    named = dict(theirs.named_parameters())
    for n, p in ours.named_parameters():
        _close(p.grad, named[n].grad, tol, f"grad of {n}")


# --- scaled_dot_product_attention ---------------------------------------------------------------

SDPA_CASES = {
    "plain": dict(),
    "causal_square": dict(is_causal=True),
    "causal_rect": dict(is_causal=True, S=7),
    "bool_mask": dict(mask="bool"),
    "float_mask": dict(mask="float"),
    "broadcast_mask_scale": dict(mask="bool_bcast", scale=0.3),
    "fully_masked_row": dict(mask="dead_row"),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    c = SDPA_CASES[case]
    L, S = 5, c.get("S", 5)
    (q, k, v), (tq, tk, tv) = _leaves(_arr(2, 3, L, 4), _arr(2, 3, S, 4), _arr(2, 3, S, 6))
    mask_np = None
    if c.get("mask") == "bool":
        mask_np = RNG.random((2, 3, L, S)) > 0.3
    elif c.get("mask") == "float":
        mask_np = _arr(2, 3, L, S)
    elif c.get("mask") == "bool_bcast":
        mask_np = RNG.random((L, S)) > 0.3
    elif c.get("mask") == "dead_row":
        mask_np = RNG.random((2, 1, L, S)) > 0.3
        mask_np[0, 0, 2] = False
    kw = dict(is_causal=c.get("is_causal", False), scale=c.get("scale"))
    mo = None if mask_np is None else dg.tensor(mask_np)
    mt = None if mask_np is None else torch.tensor(mask_np)
    yo = F.scaled_dot_product_attention(q, k, v, attn_mask=mo, **kw)
    yt = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=mt, **kw)
    _close(yo, yt)
    _backward_both(yo, yt)
    for a, b, n in ((q, tq, "q"), (k, tk, "k"), (v, tv, "v")):
        _close(a.grad, b.grad, what=n)
        assert np.isfinite(a.grad.numpy()).all()
    if case == "fully_masked_row":
        assert np.all(yo.detach().numpy()[0, :, 2] == 0)


def test_sdpa_3d_and_gqa_match_torch():
    (q, k, v), (tq, tk, tv) = _leaves(_arr(4, 3, 8), _arr(4, 5, 8), _arr(4, 5, 2))
    _close(F.scaled_dot_product_attention(q, k, v), TF.scaled_dot_product_attention(tq, tk, tv))
    (q, k, v), (tq, tk, tv) = _leaves(_arr(1, 4, 3, 8), _arr(1, 2, 5, 8), _arr(1, 2, 5, 2))
    yo = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    yt = TF.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    _close(yo, yt)
    _backward_both(yo, yt)
    _close(k.grad, tk.grad)


def test_sdpa_gradcheck():
    q, k, v = (dg.tensor(_arr(2, 3, 4), requires_grad=True) for _ in range(3))
    mask = dg.tensor(_arr(3, 3))
    assert dg.autograd.gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), (q, k, v))
    assert dg.autograd.gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v))


def test_sdpa_dropout():
    q = dg.randn(2, 4, 3)
    assert np.all(F.scaled_dot_product_attention(q, q, q, dropout_p=1.0).numpy() == 0)
    dg.manual_seed(3)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    dg.manual_seed(3)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, F.scaled_dot_product_attention(q, q, q).numpy())


def test_sdpa_errors():
    with pytest.raises(RuntimeError, match=r"expected query \(..., L, E\), key \(..., S, E\)"):
        F.scaled_dot_product_attention(dg.randn(2, 3, 4), dg.randn(2, 5, 3), dg.randn(2, 5, 4))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.scaled_dot_product_attention(dg.randn(4), dg.randn(4), dg.randn(4))
    q = dg.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=dg.ones(3, 3, dtype=dg.bool),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="multiple of the key/value heads"):
        F.scaled_dot_product_attention(dg.randn(1, 3, 2, 4), dg.randn(1, 2, 2, 4),
                                       dg.randn(1, 2, 2, 4), enable_gqa=True)


# --- MultiheadAttention --------------------------------------------------------------------------

MHA_CONFIGS = {
    "default": dict(),
    "batch_first": dict(batch_first=True),
    "kdim_vdim": dict(kdim=3, vdim=5),
    "bias_kv_zero_attn": dict(add_bias_kv=True, add_zero_attn=True),
    "no_bias": dict(bias=False),
}
MASKS = {
    "none": (None, None),
    "kpm_bool": (None, "bool"),
    "attn_bool_2d": ("bool2d", None),
    "attn_float_3d_and_kpm": ("float3d", "bool"),
}


@pytest.mark.parametrize("config", list(MHA_CONFIGS))
@pytest.mark.parametrize("masks", list(MASKS))
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_matches_torch(config, masks, need_weights, average):
    kw = MHA_CONFIGS[config]
    E, H, L, S, N = 8, 2, 3, 4, 2
    ours = nn.MultiheadAttention(E, H, dtype=dg.float64, **kw)
    theirs = tnn.MultiheadAttention(E, H, **kw)
    _pair(ours, theirs)
    q, k, v = _arr(L, N, E), _arr(S, N, kw.get("kdim", E)), _arr(S, N, kw.get("vdim", E))
    if kw.get("batch_first"):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    (qo, ko, vo), (qt, kt, vt) = _leaves(q, k, v)
    am_kind, kpm_kind = MASKS[masks]
    am = kpm = None
    if am_kind == "bool2d":
        am = RNG.random((L, S)) > 0.7
        am[:, 0] = False  # no row fully blocked (PyTorch gives NaN there)
    elif am_kind == "float3d":
        am = _arr(N * H, L, S)
    if kpm_kind == "bool":
        kpm = np.zeros((N, S), bool)
        kpm[0, 1] = kpm[1, 3] = True
    args_o = dict(key_padding_mask=None if kpm is None else dg.tensor(kpm),
                  attn_mask=None if am is None else dg.tensor(am))
    args_t = dict(key_padding_mask=None if kpm is None else torch.tensor(kpm),
                  attn_mask=None if am is None else torch.tensor(am))
    with pytest.warns() if (am_kind == "float3d" and kpm_kind) else _nothing():
        yt, wt = theirs(qt, kt, vt, need_weights=need_weights, average_attn_weights=average,
                        **args_t)
    yo, wo = ours(qo, ko, vo, need_weights=need_weights, average_attn_weights=average, **args_o)
    _close(yo, yt)
    if need_weights:
        assert tuple(wo.shape) == tuple(wt.shape)
        _close(wo, wt)
    else:
        assert wo is None and wt is None
    _backward_both(yo, yt)
    for a, b, n in ((qo, qt, "query"), (ko, kt, "key"), (vo, vt, "value")):
        _close(a.grad, b.grad, what=n)
    _check_param_grads(ours, theirs)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_mha_unbatched_self_attention_float32():
    ours, theirs = nn.MultiheadAttention(6, 3), tnn.MultiheadAttention(6, 3)
    _pair(ours, theirs, torch.float32)
    x = _arr(4, 6, dtype=np.float32)
    kpm = np.array([False, True, False, False])
    (xo,), (xt,) = _leaves(x)
    yo, wo = ours(xo, xo, xo, key_padding_mask=dg.tensor(kpm))
    yt, wt = theirs(xt, xt, xt, key_padding_mask=torch.tensor(kpm))
    _close(yo, yt, TOL32)
    _close(wo, wt, TOL32)
    _backward_both(yo, yt)
    _close(xo.grad, xt.grad, TOL32)
    _check_param_grads(ours, theirs, TOL32)


def test_mha_dropout_only_in_training():
    dg.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = dg.randn(3, 2, 8)
    m.eval()
    ref = nn.MultiheadAttention(8, 2)
    ref.load_state_dict(m.state_dict())
    np.testing.assert_allclose(m(x, x, x)[0].detach().numpy(), ref(x, x, x)[0].detach().numpy())
    m.train()
    assert not np.allclose(m(x, x, x)[0].detach().numpy(), ref(x, x, x)[0].detach().numpy())


def test_mha_state_dict_init_and_repr():
    for kw in ({}, dict(kdim=3, vdim=5, add_bias_kv=True)):
        ours, theirs = nn.MultiheadAttention(8, 2, **kw), tnn.MultiheadAttention(8, 2, **kw)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert repr(ours) == repr(theirs)
    m = nn.MultiheadAttention(64, 4)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ on (3E, E)
    assert w.min() >= -bound and w.max() <= bound and w.std() > 0.5 * bound / math.sqrt(3)
    assert np.all(m.in_proj_bias.detach().numpy() == 0)
    assert np.all(m.out_proj.bias.detach().numpy() == 0)


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    m = nn.MultiheadAttention(8, 2)
    x = dg.randn(3, 2, 8)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        m(dg.randn(3, 2, 6), x, x)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(3, 4\), but should "
                                           r"be \(3, 3\)"):
        m(x, x, x, attn_mask=dg.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is \(2, 3, 3\), but "
                                           r"should be \(4, 3, 3\)"):
        m(x, x, x, attn_mask=dg.zeros(2, 3, 3))
    with pytest.raises(AssertionError, match=r"expected key_padding_mask of shape \(2, 3\)"):
        m(x, x, x, key_padding_mask=dg.zeros(3, 2, dtype=dg.bool))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="expected `key` to be 3-D but found 2-D"):
        m(x, dg.randn(3, 8), x)


# --- Transformer layers ---------------------------------------------------------------------

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_matches_torch(norm_first, activation, batch_first):
    kw = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, activation=activation,
              batch_first=batch_first, norm_first=norm_first)
    ours = nn.TransformerEncoderLayer(dtype=dg.float64, **kw)
    theirs = tnn.TransformerEncoderLayer(**kw)
    _pair(ours, theirs)
    L, N = 5, 2
    src = _arr(N, L, 8) if batch_first else _arr(L, N, 8)
    mask = np.triu(np.ones((L, L), bool), 1)  # bool like the padding mask (torch warns on a mix)
    kpm = np.zeros((N, L), bool)
    kpm[1, 4] = True
    (so,), (st,) = _leaves(src)
    yo = ours(so, src_mask=dg.tensor(mask), src_key_padding_mask=dg.tensor(kpm))
    yt = theirs(st, src_mask=torch.tensor(mask), src_key_padding_mask=torch.tensor(kpm))
    _close(yo, yt)
    _backward_both(yo, yt)
    _close(so.grad, st.grad)
    _check_param_grads(ours, theirs)


def test_encoder_stack_with_norm_matches_torch():
    layer_o = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=dg.float64)
    layer_t = tnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    ours = nn.TransformerEncoder(layer_o, 2, norm=nn.LayerNorm(8, dtype=dg.float64))
    theirs = tnn.TransformerEncoder(layer_t, 2, norm=tnn.LayerNorm(8), enable_nested_tensor=False)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # the two deep copies start equal; make them differ so a layer mix-up would show
    with dg.no_grad():
        ours.layers[1].linear1.weight.mul_(-1.5)
    _pair(ours, theirs)
    (so,), (st,) = _leaves(_arr(4, 3, 8))
    causal = nn.generate_square_subsequent_mask(4, dtype=dg.float64)
    yo = ours(so, mask=causal, is_causal=True)
    yt = theirs(st, mask=tnn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
                is_causal=True)
    _close(yo, yt)
    _backward_both(yo, yt)
    _close(so.grad, st.grad)
    _check_param_grads(ours, theirs)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_layer_matches_torch(norm_first, activation):
    kw = dict(d_model=8, nhead=4, dim_feedforward=12, dropout=0.0, activation=activation,
              norm_first=norm_first, batch_first=True)
    ours = nn.TransformerDecoderLayer(dtype=dg.float64, **kw)
    theirs = tnn.TransformerDecoderLayer(**kw)
    _pair(ours, theirs)
    N, T, S = 2, 4, 5
    (to, mo), (tt, mt) = _leaves(_arr(N, T, 8), _arr(N, S, 8))
    tgt_mask = np.triu(np.ones((T, T), bool), 1)
    mem_kpm = np.zeros((N, S), bool)
    mem_kpm[0, 0] = True
    yo = ours(to, mo, tgt_mask=dg.tensor(tgt_mask), memory_key_padding_mask=dg.tensor(mem_kpm))
    yt = theirs(tt, mt, tgt_mask=torch.tensor(tgt_mask),
                memory_key_padding_mask=torch.tensor(mem_kpm))
    _close(yo, yt)
    _backward_both(yo, yt)
    _close(to.grad, tt.grad)
    _close(mo.grad, mt.grad)
    _check_param_grads(ours, theirs)


def test_decoder_stack_and_reprs():
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    dec = nn.TransformerDecoder(layer, 2)
    out = dec(dg.randn(3, 2, 8), dg.randn(5, 2, 8))
    assert tuple(out.shape) == (3, 2, 8)
    assert list(dec.state_dict()) == list(tnn.TransformerDecoder(
        tnn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2).state_dict())
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    custom = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=nn.GELU())
    assert tuple(custom(dg.randn(3, 2, 8)).shape) == (3, 2, 8)
