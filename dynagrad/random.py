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

import contextlib
import math

import numpy as np

from . import dtypes
from .autograd.grad_mode import no_grad
from .device import as_device, factory_device
from .dtypes import dtype as DType
from .kernels import philox as stream
from .kernels.buffers import host, move_array
from .kernels.cpu import philox
from .kernels.cuda import backend as cuda_backend
from .kernels.cuda.device_array import DeviceArray
from .layout import laid_out_like
from .ops.registry import tensor_method
from .shapes import shape_arg
from .tensor import Tensor, _wrap

__all__ = [
    "Generator",
    "_sample_dirichlet",
    "_standard_gamma",
    "bernoulli",
    "binomial",
    "default_generator",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "multinomial",
    "normal",
    "poisson",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
    "thread_safe_generator",
]

_MASK64 = (1 << 64) - 1


class Generator:
    """A seeded random stream. ``Generator().manual_seed(42)`` gives the same numbers every run."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(int(np.random.SeedSequence().entropy) & _MASK64)

    def manual_seed(self, seed: int) -> Generator:
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

    def set_state(self, new_state: Tensor) -> Generator:
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
        # tensors broadcast against each other; the result has their promoted floating dtype
        ref = mean if isinstance(mean, Tensor) else std
        i = ref.get_device() if ref.is_cuda else None
        m = host(mean._data) if isinstance(mean, Tensor) else mean
        s = host(std._data) if isinstance(std, Tensor) else std
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        dt = ref.dtype
        if isinstance(mean, Tensor) and isinstance(std, Tensor):
            dt = dtypes.promote_types(mean.dtype, std.dtype)
        dt = dt if dt.is_floating_point else dtypes.get_default_dtype()
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        return _result(m + s * _normal(_gen(generator, i), shape, _draw_dtype(dt)), dt,
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


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson counts with the rates ``input`` (non-negative floats), in ``input``'s dtype.

    Example:
        >>> g = dg.Generator().manual_seed(0)
        >>> dg.poisson(dg.tensor([0.0, 3.0]), generator=g).shape
        dynagrad.Size([2])
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson" not implemented for \'{input.dtype.name}\'')
    rates = host(input._data).astype(np.float64)
    if not np.all(rates >= 0):  # also refuses nan
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    at = _index(input.device)
    return _result(_gen(generator, at).poisson(rates), input.dtype, False, at)


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Successes in ``count`` trials of probability ``prob`` (float tensors that broadcast).

    Example:
        >>> g = dg.Generator().manual_seed(0)
        >>> dg.binomial(dg.tensor([10.0]), dg.tensor([0.0]), generator=g).tolist()
        [0.0]
    """
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{t.dtype.name}")
    n = host(count._data).astype(np.float64)
    p = host(prob._data).astype(np.float64)
    if not (np.all(n >= 0) and np.all((p >= 0) & (p <= 1))):
        raise RuntimeError("binomial: expected count >= 0 and 0 <= prob <= 1")
    at = _index(count.device)
    draws = _gen(generator, at).binomial(np.round(n).astype(np.int64), p)
    return _result(draws, dtypes.promote_types(count.dtype, prob.dtype), False, at)


def _gamma_sample_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d x / d alpha for x ~ Gamma(alpha, 1) held at a fixed quantile (implicit
    reparameterization): -(dP(alpha, x)/d alpha) / p(x; alpha), with P the regularized lower
    incomplete gamma function. dP/d alpha has no SciPy routine; a central difference in float64
    is accurate to about 1e-9 relative, far below the sampling noise it multiplies."""
    from scipy import special
    h = 1e-5 * np.maximum(alpha, 1.0)
    h = np.minimum(h, alpha / 2)  # alpha - h stays positive
    dp = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    log_pdf = (alpha - 1) * np.log(x) - x - special.gammaln(alpha)
    with np.errstate(all="ignore"):
        g = -dp * np.exp(-log_pdf)
    return np.where(np.isfinite(g), g, 0.0)


def _standard_gamma(alpha: Tensor, generator: Generator | None = None) -> Tensor:
    """Gamma(alpha, 1) samples; differentiable in ``alpha`` by implicit reparameterization
    (what ``Gamma.rsample`` needs). Drawn on the host from the generator's stream (a host round
    trip on CUDA), so a seed gives the same numbers on every device."""
    from .autograd.function import Function

    class _Gamma(Function):
        @staticmethod
        def forward(ctx, a):
            conc = host(a._data).astype(np.float64)
            at = _index(a.device)
            x = _gen(generator, at).standard_gamma(conc)
            # a float32 draw may round to 0 for tiny alpha: keep it in the support (0, inf)
            tiny = np.finfo(a.dtype.np).tiny if a.dtype.is_floating_point else 0.0
            x = np.maximum(x, tiny)
            ctx.grad = _gamma_sample_grad(conc, x.astype(a.dtype.np).astype(np.float64))
            ctx.at, ctx.dt = at, a.dtype
            return _result(x, a.dtype, False, at)

        @staticmethod
        def backward(ctx, g):
            return g * _result(ctx.grad, ctx.dt, False, ctx.at)

    if not alpha.dtype.is_floating_point:
        raise NotImplementedError(f'"standard_gamma" not implemented for \'{alpha.dtype.name}\'')
    return _Gamma.apply(alpha)


def _sample_dirichlet(alpha: Tensor, generator: Generator | None = None) -> Tensor:
    """Dirichlet(alpha) samples over the last dimension: normalised Gamma(alpha, 1) draws."""
    at = _index(alpha.device)
    conc = host(alpha._data).astype(np.float64)
    g = np.maximum(_gen(generator, at).standard_gamma(conc), np.finfo(alpha.dtype.np).tiny)
    return _result(g / g.sum(-1, keepdims=True), alpha.dtype, False, at)


def thread_safe_generator() -> Generator | None:
    """The generator DataLoader thread workers should draw from: None here, because dynagrad's
    DataLoader workers are processes (each seeds the global stream itself), which is what
    PyTorch returns in the main process and in process workers too.

    Example:
        >>> import dynagrad as dg
        >>> dg.thread_safe_generator() is None
        True
    """
    return None


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):
    """Run a block with the random state saved on entry and restored on exit: the CPU's default
    generator and those of the CUDA ``devices`` (default: every GPU whose generator exists).

    Example:
        >>> with dg.random.fork_rng():
        ...     _ = dg.rand(2)   # the draws outside the block are unchanged by it
    """
    if not enabled:
        yield
        return
    indices = sorted(_cuda_generators) if devices is None else [
        as_device(d).index if not isinstance(d, int) else d for d in devices]
    saved_cpu = default_generator.get_state()
    saved = {i: _device_generator(i).get_state() for i in indices}
    try:
        yield
    finally:
        default_generator.set_state(saved_cpu)
        for i, state in saved.items():
            _device_generator(i).set_state(state)


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


def fill_random_(t: Tensor, from_=None, to=None, *, generator=None, **kw) -> Tensor:
    """In-place integers uniform in [from, to) (``Tensor.random_``): ``random_(to)`` starts at 0,
    ``random_()`` covers every integer the dtype holds exactly (floats: up to 2**mantissa)."""
    if "from" in kw:  # PyTorch's keyword is a Python keyword: only reachable through **kw
        from_ = kw.pop("from")
    elif to is None and from_ is not None:  # random_(to)
        from_, to = 0, from_
    if kw:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kw))}'")
    from_ = 0 if from_ is None else from_
    dt = t.dtype
    if dt is dtypes.bool_:
        top = 1
    elif dt.is_floating_point:
        top = 2 ** (np.finfo(dt.np).nmant + 1)
    else:
        top = int(np.iinfo(dt.np).max)
    if to is None:
        lo, hi = from_, top  # hi inclusive
    else:
        lo, hi = from_, to - 1
        if to <= from_:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={from_} >= to={to}")
        if not dt.is_floating_point and dt is not dtypes.bool_:
            info = np.iinfo(dt.np)
            if not info.min <= lo <= info.max or hi > info.max:
                raise RuntimeError(f"to - 1 is out of bounds for {dt.name}")
    draws = _gen(generator, _index(t.device)).integers(lo, hi, size=t._data.shape,
                                                        endpoint=True, dtype=np.int64)
    return _fill_(t, draws)


def _float_fill(t: Tensor, name: str) -> None:
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{name} is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {t.dtype.name}")


def _open_uniform(t: Tensor, generator) -> np.ndarray:
    """Uniform draws in (0, 1) in float64: 1 - [0, 1) keeps logs finite."""
    return 1.0 - _uniform(_gen(generator, _index(t.device)), t._data.shape, dtypes.float64)


def fill_exponential_(t: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """In-place Exponential(lambd) samples (``Tensor.exponential_``)."""
    _float_fill(t, "Exponential distribution")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill_(t, -np.log(_open_uniform(t, generator)) / lambd)


def fill_geometric_(t: Tensor, p: float, *, generator=None) -> Tensor:
    """In-place Geometric(p) samples: trials up to the first success, 1, 2, ...
    (``Tensor.geometric_``)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    u = _open_uniform(t, generator)
    return _fill_(t, np.maximum(np.ceil(np.log(u) / np.log1p(-p)), 1.0))


def fill_cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """In-place Cauchy(median, sigma) samples (``Tensor.cauchy_``)."""
    _float_fill(t, "Cauchy distribution")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    u = _open_uniform(t, generator)
    return _fill_(t, median + sigma * np.tan(np.pi * (u - 0.5)))


def fill_log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, *,
                     generator=None) -> Tensor:
    """In-place samples of exp(Normal(mean, std)) (``Tensor.log_normal_``)."""
    _float_fill(t, "log_normal_")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    z = _normal(_gen(generator, _index(t.device)), t._data.shape, dtypes.float64)
    return _fill_(t, np.exp(mean + std * z))


tensor_method("random_", fill_random_)
tensor_method("exponential_", fill_exponential_)
tensor_method("geometric_", fill_geometric_)
tensor_method("cauchy_", fill_cauchy_)
tensor_method("log_normal_", fill_log_normal_)
tensor_method("bernoulli", bernoulli)
tensor_method("multinomial", multinomial)
