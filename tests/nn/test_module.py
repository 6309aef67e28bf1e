"""Module and Parameter: registration, traversal order, state_dict, hooks, modes, conversion and
printing, checked against PyTorch 2.13 built the same way."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn

torch = pytest.importorskip("torch")
tnn = torch.nn


def _tree(lib, mod_nn):
    """The same small model in dynagrad or torch: nested children, a shared module, a None
    parameter slot, persistent and non-persistent buffers."""

    class Block(mod_nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = mod_nn.Linear(3, 4)
            self.scale = mod_nn.Parameter(lib.ones(4))
            self.register_buffer("running", lib.zeros(4))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.fc(x) * self.scale

    class Net(mod_nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Block()
            self.head = mod_nn.Sequential(mod_nn.Linear(4, 2), mod_nn.Flatten())
            self.alias = self.first  # shared: listed once by the de-duplicating iterators
            self.register_buffer("steps", lib.tensor(0))
            self.gain = mod_nn.Parameter(lib.tensor(2.0))

        def forward(self, x):
            return self.head(self.first(x)) * self.gain

    return Net()


def _copy_weights(dst_torch, src_dg):
    dst_torch.load_state_dict({k: torch.tensor(np.array(v.numpy()))
                               for k, v in src_dg.state_dict().items()})


@pytest.fixture
def pair():
    return _tree(dg, nn), _tree(torch, tnn)


# --- Parameter ----------------------------------------------------------------------------

def test_parameter_basics():
    data = dg.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, dg.Tensor)
    assert p.requires_grad and p.is_leaf
    p.detach().mul_(2)  # shares memory with data, as in PyTorch
    assert data.tolist() == [2.0, 4.0]
    assert not nn.Parameter(dg.zeros(2), requires_grad=False).requires_grad
    assert tuple(nn.Parameter().shape) == (0,)
    assert type(p * 2) is dg.Tensor  # op results are plain tensors


def test_parameter_repr_matches_torch():
    for rg in (True, False):
        ours = repr(nn.Parameter(dg.tensor([1.0, 2.5]), requires_grad=rg))
        theirs = repr(tnn.Parameter(torch.tensor([1.0, 2.5]), requires_grad=rg))
        assert ours == theirs


def test_parameter_copy_and_pickle_keep_the_type():
    p = nn.Parameter(dg.tensor([1.0, 2.0]))
    p.grad = dg.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.grad.tolist() == [0.5, 0.5]
    q.detach().add_(1)
    assert p.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(nn.Parameter(dg.tensor([3.0]), requires_grad=False)))
    assert type(r) is nn.Parameter and not r.requires_grad and r.tolist() == [3.0]


def test_parameter_rejects_integer_data():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(dg.tensor([1, 2]))


# --- registration -------------------------------------------------------------------------

def test_registration_by_assignment(pair):
    m, _ = pair
    b = m.first
    assert list(b._parameters) == ["scale", "unused"]
    assert list(b._buffers) == ["running", "scratch"]
    assert list(b._modules) == ["fc"]
    assert b.unused is None and isinstance(b.fc, nn.Linear)
    # reassigning a parameter slot with a plain tensor is an error, None is allowed
    with pytest.raises(TypeError, match="cannot assign 'dynagrad.FloatTensor' as parameter "
                                        "'scale'"):
        b.scale = dg.ones(4)
    b.scale = None
    assert b._parameters["scale"] is None
    # a buffer slot accepts tensors; a module slot only modules
    b.running = dg.ones(4)
    assert b._buffers["running"].tolist() == [1.0] * 4
    with pytest.raises(TypeError, match="as buffer 'running'"):
        b.running = 3
    with pytest.raises(TypeError, match="as child module 'fc'"):
        b.fc = 3
    # changing the kind of an attribute moves it between registries
    b.fc = nn.Parameter(dg.zeros(1))
    assert "fc" in b._parameters and "fc" not in b._modules
    b.plain = 5
    assert b.plain == 5 and "plain" in b.__dict__


def test_registration_errors_match_torch():
    m, t = nn.Module(), tnn.Module()
    m.x, t.x = 1, 1
    cases = [
        (lambda mod, lib: mod.register_buffer("a.b", lib.zeros(1)), KeyError),
        (lambda mod, lib: mod.register_buffer("", lib.zeros(1)), KeyError),
        (lambda mod, lib: mod.register_buffer("x", lib.zeros(1)), KeyError),
        (lambda mod, lib: mod.register_parameter("a.b", None), KeyError),
        (lambda mod, lib: mod.register_parameter("x", None), KeyError),
        (lambda mod, lib: mod.add_module("a.b", None), KeyError),
        (lambda mod, lib: mod.add_module("", None), KeyError),
        (lambda mod, lib: mod.add_module("x", None), KeyError),
        (lambda mod, lib: mod.register_buffer(1, None), TypeError),
        (lambda mod, lib: mod.add_module("y", 3), TypeError),
    ]
    for fn, exc in cases:
        with pytest.raises(exc) as ours:
            fn(m, dg)
        with pytest.raises(exc) as theirs:
            fn(t, torch)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(TypeError, match="cannot assign 'dynagrad.FloatTensor' object to "
                                        "parameter 'w'"):
        m.register_parameter("w", dg.zeros(1))
    q = nn.Parameter(dg.ones(1))
    q.grad_fn = (nn.Parameter(dg.ones(1)) * 2).grad_fn  # a Parameter carrying history
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        m.register_parameter("w", q)


def test_assign_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(dg.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Bad()


def test_getattr_and_delattr():
    m, _ = _tree(dg, nn), None
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        m.nope
    del m.gain
    del m.steps
    del m.head
    assert "gain" not in m._parameters and "steps" not in m._buffers and "head" not in m._modules
    m.first.extra = 1
    del m.first.extra
    assert not hasattr(m.first, "extra")
    del m.first.scratch
    assert "scratch" not in m.first._non_persistent_buffers_set


def test_buffer_marker_registers():
    m = nn.Module()
    m.stat = nn.Buffer(dg.zeros(2), persistent=False)
    m.kept = nn.Buffer(dg.ones(1))
    assert list(m._buffers) == ["stat", "kept"]
    assert list(m.state_dict()) == ["kept"]


def test_dir_lists_members(pair):
    m, _ = pair
    d = dir(m)
    for name in ("first", "head", "steps", "gain", "forward", "state_dict"):
        assert name in d


# --- traversal ----------------------------------------------------------------------------

def _names(it):
    return [n for n, _ in it]


def test_named_iterators_match_torch(pair):
    m, t = pair
    assert _names(m.named_parameters()) == _names(t.named_parameters())
    assert _names(m.named_buffers()) == _names(t.named_buffers())
    assert _names(m.named_children()) == _names(t.named_children())
    assert _names(m.named_modules()) == _names(t.named_modules())
    assert _names(m.named_parameters(prefix="net", recurse=True)) == \
        _names(t.named_parameters(prefix="net"))
    assert _names(m.named_parameters(recurse=False)) == _names(t.named_parameters(recurse=False))
    assert _names(m.named_parameters(remove_duplicate=False)) == \
        _names(t.named_parameters(remove_duplicate=False))
    assert _names(m.named_modules(remove_duplicate=False)) == \
        _names(t.named_modules(remove_duplicate=False))
    assert _names(m.named_buffers(recurse=False)) == _names(t.named_buffers(recurse=False))
    assert len(list(m.parameters())) == len(list(t.parameters()))
    assert len(list(m.buffers())) == len(list(t.buffers()))
    assert [type(c).__name__ for c in m.children()] == [type(c).__name__ for c in t.children()]
    assert [type(c).__name__ for c in m.modules()] == [type(c).__name__ for c in t.modules()]


def test_submodule_lookup(pair):
    m, _ = pair
    assert m.get_submodule("head.0") is m.head[0]
    assert m.get_parameter("first.fc.weight") is m.first.fc.weight
    assert m.get_buffer("first.running") is m.first.running
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        m.get_submodule("first.nope")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        m.get_parameter("first.running")


# --- state_dict ---------------------------------------------------------------------------

def test_state_dict_keys_order_and_values(pair):
    m, t = pair
    sd = m.state_dict()
    assert list(sd) == list(t.state_dict())
    assert isinstance(sd, OrderedDict)
    assert not any(v.requires_grad for v in sd.values())
    assert sd["first.fc.weight"].data_ptr() == m.first.fc.weight.data_ptr()  # shares memory
    kept = m.state_dict(keep_vars=True)
    assert kept["gain"] is m.gain
    assert list(m.state_dict(prefix="model.")) == list(t.state_dict(prefix="model."))
    assert sd._metadata[""] == {"version": 1}


def test_load_state_dict_round_trip_with_torch(pair):
    m, t = pair
    _copy_weights(t, m)
    for (k, a), (k2, b) in zip(m.state_dict().items(), t.state_dict().items()):
        assert k == k2
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    fresh = _tree(dg, nn)
    result = fresh.load_state_dict({k: dg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(fresh(dg.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def _load_error(mod, sd, **kw):
    with pytest.raises(RuntimeError) as info:
        mod.load_state_dict(sd, **kw)
    return str(info.value)


def test_load_state_dict_errors_match_torch(pair):
    m, t = pair
    ours = m.state_dict()
    theirs = t.state_dict()
    for sd in (ours, theirs):
        del sd["first.running"]
        sd["first.extra"] = (dg if sd is ours else torch).zeros(1)
        sd["bogus.key"] = (dg if sd is ours else torch).zeros(1)
        sd["head.0.bias"] = (dg if sd is ours else torch).zeros(7)
    msg_ours = _load_error(m, ours)
    msg_theirs = _load_error(t, theirs)
    assert msg_ours == msg_theirs.replace("torch.Size", "dynagrad.Size")
    # strict=False: only the size mismatch is an error
    del ours["head.0.bias"]
    del theirs["head.0.bias"]
    ours_res = m.load_state_dict(ours, strict=False)
    theirs_res = t.load_state_dict(theirs, strict=False)
    assert ours_res.missing_keys == theirs_res.missing_keys
    assert ours_res.unexpected_keys == theirs_res.unexpected_keys
    assert repr(ours_res) == repr(theirs_res)


def test_load_state_dict_type_errors():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])
    msg = _load_error(m, {"weight": [[1.0, 2.0], [3.0, 4.0]], "bias": dg.zeros(2)})
    assert 'While copying the parameter named "weight", expected Tensor' in msg


def test_load_state_dict_casts_and_copies_in_place():
    m = nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": dg.ones(2, 2, dtype=dg.float64), "bias": dg.zeros(2)})
    assert m.weight is w and w.dtype is dg.float32 and w.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert w.requires_grad


def test_load_state_dict_assign():
    m = nn.Linear(2, 2)
    new_w = dg.ones(2, 2)
    m.load_state_dict({"weight": new_w, "bias": dg.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight.data_ptr() == new_w.data_ptr()


def test_non_persistent_buffer_not_loaded(pair):
    m, _ = pair
    m.first.scratch.fill_(7.0)
    m.load_state_dict(m.state_dict())
    assert m.first.scratch.tolist() == [7.0, 7.0]


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.note = "a"

        def get_extra_state(self):
            return {"note": self.note}

        def set_extra_state(self, state):
            self.note = state["note"]

    src, dst = WithExtra(), WithExtra()
    src.note = "b"
    sd = src.state_dict()
    assert list(sd) == ["_extra_state"]
    dst.load_state_dict(sd)
    assert dst.note == "b"
    assert "Missing key(s) in state_dict: \"_extra_state\"" in _load_error(dst, {})


# --- modes, grads, apply ----------------------------------------------------------------

def test_train_eval_propagate(pair):
    m, _ = pair
    assert m.training and m.first.fc.training
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)


def test_requires_grad_and_zero_grad(pair):
    m, _ = pair
    m(dg.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_apply_visits_children_first(pair):
    m, t = pair
    ours, theirs = [], []
    m.apply(lambda mod: ours.append(type(mod).__name__))
    t.apply(lambda mod: theirs.append(type(mod).__name__))
    assert ours == theirs


# --- dtype / device -----------------------------------------------------------------------

def test_to_dtype_keeps_parameter_identity(pair):
    m, _ = pair
    w = m.first.fc.weight
    m(dg.randn(2, 3)).sum().backward()
    assert m.double() is m
    assert m.first.fc.weight is w and w.dtype is dg.float64 and w.grad.dtype is dg.float64
    assert isinstance(w, nn.Parameter) and w.requires_grad
    assert m.first.running.dtype is dg.float64
    assert m.steps.dtype is dg.int64  # integer buffers keep their dtype
    out = m(dg.randn(2, 3, dtype=dg.float64))
    assert out.dtype is dg.float64
    m.to(dg.float32)
    assert w.dtype is dg.float32
    m.to("cpu", dg.float64)
    assert w.dtype is dg.float64
    m.float()
    m.to(dg.zeros(1, dtype=dg.float64))
    assert w.dtype is dg.float64
    assert m.cpu() is m
    with pytest.raises(TypeError, match="only accepts floating point dtypes"):
        m.to(dg.int64)


def test_to_cpu_keeps_parameters(pair):
    m, _ = pair  # moving to "cuda" (and its error without CUDA): tests/cuda/test_cuda_tensor.py
    params = list(m.parameters())
    assert m.to("cpu") is m and m.cpu() is m and list(m.parameters()) == params


# --- hooks --------------------------------------------------------------------------------

def _hook_trace(lib, mod_nn):
    log = []
    m = mod_nn.Linear(2, 2)
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    h3 = m.register_forward_hook(lambda mod, args, out: log.append("post1"))
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("post_kw", len(args))),
                            with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append("post0"), prepend=True)
    m(lib.zeros(1, 2))
    h1.remove()
    h3.remove()
    m(lib.zeros(1, 2))
    return log


def test_hook_order_and_removal_match_torch():
    assert _hook_trace(dg, nn) == _hook_trace(torch, tnn)


def test_hooks_can_replace_input_and_output():
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args: args[0] + 1)  # a non-tuple becomes (value,)
    handle = m.register_forward_hook(lambda mod, args, out: out * 10)
    assert m(dg.tensor(1.0)).item() == 20.0
    handle.remove()
    assert m(dg.tensor(1.0)).item() == 2.0
    m2 = nn.Identity()
    m2.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 3,), kwargs),
                                 with_kwargs=True)
    assert m2(dg.tensor(1.0)).item() == 3.0
    with m2.register_forward_hook(lambda mod, args, out: out + 1):
        assert m2(dg.tensor(1.0)).item() == 4.0
    assert m2(dg.tensor(1.0)).item() == 3.0  # the context manager removed it


def test_always_call_hook_runs_on_error():
    seen = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert seen == [None]


def test_missing_forward():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                  r'"forward" function'):
        nn.Module()(1)


# --- printing -----------------------------------------------------------------------------

def test_repr_tree_matches_torch(pair):
    m, t = pair
    assert repr(m) == repr(t)

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    class TMulti(tnn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    ours, theirs = Multi(), TMulti()
    ours.child, theirs.child = nn.Linear(1, 1), tnn.Linear(1, 1)
    assert repr(ours).replace("Multi", "X") == repr(theirs).replace("TMulti", "X")
    assert nn.Module()._get_name() == "Module"


def test_deepcopy_and_pickle_module(pair):
    m, _ = pair
    c = copy.deepcopy(m)
    assert c.alias is c.first
    assert isinstance(c.first.fc.weight, nn.Parameter)
    assert list(c.state_dict()) == list(m.state_dict())
    c.first.fc.weight.detach().zero_()
    assert m.first.fc.weight.detach().numpy().any()
    seq = nn.Sequential(nn.Linear(3, 2), nn.Flatten())
    p = pickle.loads(pickle.dumps(seq))
    x = dg.randn(2, 3)
    np.testing.assert_array_equal(p(x).detach().numpy(), seq(x).detach().numpy())
    assert isinstance(p[0].weight, nn.Parameter)
