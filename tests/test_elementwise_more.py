"""The pointwise ops issue 26 added, beyond their OpInfo records (which run in
test_elementwise.py): special values, dtype rules and errors, in-place forms, against torch."""
import math

import numpy as np
import pytest
import torch

import dynagrad as dg

NAN, INF = math.nan, math.inf


def _same(ours, theirs, rtol=0.0):
    """Same dtype, shape and values (NaN matching NaN, infinities exactly)."""
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", ["fmax", "fmin", "logaddexp", "logaddexp2", "hypot",
                                  "copysign", "nextafter"])
def test_special_values_match_torch(name):
    v = [NAN, INF, -INF, 0.0, -0.0, 1.0, -2.5]
    x = np.array(v * len(v))
    y = np.repeat(v, len(v))
    for np_dt in (np.float32, np.float64):
        ours = getattr(dg, name)(dg.tensor(x.astype(np_dt)), dg.tensor(y.astype(np_dt)))
        theirs = getattr(torch, name)(torch.tensor(x.astype(np_dt)),
                                      torch.tensor(y.astype(np_dt)))
        _same(ours, theirs, 1e-6 if np_dt is np.float32 else 1e-15)


def test_nextafter_float32_steps_one_float32_ulp():
    x = np.array([1.0, -2.5, 0.0, 3e38], np.float32)
    y = np.array([2.0, -3.0, -1.0, np.inf], np.float32)
    np.testing.assert_array_equal(dg.nextafter(dg.tensor(x), dg.tensor(y)).numpy(),
                                  np.nextafter(x, y))


def test_unary_special_values_match_torch():
    x = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0]
    for name in ("acosh", "atanh", "deg2rad", "rad2deg", "signbit", "isposinf", "isneginf"):
        _same(getattr(dg, name)(dg.tensor(x)), getattr(torch, name)(torch.tensor(x)), 1e-6)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "acosh", "atanh", "copysign"])
def test_integer_inputs_give_the_default_float(name):
    args = (dg.tensor([1, 2]),) + ((dg.tensor([-1, 1]),) if name == "copysign" else ())
    targs = [torch.tensor(a.tolist()) for a in args]
    _same(getattr(dg, name)(*args), getattr(torch, name)(*targs), 1e-6)


def test_dtype_rules_and_errors():
    i, f = dg.tensor([4, -6, 0]), dg.tensor([1.0, 2.0, 3.0])
    assert dg.gcd(i, dg.tensor([6, 4, 0], dtype=dg.int32)).dtype is dg.int64
    with pytest.raises(TypeError, match="gcd"):
        dg.gcd(f, f)
    with pytest.raises(TypeError, match="lcm"):
        dg.lcm(dg.tensor([True]), dg.tensor([True]))
    with pytest.raises(TypeError, match="nextafter"):
        dg.nextafter(i, i)
    with pytest.raises(TypeError, match="hypot"):
        dg.hypot(i, i)
    with pytest.raises(RuntimeError, match="different dtypes"):
        dg.heaviside(f, i)
    assert dg.heaviside(dg.tensor([True, False]), dg.tensor([False, True])).tolist() == \
        [True, True]
    with pytest.raises(RuntimeError, match="floating-point"):
        dg.frexp(i)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        dg.addcdiv(f, i, i)
    with pytest.raises(RuntimeError, match="did not match"):
        dg.isclose(f, f.double())
    with pytest.raises(RuntimeError, match="rtol must be greater"):
        dg.isclose(f, f, rtol=-1)
    with pytest.raises(RuntimeError, match="not supported"):
        dg.positive(dg.tensor([True]))
    assert dg.positive(f) is f
    # addcmul's value takes the result's dtype (an integer result truncates it), as torch
    _same(dg.addcmul(i, i, i, value=0.5), torch.addcmul(torch.tensor([4, -6, 0]),
                                                         torch.tensor([4, -6, 0]),
                                                         torch.tensor([4, -6, 0]), value=0.5))
    _same(dg.ldexp(i, i.clamp(max=2)), torch.ldexp(torch.tensor([4, -6, 0]),
                                                    torch.tensor([2, -6, 0])))
    m, e = dg.frexp(dg.tensor([0.0, INF, NAN, -0.0, 1e-40]))
    tm, te = torch.frexp(torch.tensor([0.0, INF, NAN, -0.0, 1e-40]))
    _same(m, tm)
    _same(e, te)
    assert dg.equal(f, dg.tensor([1, 2, 3])) is torch.equal(torch.tensor([1.0, 2.0, 3.0]),
                                                            torch.tensor([1, 2, 3])) is True
    assert dg.equal(f, dg.tensor([1.0, 2.0, NAN])) is False
    assert dg.equal(f, f.double()) is torch.equal(torch.tensor([1.0, 2.0, 3.0]),
                                                  torch.tensor([1.0, 2.0, 3.0]).double())


def test_inplace_forms_check_their_dtype_and_autograd_like_torch():
    x = dg.tensor([1.0, 2.0], dtype=dg.float64)
    assert x.float_power_(2) is x and x.tolist() == [1.0, 4.0]
    with pytest.raises(RuntimeError, match="float_power_"):
        dg.tensor([1.0, 2.0]).float_power_(2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.tensor([1, 2]).clamp_min_(0.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.tensor([1, 2]).addcmul_(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.0]))
    leaf = dg.tensor([1.0, 2.0], requires_grad=True)
    for call in (lambda t: t.hypot_(t), lambda t: t.clamp_max_(0.5), lambda t: t.ldexp_(t),
                 lambda t: t.addcdiv_(t, t)):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            call(leaf)
    # on a non-leaf the in-place form joins the graph: the gradient is the out-of-place one's
    a = dg.tensor([0.5, -1.5, 2.0], dtype=dg.float64, requires_grad=True)
    b = dg.tensor([1.0, 2.0, -3.0], dtype=dg.float64)
    y = a * 1.0
    version = y._version
    y.addcmul_(y, b, value=2.0).clamp_min_(0.0)
    assert y._version > version
    y.sum().backward()
    ta = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    (ta * 1.0).addcmul_(ta * 1.0, torch.tensor([1.0, 2.0, -3.0], dtype=torch.float64),
                        value=2.0).clamp_min_(0.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


def test_heaviside_backward_is_not_implemented_like_torch():
    x = dg.tensor([1.0, -1.0], requires_grad=True)
    out = dg.heaviside(x, dg.tensor([0.5]))
    with pytest.raises(RuntimeError, match="heaviside"):
        out.sum().backward()


@pytest.mark.parametrize("call", ["clamp_min", "clamp_max", "clamp_both"])
def test_tensor_bound_clamp_gradients_at_ties_and_nan_match_torch(call):
    """Ties send the gradient to the input, crossed bounds (min > max) to max, NaN to nobody."""
    values = {"x": [1.0, 2.0, NAN, 0.0, 5.0, 3.0], "lo": [1.0, NAN, 0.0, 2.0, 0.0, 4.0],
              "hi": [3.0, 3.0, 3.0, 1.0, 5.0, 2.0]}
    results = []
    for lib in (dg, torch):
        t = {k: lib.tensor(v, dtype=lib.float64, requires_grad=True) for k, v in values.items()}
        if call == "clamp_both":
            y = lib.clamp(t["x"], min=t["lo"], max=t["hi"])
        else:
            y = getattr(lib, call)(t["x"], t["lo"] if call == "clamp_min" else t["hi"])
        y.backward(lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=lib.float64))
        results.append([y.tolist()] + [None if t[k].grad is None else t[k].grad.tolist()
                                       for k in ("x", "lo", "hi")])
    assert str(results[0]) == str(results[1])  # (str: NaN equals NaN)
