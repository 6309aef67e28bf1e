"""Random numbers from one counter-based generator (Philox 4x32), so a seed fixes every draw.

Philox is counter-based: the n-th number depends only on (key, n), which is what lets a GPU kernel
reproduce the CPU stream later.

Example:
    >>> import dynagrad as dg
    >>> _ = dg.manual_seed(0); a = dg.rand(3)
    >>> _ = dg.manual_seed(0); bool((a == dg.rand(3)).all())
    True
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .device import as_device, factory_device
from .dtypes import dtype as DType
from .layout import laid_out_like
from .shapes import shape_arg
from .autograd.grad_mode import no_grad
from .kernels import philox as stream
from .kernels.cuda import backend as cuda_backend
from .kernels.cpu import philox
from .kernels.cuda.device_array import DeviceArray
from .kernels.buffers import host, move_array
from .ops.registry import tensor_method
from .tensor import Tensor, _wrap

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
           "multinomial", "rand_like", "randn_like", "randint_like"]

_MASK64 = (1 << 64) - 1


class Generator:
    """A seeded random stream. ``Generator().manual_seed(42)`` gives the same numbers every run."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(int(np.random.SeedSequence().entropy) & _MASK64)

    def manual_seed(self, seed: int) -> "Generator":
        seed = int(seed)
        if seed < 0:
            seed &= _MASK64  # PyTorch accepts negative seeds as their two's complement
        self._seed = seed
        self._np = np.random.Generator(np.random.Philox(key=seed & _MASK64))
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy) & _MASK64
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        state = self._np.bit_generator.state
        # every word stays uint64: mixing in Python ints would promote to float64 and round
        tail = np.array([state["buffer_pos"], state["has_uint32"], state["uinteger"],
                         self._seed & _MASK64], dtype=np.uint64)
        words = np.concatenate([state["state"]["counter"], state["state"]["key"], state["buffer"],
                                tail]).astype(np.uint64)
        return _wrap(words.view(np.uint8), dtypes.uint8)

    def set_state(self, new_state: Tensor) -> "Generator":
        w = new_state._data.view(np.uint64)
        bg = np.random.Philox()
        bg.state = {"bit_generator": "Philox",
                    "state": {"counter": w[0:4].copy(), "key": w[4:6].copy()},
                    "buffer": w[6:10].copy(), "buffer_pos": int(w[10]),
                    "has_uint32": int(w[11]), "uinteger": int(w[12])}
        self._np = np.random.Generator(bg)
        self._seed = int(w[13])
        return self


default_generator = Generator()
default_generator.manual_seed(67280421310721)  # PyTorch's default initial seed


_cuda_generators: dict = {}  # device index -> that GPU's default generator, made on first use
_last_seed = [default_generator.initial_seed()]


def manual_seed(seed: int) -> Generator:
    """Seed the default generators of the CPU and of every CUDA device; returns the CPU's."""
    _last_seed[0] = seed
    for g in _cuda_generators.values():
        g.manual_seed(seed)
    return default_generator.manual_seed(seed)


def manual_seed_cuda(seed: int, device_index: int | None = None) -> None:
    """Seed one GPU's default generator (``None``: every GPU's), as ``dg.cuda.manual_seed``."""
    if device_index is None:
        _last_seed[0] = seed
        for g in _cuda_generators.values():
            g.manual_seed(seed)
    else:
        _device_generator(device_index).manual_seed(seed)


def _device_generator(index: int | None) -> Generator:
    """The default generator of the CPU (``None``) or of CUDA device ``index``. Every device runs
    the same Philox stream, so one seed gives the same numbers on the CPU and on a GPU."""
    if index is None:
        return default_generator
    g = _cuda_generators.get(index)
    if g is None:
        g = _cuda_generators[index] = Generator(f"cuda:{index}").manual_seed(_last_seed[0])
    return g


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _gen(generator: Generator | None, index: int | None = None) -> np.random.Generator:
    """The NumPy Philox stream to draw from: ``generator``'s, else device ``index``'s default.
    A GPU draws uniform numbers itself (kernels/cuda/philox.py); its normal draws are made on
    the host and copied. Either way they are bitwise the CPU's numbers for the same seed."""
    return (generator or _device_generator(index))._np


def _index(dev) -> int | None:
    return None if dev.type == "cpu" else dev.index


def _float_dtype(dtype, op: str) -> DType:
    dt = dtype or dtypes.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point dtype, got {dt.name}")
    return dt


def _result(arr, dt: DType, requires_grad: bool, index: int | None = None) -> Tensor:
    if type(arr) is DeviceArray:  # drawn on the device already
        t = _wrap(arr.astype(dt.np, copy=False), dt)
    else:  # np.array keeps 0-dim draws 0-dim (np.ascontiguousarray would make them shape (1,))
        t = _wrap(move_array(np.array(arr, dtype=dt.np, order="C", copy=None), index), dt)
    if requires_grad:
        t.requires_grad = True
    return t


def _uniform_on(generator, index: int | None, shape, dt: DType):
    """Uniform [0, 1) draws in ``dt``'s compute precision (float32 or float64), on the CPU
    (``index`` None) or drawn on CUDA device ``index`` from the same Philox stream."""
    gen = _gen(generator, index)
    if index is None:
        return _uniform(gen, shape, dt)
    name = _draw_dtype(dt).name
    state = gen.bit_generator.state
    out = cuda_backend.philox_uniform(state, tuple(shape), name, index)
    gen.bit_generator.state = stream.advance_state(state, out.size, name)
    return out


def _draw_dtype(dt: DType) -> DType:
    return dtypes.float64 if dt is dtypes.float64 else dtypes.float32


def _uniform(gen, shape, dt: DType) -> np.ndarray:
    compute = np.float64 if dt is dtypes.float64 else np.float32
    return gen.random(shape, dtype=compute)


def repeated_uniform(shape: tuple, dt: DType) -> np.ndarray:
    """``rand(*shape, dtype=dt)``'s numbers from the CPU's default generator, for a draw that
    repeats every training step (dropout's mask): large ones run ``kernels.philox``'s compiled
    Philox on both cores. One-off draws (initialisation, ``rand``) stay with NumPy, so that they
    never compile a kernel."""
    gen = default_generator._np
    n = math.prod(shape)
    if n >= philox.MIN_DRAWS and isinstance(gen.bit_generator, np.random.Philox):
        return philox.uniform(gen, n, _draw_dtype(dt).np).reshape(shape)
    return _uniform(gen, shape, dt)


def _normal(gen, shape, dt: DType) -> np.ndarray:
    compute = np.float64 if dt is dtypes.float64 else np.float32
    return gen.standard_normal(shape, dtype=compute)


def rand(*size, generator: Generator | None = None, dtype: DType | None = None, device=None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    i = _index(factory_device(device))
    dt = _float_dtype(dtype, "rand")
    return _result(_uniform_on(generator, i, shape_arg(size, "rand"), dt), dt, requires_grad, i)


def randn(*size, generator: Generator | None = None, dtype: DType | None = None, device=None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    i = _index(factory_device(device))
    dt = _float_dtype(dtype, "randn")
    return _result(_normal(_gen(generator, i), shape_arg(size, "randn"), dt), dt, requires_grad,
                   i)


def randint(low, high=None, size=None, *, generator: Generator | None = None,
            dtype: DType | None = None, device=None, requires_grad: bool = False) -> Tensor:
    """Integers uniform in [low, high); ``randint(high, size)`` starts at 0."""
    i = _index(factory_device(device))
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    dt = dtype or dtypes.int64
    arr = _gen(generator, i).integers(low, high, size=tuple(size), dtype=np.int64)
    return _result(arr, dt, requires_grad, i)


def randperm(n: int, *, generator: Generator | None = None, dtype: DType | None = None,
             device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0..n-1``."""
    i = _index(factory_device(device))
    return _result(_gen(generator, i).permutation(n), dtype or dtypes.int64, requires_grad, i)


def normal(mean, std=1.0, size=None, *, generator: Generator | None = None,
           dtype: DType | None = None, device=None, requires_grad: bool = False) -> Tensor:
    """Normal samples with the given mean and std (tensors broadcast, or floats with ``size``)."""
    i = _index(factory_device(device))
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        i = ref.get_device() if ref.is_cuda else None
        m = host(mean._data) if isinstance(mean, Tensor) else mean
        s = host(std._data) if isinstance(std, Tensor) else std
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        return _result(m + s * _normal(_gen(generator, i), shape, ref.dtype), ref.dtype,
                       requires_grad, i)
    gen = _gen(generator, i)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dt = _float_dtype(dtype, "normal")
    shape = shape_arg((size,) if isinstance(size, int) else (size or ()), "normal")
    return _result(mean + std * _normal(gen, shape, dt), dt, requires_grad, i)


def bernoulli(input: Tensor, p=None, *, generator: Generator | None = None) -> Tensor:
    """0/1 samples with probabilities ``input`` (or the scalar ``p``), in ``input``'s dtype."""
    i = _index(input.device)
    if i is not None:  # drawn and compared on the device
        probs = input if p is None else float(p)
        bad = ((probs < 0) | (probs > 1)).any().item() if p is None else not 0 <= p <= 1
        if bad:
            raise RuntimeError("bernoulli: all elements of input should be between 0 and 1")
        u = _wrap(_uniform_on(generator, i, input.shape, dtypes.float64), dtypes.float64)
        return (u < probs).to(input.dtype)
    probs = input._data if p is None else np.full(input._data.shape, p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("bernoulli: all elements of input should be between 0 and 1")
    draw = _uniform(_gen(generator), input._data.shape, dtypes.float64) < probs
    return _result(draw, input.dtype, False)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Indices drawn from the rows of ``input`` (non-negative weights)."""
    w = host(input._data).astype(np.float64)
    if w.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim (got {w.ndim})")
    rows = w.reshape(-1, w.shape[-1])
    if np.any(rows < 0) or not np.all(np.isfinite(rows)):
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or "
                           "element < 0")
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                           "without replacement")
    at = _index(input.device)
    gen = _gen(generator, at)
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for i, r in enumerate(rows):
        total = r.sum()
        if total <= 0:
            raise RuntimeError("multinomial: invalid multinomial distribution (sum of "
                               "probabilities <= 0)")
        out[i] = gen.choice(r.size, size=num_samples, replace=replacement, p=r / total)
    return _result(out.reshape(w.shape[:-1] + (num_samples,)), dtypes.int64, False, at)


def rand_like(input: Tensor, *, dtype=None, generator=None, requires_grad=False) -> Tensor:
    return laid_out_like(lambda shape: rand(shape, dtype=dtype or input.dtype,
                                            generator=generator, device=input.device,
                                            requires_grad=requires_grad),
                         tuple(input.shape), input._data)


def randn_like(input: Tensor, *, dtype=None, generator=None, requires_grad=False) -> Tensor:
    return laid_out_like(lambda shape: randn(shape, dtype=dtype or input.dtype,
                                             generator=generator, device=input.device,
                                             requires_grad=requires_grad),
                         tuple(input.shape), input._data)


def randint_like(input: Tensor, low, high=None, *, dtype=None, generator=None) -> Tensor:
    return laid_out_like(lambda shape: randint(low, high, shape, dtype=dtype or input.dtype,
                                               generator=generator, device=input.device),
                         tuple(input.shape), input._data)


def fill_uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """In-place uniform samples in [a, b) (``Tensor.uniform_``)."""
    i = _index(t.device)
    u = _uniform_on(generator, i, t._data.shape, t.dtype)
    if i is not None:  # the same arithmetic, as kernels on the device
        with no_grad():
            u = (_wrap(u, _draw_dtype(t.dtype)) * (b - a) + a)._data
        return _fill_(t, u)
    return _fill_(t, a + (b - a) * u)


def fill_normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """In-place normal samples (``Tensor.normal_``)."""
    return _fill_(t, mean + std * _normal(_gen(generator, _index(t.device)), t._data.shape,
                                          t.dtype))


def fill_bernoulli_(t: Tensor, p=0.5, *, generator=None) -> Tensor:
    i = _index(t.device)
    u = _uniform_on(generator, i, t._data.shape, dtypes.float64)
    if i is not None:
        with no_grad():
            return _fill_(t, (_wrap(u, dtypes.float64) < (p.to(t.device) if isinstance(p, Tensor)
                                                          else p))._data)
    return _fill_(t, u < (p._data if isinstance(p, Tensor) else p))


def _fill_(t: Tensor, values: np.ndarray) -> Tensor:
    from .autograd import grad_mode
    if t._requires_grad and t.grad_fn is None and grad_mode.GRAD_ENABLED[0]:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    t._data[...] = values
    t._vc[0] += 1
    return t


tensor_method("uniform_", fill_uniform_)
tensor_method("normal_", fill_normal_)
tensor_method("bernoulli_", fill_bernoulli_)
