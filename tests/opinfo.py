"""One ``OpInfo`` record per registered op: how to call it, what to compare it with, on what.

A record names the op, gives a sampler of calls (``Sample``: args and kwargs) per dtype, a float64
NumPy reference (or none where PyTorch is the only oracle), the dtypes to run per device, whether
the op is differentiable, and its tolerances per dtype. ``tests/harness.py`` runs a record
(``check_op``); the per-family test files parametrize over the records of their family.

In a sample, NumPy float arrays stand for the inputs under test: the harness makes them tensors of
the dtype under test, laid out as the sample says, and differentiates with respect to them. Bool
and integer arrays are fixed operands (masks) that keep their dtype and follow the layout; tensors
are fixed operands (indices) used as they are, only moved to the device.

The records live by family in ``tests/opinfos/``; ``OPINFOS`` gathers the registered ops (the
registry meta-test holds ``set(REGISTRY) == set(OPINFOS)``), ``NN_OPINFOS`` the ``nn.functional``
ops that are not registered ops (yet). Import both from here (they are built on first use)::

    from opinfo import OPINFOS
    OPINFOS["add"].sampler(dg.float32)          # the forward samples of add in float32
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.ops.registry import REGISTRY

FAMILIES = ("elementwise", "reduce", "movement", "indexing", "linalg", "nn", "special", "complex",
            "fft", "statistics", "decompositions")

# dtype name -> (rtol, atol); a dtype that a Tol does not name is compared exactly
Tol = dict


@dataclass(frozen=True)
class Sample:
    """One call of an op: ``op(*args, **kwargs)`` with arrays standing for tensors (see above).

    ``layout`` lays out every array ("C" contiguous, "T" all dims reversed, "mT" the last two dims
    swapped, "S" every other element of the last dim), or each array in turn when a tuple.
    ``method`` calls the op as a method of the first argument. ``gradcheck`` says whether finite
    differences apply to this gradient sample (it may only be there to compare torch's gradients,
    at kinks for instance); ``torch`` whether torch supports the call (it lacks a few dtypes).
    """
    args: tuple
    kwargs: dict = field(default_factory=dict)
    layout: str | tuple = "C"
    method: bool = False
    gradcheck: bool = True
    torch: bool = True

    def __repr__(self) -> str:
        kwargs = ", ".join(f"{k}={_describe(v)}" for k, v in self.kwargs.items())
        return f"Sample{_describe(self.args)[:-1]}{', ' if kwargs else ''}{kwargs}) " \
               f"layout={self.layout!r}"


def _describe(value) -> str:
    """``value`` for a test report: arrays and tensors by their shapes."""
    if isinstance(value, np.ndarray):
        return f"array{value.shape}"
    if isinstance(value, dg.Tensor):
        return f"tensor{tuple(value.shape)}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


# sampler(dtype, device="cpu", requires_grad=False) -> list[Sample]: the forward samples, with
# requires_grad=True those whose gradients are checked (finite differences in float64, torch's
# gradients), on "cuda" the (small) samples run on the device and on the CPU
Sampler = Callable[..., list]


def sampler(forward, grad=(), cuda=()) -> Sampler:
    """A sampler from a record's forward samples, its float64 gradient samples and its CUDA
    samples: each a list, a dict from dtype to list, or a function of the dtype."""
    def pick(samples, dtype):
        if callable(samples):
            return list(samples(dtype))
        return list(samples.get(dtype, ()) if isinstance(samples, dict) else samples)

    def sample_inputs(dtype, device="cpu", requires_grad=False):
        if device != "cpu":
            return pick(cuda, dtype)
        if requires_grad:
            return pick(grad, dtype) if dtype is dg.float64 else []
        return pick(forward, dtype)
    return sample_inputs


@dataclass(frozen=True)
class OpInfo:
    """What the harness needs to test one op.

    ``op`` defaults to the registered function; ``torch`` names torch's counterpart ("Tensor.x"
    for a Tensor method, a dotted path below ``torch`` otherwise; a callable taking the same
    arguments; None where torch has none). ``tol`` compares with the reference and ``torch_tol``
    with torch (values), ``grad_tol`` torch's gradients. ``alias_of`` names the record whose op
    this one must equal on every sample. ``out_dtype(dtype)`` is the output dtype where it is not
    the input's (float results) or the reference's (bool and integer results). ``torch_outputs``
    picks the outputs torch must match (None: all). ``check_inplace`` also runs the in-place
    variant on every sample; ``gradgrad`` adds gradgradcheck to gradcheck.
    """
    name: str
    family: str
    sampler: Sampler
    ref: Callable | None
    dtypes: dict
    op: Callable | None = None
    torch: str | Callable | None = ""
    differentiable: bool = True
    tol: Tol = field(default_factory=dict)
    torch_tol: Tol | None = None
    grad_tol: Tol = field(default_factory=lambda: {"float64": (1e-12, 1e-12)})
    alias_of: str | None = None
    out_dtype: Callable | None = None
    torch_outputs: tuple | None = None
    check_inplace: bool = False
    gradgrad: bool = False

    @property
    def fn(self) -> Callable:
        """The function under test."""
        return self.op if self.op is not None else REGISTRY[self.name].fn

    @property
    def method(self) -> str | None:
        return REGISTRY[self.name].method if self.name in REGISTRY else None

    @property
    def inplace(self) -> str | None:
        return REGISTRY[self.name].inplace if self.name in REGISTRY else None

    @property
    def torch_name(self) -> str | None:
        """The default torch counterpart: the Tensor method of the same name where the op is a
        method, else the torch function of the same name."""
        if self.torch != "":
            return self.torch if isinstance(self.torch, str) else None
        return f"Tensor.{self.name}" if self.method else self.name


def alias(name: str, target: OpInfo, **changes) -> OpInfo:
    """The record of ``name``, another name of ``target``'s op: checked against it, sample by
    sample."""
    fields = dict(name=name, alias_of=target.name, op=None, torch="")
    fields.update(changes)
    return replace(target, **fields)


# --- sample data --------------------------------------------------------------------------------

def uniform(shape, seed=0, low=-3.0, high=3.0) -> np.ndarray:
    """float64 samples from ``[low, high)``: the usual input under test."""
    return np.asarray(np.random.default_rng(seed).uniform(low, high, size=shape))


def quarters(shape, seed=0, scale=10.0) -> np.ndarray:
    """Multiples of 1/4 (exact in every float dtype; distinct enough to sort, with ties)."""
    return np.asarray(np.round(uniform(shape, seed) * scale) / 4)


def signed(shape, seed=0) -> np.ndarray:
    """Values of both signs kept at least 0.2 away from 0 (what the CUDA samples use: ops that
    depend on the sign see clear values)."""
    x = uniform(shape, seed, -0.9, 0.9)
    return np.asarray(np.sign(x) * (0.2 + np.abs(x)))


def integers(shape, seed=0, low=-3, high=4) -> np.ndarray:
    """Whole numbers as floats: an input under test that integer dtypes hold exactly."""
    return np.asarray(np.random.default_rng(seed).integers(low, high, size=shape), np.float64)


def index(values) -> dg.Tensor:
    """An int64 index tensor: a fixed operand."""
    return dg.tensor(np.asarray(values, dtype=np.int64))


def mask(values) -> np.ndarray:
    """A bool mask: a fixed operand laid out like the inputs."""
    return np.asarray(values, dtype=bool)


# --- the records --------------------------------------------------------------------------------

_BUILT: dict = {}


def _gather(attr: str) -> dict:
    records = {}
    for family in FAMILIES:
        module = importlib.import_module(f"opinfos.{family}")
        for info in getattr(module, attr, ()):
            assert info.name not in records, f"two records for {info.name}"
            records[info.name] = info
    return records


def __getattr__(name: str):
    """``OPINFOS`` and ``NN_OPINFOS``, built on first use (the family modules import this module
    for ``OpInfo``, so it cannot import them at the top)."""
    if name not in ("OPINFOS", "NN_OPINFOS"):
        raise AttributeError(name)
    if name not in _BUILT:
        _BUILT[name] = _gather("RECORDS" if name == "OPINFOS" else "NN_RECORDS")
    return _BUILT[name]


def params(records, device: str = "cpu") -> list:
    """One ``pytest.param(info, dtype)`` per record and dtype it runs in on ``device``, with ids
    like ``add-float32``: what a test file parametrizes over."""
    return [pytest.param(info, dtype, id=f"{info.name}-{dtype.name}")
            for info in sorted(records, key=lambda i: i.name)
            for dtype in info.dtypes.get(device, ())]


def family(name: str) -> list:
    """The records of one family (aliases of its ops included)."""
    return [i for i in __getattr__("OPINFOS").values() if i.family == name]
