"""The op-test harness: ``check_op`` runs an ``OpInfo`` record (tests/opinfo.py), and the assertion
helpers the op tests share live here.

For each forward sample of a record in a dtype, ``check_op`` compares the op's result with the
float64 NumPy reference (shape, dtype, values within the record's tolerance), checks the inputs
were left alone, and compares values, shapes and dtypes with the torch function of the same name.
For each gradient sample it runs ``gradcheck`` in float64 (and ``gradgradcheck`` where the record
asks) and compares the input gradients with torch's. On "cuda" it runs the record's (small) CUDA
samples on the device and on the CPU: the same values, the same gradients.
"""
from __future__ import annotations

import numpy as np

import dynagrad as dg
from dynagrad.autograd import gradcheck, gradgradcheck
from dynagrad.dtypes import from_numpy_dtype
from opinfo import OPINFOS

try:
    import torch
except ImportError:  # parity checks need torch; everything else runs without it
    torch = None


# --- assertions ---------------------------------------------------------------------------------

def assert_values(actual, expected, dtype=None, tol=None, what=""):
    """``actual`` (a tensor, or a tuple or list of them: then ``expected`` holds one reference per
    tensor) equals the reference ``expected``: same shape, dtype ``dtype`` when given (one per
    output for a tuple), and values within ``tol`` (dtype name -> (rtol, atol)) for float
    results; exactly for bool and integer results and for a float dtype ``tol`` does not name.
    NaN matches NaN."""
    if isinstance(actual, (list, tuple)):
        assert isinstance(expected, (list, tuple)) and len(actual) == len(expected), \
            f"{what}: {len(actual)} outputs, expected {expected!r:.200}"
        dtypes = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(expected)
        for k, (a, e, d) in enumerate(zip(actual, expected, dtypes)):
            assert_values(a, e, d, tol, f"{what} output {k}")
        return
    exp = np.asarray(expected)
    assert isinstance(actual, dg.Tensor), f"{what}: not a tensor: {actual!r:.200}"
    assert tuple(actual.shape) == exp.shape, f"{what}: shape {tuple(actual.shape)} != {exp.shape}"
    if dtype is not None:
        assert actual.dtype is dtype, f"{what}: dtype {actual.dtype} != {dtype}"
    got = actual.detach().cpu().numpy()
    rtol_atol = (tol or {}).get(got.dtype.name)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, exp, err_msg=what)
    elif rtol_atol is None:
        np.testing.assert_array_equal(got, exp.astype(got.dtype), err_msg=what)
    else:
        rtol, atol = rtol_atol
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(got.astype(wide), exp, rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)


def assert_same_on_device(gpu_tensor, cpu_reference, rtol=1e-5, atol=1e-6):
    """A CUDA result equals the CPU result: values (NaN matching NaN), shape and dtype."""
    assert gpu_tensor.is_cuda, f"expected a cuda tensor, got {gpu_tensor.device}"
    dg.testing.assert_close(gpu_tensor.detach().cpu(), cpu_reference.detach(), rtol=rtol,
                            atol=atol, equal_nan=True)


def assert_all_close(got, want, rtol, atol, check_device=True):
    """Two sequences of tensors (None where a gradient is absent) agree one by one."""
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert (a is None) == (b is None)
        if a is not None:
            dg.testing.assert_close(a, b, rtol=rtol, atol=atol, check_device=check_device)


def float32_ulps(name, ref, x):
    """``(dynagrad's float32 results, float64 reference rounded to float32, the errors in ulp
    where the reference is a normal float32)`` of op ``name`` at ``x``."""
    x = np.asarray(x, np.float32)
    got = getattr(dg, name)(dg.tensor(x)).numpy().astype(np.float64)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
        want32 = want.astype(np.float32)
    normal = np.isfinite(want32) & (np.abs(want32) >= np.finfo(np.float32).tiny)
    return got, want32, np.abs(got[normal] - want[normal]) / np.spacing(np.abs(want32[normal]))


def assert_rounds_like_float64(name, ref, values):
    """Op ``name`` in float32 gives exactly the float64 reference, rounded, at ``values``."""
    x = np.asarray(values, np.float32)
    with np.errstate(all="ignore"):
        expected = ref(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(getattr(dg, name)(dg.tensor(x)).numpy(), expected)


# --- a sample made concrete ---------------------------------------------------------------------

# layout: (fewest dims it applies to, contiguous storage of an array, the view of that storage
# holding the array's values (dynagrad's and torch's), whether the view may still be contiguous)
_LAYOUTS = {
    "C": (0, lambda a: a, lambda t: t, lambda s: True),
    "T": (2, lambda a: a.T, lambda t: t.T if isinstance(t, dg.Tensor) else
          t.permute(*reversed(range(t.ndim))), lambda s: 1 in s or 0 in s),
    "mT": (2, lambda a: np.swapaxes(a, -1, -2), lambda t: t.mT, lambda s: 1 in s or 0 in s),
    "S": (1, lambda a: np.repeat(a, 2, axis=-1), lambda t: t[..., ::2],
          lambda s: s[-1] <= 1 or 0 in s),
}


def _applicable(layout, ndim):
    """``layout``, or "C" for an array with too few dims for it."""
    return layout if ndim >= _LAYOUTS[layout][0] else "C"


def _storage(array, layout):
    """The contiguous array whose ``layout`` view holds ``array``'s values."""
    return np.array(_LAYOUTS[layout][1](array), order="C")  # (0-d stays 0-d)


def laid_out(array, dtype, layout="C"):
    """A tensor of ``dtype`` holding ``array``'s values, laid out as ``layout`` ("C", "T", "mT",
    "S"; "T" and "mT" apply from 2-D up, "S" from 1-D)."""
    array = np.asarray(array)
    layout = _applicable(layout, array.ndim)
    return _LAYOUTS[layout][2](dg.tensor(_storage(array, layout), dtype=dtype))


def _map_tree(tree, array, tensor):
    """``tree`` (nested args, kwargs) with each NumPy array replaced by ``array(a)`` and each
    tensor by ``tensor(t)``, in order."""
    if isinstance(tree, np.ndarray):
        return array(tree)
    assert not isinstance(tree, np.generic), f"a NumPy scalar in a sample: {tree!r} (an array " \
                                             "or a Python number is meant)"
    if isinstance(tree, dg.Tensor):
        return tensor(tree)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_map_tree(v, array, tensor) for v in tree)
    if isinstance(tree, dict):
        return {k: _map_tree(v, array, tensor) for k, v in tree.items()}
    return tree


def op_of(info, sample):
    """The op of record ``info`` as ``sample`` calls it: the function, or the Tensor method."""
    if sample.method:
        return lambda first, *args, **kwargs: getattr(first, info.method)(*args, **kwargs)
    return info.fn


def _outputs(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


class Call:
    """One sample in one dtype on one device: its arrays as tensors laid out as the sample says,
    and the same call for the NumPy reference and for torch.

    ``inputs`` are the contiguous float leaves holding the inputs under test (gradcheck's
    inputs); the op sees views of them.
    """

    def __init__(self, sample, dtype, device="cpu", requires_grad=False):
        self.sample, self.dtype, self.device = sample, dtype, device
        arrays = []
        _map_tree((sample.args, sample.kwargs), arrays.append, lambda t: t)
        layouts = sample.layout if isinstance(sample.layout, tuple) else \
            (sample.layout,) * len(arrays)
        self.is_input = [a.dtype.kind == "f" for a in arrays]
        self.values = [a.astype(dtype.np) if inp else a for a, inp in zip(arrays, self.is_input)]
        self.layouts = [_applicable(lay, a.ndim) for a, lay in zip(arrays, layouts)]
        self.storages = [_storage(v, lay) for v, lay in zip(self.values, self.layouts)]
        self.leaves = [dg.tensor(st, dtype=from_numpy_dtype(st.dtype), device=device,
                                 requires_grad=inp and requires_grad and dtype.is_floating_point)
                       for st, inp in zip(self.storages, self.is_input)]
        self.inputs = [t for t, inp in zip(self.leaves, self.is_input) if inp]

    def _view(self, k, leaf):
        _, _, view, may_be_contiguous = _LAYOUTS[self.layouts[k]]
        t = view(leaf)
        assert not t.is_contiguous() or may_be_contiguous(self.values[k].shape), \
            f"layout {self.layouts[k]} of {self.values[k].shape} is contiguous"
        return t

    def _tree(self, array, tensor):
        count = iter(range(len(self.values)))
        return _map_tree((self.sample.args, self.sample.kwargs), lambda a: array(next(count)),
                         tensor)

    def run(self, info, inputs=None):
        """The op's result, on ``inputs`` (leaves standing for the inputs under test, by default
        this call's own)."""
        return self.apply(op_of(info, self.sample), inputs)

    def apply(self, fn, inputs=None):
        """``fn`` called with this call's arguments (views of ``inputs`` or of its own leaves)."""
        inputs = iter(self.inputs if inputs is None else inputs)
        leaves = [next(inputs) if inp else t for t, inp in zip(self.leaves, self.is_input)]
        args, kwargs = self._tree(lambda k: self._view(k, leaves[k]),
                                  lambda t: t.to(self.device))
        return fn(*args, **kwargs)

    def function(self, info):
        """The op as a function of the input leaves (what gradcheck differentiates)."""
        return lambda *inputs: self.run(info, inputs)

    def reference(self, ref):
        """``ref`` on float64 copies of the inputs' values (in the dtype under test) and the
        fixed operands as arrays."""
        def value(k):
            v = self.values[k]
            return v.astype(np.float64) if self.is_input[k] and v.dtype.kind == "f" else v
        args, kwargs = self._tree(value, lambda t: t.numpy())
        with np.errstate(all="ignore"):
            return ref(*args, **kwargs)

    def torch(self, fn, requires_grad=False):
        """``(fn's result on torch tensors laid out as ours, the torch leaves of the inputs under
        test)``."""
        inputs = []

        def value(k):
            t = torch.tensor(self.storages[k])
            if self.is_input[k]:
                t.requires_grad_(requires_grad)
                inputs.append(t)
            return _LAYOUTS[self.layouts[k]][2](t)
        args, kwargs = self._tree(value, lambda t: torch.tensor(t.numpy()))
        return fn(*args, **kwargs), inputs

    def assert_inputs_unchanged(self):
        """Every input still holds its values (out-of-place ops must not write them)."""
        for k, leaf in enumerate(self.leaves):
            np.testing.assert_array_equal(self._view(k, leaf).detach().cpu().numpy(),
                                          self.values[k], err_msg="the op changed its input")


# --- the checks ---------------------------------------------------------------------------------

def check_op(info, device, dtype):
    """Every check of record ``info`` in ``dtype``: forward, gradients and torch parity on the CPU;
    the same results on the device as on the CPU when ``device`` is "cuda"."""
    if device != "cpu":
        for sample in info.sampler(dtype, device=device):
            check_on_device(info, sample, dtype, device)
        return
    if info.alias_of is not None:
        for sample in info.sampler(dtype):
            check_alias(info, sample, dtype)
        return
    for sample in info.sampler(dtype):
        check_forward(info, sample, dtype)
    if info.differentiable and dtype.is_floating_point:
        for sample in info.sampler(dtype, requires_grad=True):
            check_gradients(info, sample, dtype)


def _expected_dtypes(info, expected, dtype):
    """The output dtype(s) to expect: the input's for float results, the reference's otherwise."""
    if info.out_dtype is not None:
        return info.out_dtype(dtype)
    if isinstance(expected, (list, tuple)):
        return [_expected_dtypes(info, e, dtype) for e in expected]
    kind = np.asarray(expected).dtype
    return dtype if kind.kind == "f" and dtype.is_floating_point else from_numpy_dtype(kind)


def torch_function(info):
    """The torch counterpart of ``info``'s op, or None."""
    if torch is None or info.torch is None:
        return None
    if callable(info.torch):
        return info.torch
    obj = torch
    for part in info.torch_name.split("."):
        obj = getattr(obj, part)
    return obj


def _select(outputs, info):
    """The outputs torch is compared on."""
    outs = _outputs(outputs)
    return outs if info.torch_outputs is None else [outs[k] for k in info.torch_outputs]


def check_forward(info, sample, dtype):
    """The op on one sample: against the reference, inputs untouched, against torch, and its
    in-place variant where the record asks."""
    call = Call(sample, dtype)
    out = call.run(info)
    what = f"{info.name} {dtype.name} {sample}"
    if info.ref is not None:
        expected = call.reference(info.ref)
        assert_values(out, expected, _expected_dtypes(info, expected, dtype), info.tol, what)
    call.assert_inputs_unchanged()
    _assert_torch_values(info, call, out, what)
    if info.check_inplace:
        check_inplace(info, sample, dtype, out)


def _assert_torch_values(info, call, out, what):
    """``out`` as torch's result of the same call, where torch has the op and takes the call."""
    fn = torch_function(info)
    if fn is not None and call.sample.torch:
        theirs, _ = call.torch(fn)
        tol = info.torch_tol if info.torch_tol is not None else info.tol
        assert_matches_torch(_select(out, info), _select(theirs, info), tol, what)


def assert_matches_torch(ours, theirs, tol, what=""):
    """Our outputs and torch's: the same shapes, dtypes and values (within ``tol``)."""
    assert len(ours) == len(theirs), f"{what}: {len(ours)} outputs, torch {len(theirs)}"
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert o.dtype.name == str(t.dtype).removeprefix("torch."), \
            f"{what} output {k}: dtype {o.dtype}, torch {t.dtype}"
        assert_values(o, t.detach().resolve_conj().numpy(), None, tol,
                      f"{what} output {k} vs torch")


def check_inplace(info, sample, dtype, out):
    """The in-place variant returns its first argument, holding the out-of-place result."""
    def inplace(first, *args, **kwargs):
        result = getattr(first, info.inplace)(*args, **kwargs)
        assert result is first, f"{info.inplace} did not return its input"
        return result
    assert_values(Call(sample, dtype).apply(inplace), out.numpy(), out.dtype, None,
                  f"{info.inplace} {sample}")


def check_alias(info, sample, dtype):
    """An alias gives exactly its target's results (and torch's of the alias name)."""
    target = OPINFOS[info.alias_of]
    call = Call(sample, dtype)
    out, want = call.run(info), call.run(target)
    what = f"{info.name} (alias of {target.name}) {dtype.name} {sample}"
    wants = _outputs(want)
    assert_values(_outputs(out), [w.numpy() for w in wants], [w.dtype for w in wants], None,
                  what)
    _assert_torch_values(info, call, out, what)


def check_gradients(info, sample, dtype):
    """gradcheck (float64) and torch's input gradients on one gradient sample."""
    call = Call(sample, dtype, requires_grad=True)
    what = f"{info.name} gradients {dtype.name} {sample}"
    if dtype is dg.float64 and sample.gradcheck:
        assert gradcheck(call.function(info), call.inputs), what
        if info.gradgrad:
            rng = np.random.default_rng(3)
            gos = [dg.tensor(rng.uniform(-3, 3, tuple(o.shape)), dtype=o.dtype,
                             requires_grad=True)
                   for o in _outputs(call.run(info)) if o.requires_grad]
            assert gradgradcheck(call.function(info), call.inputs, gos), what
    fn = torch_function(info)
    if fn is not None and sample.torch:
        assert_gradients_match_torch(info, call, fn, what)


def assert_gradients_match_torch(info, call, fn, what):
    """Backward from the same random output gradients accumulates torch's input gradients."""
    ours = [o for o in _select(call.run(info), info) if o.requires_grad]
    theirs, torch_inputs = call.torch(fn, requires_grad=True)
    theirs = [t for t in _select(theirs, info) if t.requires_grad]
    assert len(ours) == len(theirs), f"{what}: {len(ours)} differentiable outputs, torch " \
                                     f"{len(theirs)}"
    if not ours:
        return
    rng = np.random.default_rng(5)
    ws = [rng.normal(size=tuple(o.shape)) for o in ours]
    dg.autograd.backward(ours, [dg.tensor(w, dtype=o.dtype) for w, o in zip(ws, ours)])
    torch.autograd.backward(theirs, [torch.tensor(w, dtype=t.dtype) for w, t in zip(ws, theirs)])
    rtol, atol = info.grad_tol[call.dtype.name]
    for k, (x, tx) in enumerate(zip(call.inputs, torch_inputs)):
        ours = np.zeros(tuple(x.shape)) if x.grad is None else x.grad.numpy()
        theirs = np.zeros(tuple(tx.shape)) if tx.grad is None else \
            tx.grad.resolve_conj().numpy(force=True)
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol,
                                   err_msg=f"{what} input {k}")


def run_with_loss(fn, sample, dtype, device):
    """``fn`` on one sample on ``device``: its outputs, a weighted sum of its differentiable
    outputs, and the gradients of that sum with respect to the float inputs."""
    call = Call(sample, dtype, device, requires_grad=True)
    outs = _outputs(call.apply(fn))
    # (a complex output enters the loss by its real and imaginary parts)
    floats = [dg.view_as_real(o) if o.is_complex() else o for o in outs if o.requires_grad]
    loss = None
    if floats:
        rng = np.random.default_rng(1)
        loss = sum((o * dg.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)), dtype=o.dtype,
                                  device=device)).sum() for o in floats)
        loss.backward()
    return outs, loss, [t.grad for t in call.inputs]


def assert_same_results(got, want):
    """``run_with_loss``'s results on the device equal those on the CPU."""
    (outs, loss, grads), (want_outs, want_loss, want_grads) = got, want
    assert len(outs) == len(want_outs)
    for g, w in zip(outs, want_outs):
        assert_same_on_device(g, w)
    assert (loss is None) == (want_loss is None)
    if want_loss is not None:
        assert_same_on_device(loss, want_loss)
    for g, w in zip(grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            assert_same_on_device(g, w)


def check_on_device(info, sample, dtype, device):
    """One sample of a record on the device and on the CPU: the same outputs, loss and
    gradients."""
    op = op_of(info, sample)
    assert_same_results(run_with_loss(op, sample, dtype, device),
                        run_with_loss(op, sample, dtype, "cpu"))
