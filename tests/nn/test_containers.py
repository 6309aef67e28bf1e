"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict against PyTorch 2.13."""
from collections import OrderedDict

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn

torch = pytest.importorskip("torch")
tnn = torch.nn


def _repr_eq(ours, theirs):
    assert repr(ours) == repr(theirs).replace("torch.", "dynagrad.")


def _seq(mod_nn):
    return mod_nn.Sequential(mod_nn.Linear(3, 4), mod_nn.Identity(), mod_nn.Linear(4, 2))


# --- Sequential ---------------------------------------------------------------------------

def test_sequential_forward_matches_torch():
    ours, theirs = _seq(nn), _seq(tnn)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    xo, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    yo.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    for (n, p), (n2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_sequential_from_ordered_dict():
    od = OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Identity())])
    s = nn.Sequential(od)
    assert s.fc is od["fc"] and s[0] is od["fc"] and s[-1] is od["act"]
    assert list(s.state_dict()) == ["fc.weight", "fc.bias"]
    t = tnn.Sequential(OrderedDict([("fc", tnn.Linear(2, 2)), ("act", tnn.Identity())]))
    _repr_eq(s, t)


def test_sequential_indexing_and_slicing():
    ours, theirs = _seq(nn), _seq(tnn)
    assert len(ours) == 3
    sub = ours[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"]
    assert sub[1] is ours[2]
    _repr_eq(ours[::2], theirs[::2])
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ours[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        ours[-4]
    assert list(ours) == [ours[0], ours[1], ours[2]]
    new = nn.Identity()
    ours[1] = new
    assert ours[1] is new


def test_sequential_mutation_matches_torch():
    ours, theirs = _seq(nn), _seq(tnn)
    for s, lib in ((ours, nn), (theirs, tnn)):
        del s[0]
        s.append(lib.Flatten())
        s.insert(1, lib.Identity())
        s.extend([lib.Identity()])
        s.insert(-1, lib.Flatten(0))
    assert list(ours._modules) == list(theirs._modules)
    _repr_eq(ours, theirs)
    popped = ours.pop(0)
    assert isinstance(popped, nn.Identity) and list(ours._modules) == ["0", "1", "2", "3", "4"]
    del ours[1:3]
    assert list(ours._modules) == ["0", "1", "2"]


def test_sequential_add_mul():
    a, b = nn.Sequential(nn.Identity()), nn.Sequential(nn.Flatten())
    c = a + b
    assert [type(m).__name__ for m in c] == ["Identity", "Flatten"]
    assert len(a * 3) == 3 and len(2 * a) == 2
    a += b
    assert len(a) == 2
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        a + nn.Identity()


def test_empty_reprs():
    for cls in ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
        _repr_eq(getattr(nn, cls)(), getattr(tnn, cls)())


# --- ModuleList ---------------------------------------------------------------------------

def test_module_list_matches_torch():
    def build(lib):
        shared = lib.Linear(2, 3)
        ml = lib.ModuleList([shared, shared, shared, lib.Identity()])
        ml.append(lib.Linear(3, 3))
        ml.extend([lib.Identity(), lib.Identity()])
        ml.insert(1, lib.Flatten())
        ml += [lib.Linear(1, 1)]
        return ml

    ours, theirs = build(nn), build(tnn)
    _repr_eq(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert len(ours) == len(theirs) == 9
    assert isinstance(ours[-1], nn.Linear) and isinstance(ours[1], nn.Flatten)
    sl = ours[2:4]
    assert isinstance(sl, nn.ModuleList) and len(sl) == 2
    del ours[0]
    del theirs[0]
    _repr_eq(ours, theirs)
    ours[0] = nn.Identity()
    assert isinstance(ours[0], nn.Identity)
    with pytest.raises(IndexError, match="index 20 is out of range"):
        ours[20]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ours.extend(3)
    joined = ours + nn.ModuleList([nn.Identity()])
    assert len(joined) == len(ours) + 1
    with pytest.raises(NotImplementedError):
        ours(1)


# --- ModuleDict ---------------------------------------------------------------------------

def test_module_dict_matches_torch():
    def build(lib):
        md = lib.ModuleDict({"b": lib.Linear(1, 2), "a": lib.Identity()})
        md["c"] = lib.Flatten()
        md.update([("d", lib.Identity())])
        md.update(OrderedDict([("e", lib.Linear(2, 1))]))
        return md

    ours, theirs = build(nn), build(tnn)
    _repr_eq(ours, theirs)
    assert list(ours) == list(theirs) == ["b", "a", "c", "d", "e"]
    assert list(ours.keys()) == list(theirs.keys())
    assert "c" in ours and "z" not in ours and len(ours) == 5
    assert isinstance(ours.pop("c"), nn.Flatten) and "c" not in ours
    del ours["d"]
    assert [k for k, _ in ours.items()] == ["b", "a", "e"]
    assert list(ours.state_dict()) == ["b.weight", "b.bias", "e.weight", "e.bias"]
    with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
        ours.update([("x", nn.Identity(), 1)])
    with pytest.raises(TypeError, match="should be called with an iterable of key/value pairs"):
        ours.update(3)
    ours.clear()
    assert len(ours) == 0


# --- ParameterList / ParameterDict ------------------------------------------------------

def test_parameter_list_matches_torch():
    def build(lib, mod_nn):
        pl = mod_nn.ParameterList([mod_nn.Parameter(lib.ones(3)), lib.zeros(2, 2)])
        pl.append(mod_nn.Parameter(lib.ones(1, dtype=lib.float64)))
        pl.extend([lib.ones(4)])
        return pl

    ours, theirs = build(dg, nn), build(torch, tnn)
    _repr_eq(ours, theirs)
    assert len(ours) == 4
    assert all(isinstance(p, nn.Parameter) for p in ours)  # plain tensors are converted
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert isinstance(ours[1:], nn.ParameterList) and len(ours[1:]) == 3
    assert ours[-1] is ours[3]
    p = nn.Parameter(dg.zeros(5))
    ours[0] = p
    assert ours[0] is p
    with pytest.raises(IndexError):
        ours[4]
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        ours()


def test_parameter_dict_matches_torch():
    def build(lib, mod_nn):
        pd = mod_nn.ParameterDict({"w": mod_nn.Parameter(lib.ones(3)), "b": lib.zeros(2)})
        pd["z"] = lib.ones(2, 2, dtype=lib.float64)
        pd.update([("a", mod_nn.Parameter(lib.ones(1)))])
        return pd

    ours, theirs = build(dg, nn), build(torch, tnn)
    _repr_eq(ours, theirs)
    assert list(ours) == list(theirs) == ["b", "w", "z", "a"]  # plain dicts are sorted first
    assert all(isinstance(v, nn.Parameter) for v in ours.values())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "w" in ours and ours.get("nope") is None and len(ours) == 4
    assert ours.pop("z").dtype is dg.float64 and "z" not in ours
    k, v = ours.popitem()
    assert k == "a" and list(ours) == ["b", "w"]
    assert ours.setdefault("q", dg.ones(1)).tolist() == [1.0]
    merged = ours | nn.ParameterDict({"r": dg.ones(1)})
    assert list(merged) == ["b", "w", "q", "r"]
    assert list(ours.copy()) == list(ours)
    ours.clear()
    assert len(ours) == 0 and list(ours.parameters()) == []
    with pytest.raises(RuntimeError, match="ParameterDict should not be called"):
        ours()
