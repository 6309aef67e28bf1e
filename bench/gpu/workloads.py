"""The four sections of the GPU benchmark, each a function ``(frameworks, sizes, cfg) -> rows``.

``frameworks`` maps ``"dynagrad"`` (and ``"torch"`` when PyTorch has CUDA) to the module: their
APIs match (``tensor(..., device="cuda")``, ``cuda.Event``, ``nn``, ``optim``), so each workload is
written once. Inputs come from NumPy with fixed seeds; every row checks its first results (against
NumPy, or dynagrad's loss against PyTorch's) before it is timed.

- ``bandwidth``: copy, a+b, a*b+c, exp on float32 vectors, in GB/s, against device-to-device copies
  measured in the same run (dynagrad's copy kernel, cuMemcpyDtoD, PyTorch's clone).
- ``matmul``: square float32 and float16 products in TFLOP/s.
- ``training``: the MLP (SGD with momentum) and LeNet-5 (Adam) training steps, ms per step.
- ``launch``: a+b on a small tensor, us per op (the host cost of one launch).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .models import LeNetSize, lenet5, mlp
from .timing import Clock, Config, Contender, Row, run

MIB = 1 << 20


@dataclass(frozen=True)
class Sizes:
    """Problem sizes; ``SMOKE`` is small enough for numba's CUDA simulator."""
    elements: int = 64 * MIB
    matmul: tuple = (1024, 2048, 4096)
    mlp: tuple = (784, 256, 256, 10)
    mlp_batch: int = 128
    lenet: LeNetSize = LeNetSize()
    lenet_batch: int = 64
    launch: tuple = (32, 32)


SMOKE = Sizes(elements=64, matmul=(8,), mlp=(16, 8, 8, 10), mlp_batch=4,
              lenet=LeNetSize(side=8, kernel=3, channels=(2, 2), hidden=(4, 4)), lenet_batch=2)


def _count(n: int) -> str:
    return f"{n // MIB}M" if n % MIB == 0 else str(n)


def _randn(*shape: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def to_host(x) -> np.ndarray:
    """A result as a NumPy array: a tensor of either framework, or a numba device array."""
    return x.copy_to_host() if hasattr(x, "copy_to_host") else x.detach().cpu().numpy()


def _expect_close(name: str, outputs: dict, ref: np.ndarray, rtol: float, atol: float) -> None:
    for label, out in outputs.items():
        got = to_host(out).astype(np.float64)
        if got.shape != ref.shape:
            raise AssertionError(f"{name}: {label} gave shape {got.shape}, expected {ref.shape}")
        if not np.allclose(got, ref, rtol=rtol, atol=atol):
            raise AssertionError(f"{name}: {label} differs from NumPy's float64 result (max abs "
                                 f"diff {np.max(np.abs(got - ref)):.3g}, rtol {rtol}, atol {atol})")


def _upload(frameworks: dict, *arrays: np.ndarray) -> dict:
    """``{framework: [CUDA tensors]}``: each framework gets its own copy of ``arrays``."""
    return {fw: [mod.tensor(a, device="cuda") for a in arrays] for fw, mod in frameworks.items()}


def _vs_torch(row: Row) -> None:
    """``dg/torch``: dynagrad's median over PyTorch's in the row's unit (for GB/s and TFLOP/s
    higher is better, for times lower)."""
    r = row.ratio("dynagrad", "torch")
    if r is not None:
        row.ratios["dg/torch"] = r


# --- 1. elementwise bandwidth --------------------------------------------------------------------

# name -> (expression on tensors, NumPy twin, float32 arrays read or written per element). Eager
# frameworks run a*b+c as two kernels (a*b into a temporary, then + c): 6 arrays of traffic.
ELEMENTWISE = {
    "a+b": (lambda a, b, c: a + b, lambda a, b, c: a + b, 3),
    "a*b+c": (lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, 6),
    "exp": (lambda a, b, c: a.exp(), lambda a, b, c: np.exp(a), 2),
}
COPY_TARGET = 0.80  # elementwise GB/s over the copy's


def bandwidth(frameworks: dict, sizes: Sizes, cfg: Config) -> list:
    """Copies and elementwise ops on ``sizes.elements`` float32, in GB/s."""
    from numba import cuda
    n = sizes.elements
    host = [_randn(n, seed=s).astype(np.float64) for s in range(3)]
    host32 = [h.astype(np.float32) for h in host]
    dev = _upload(frameworks, *host32)
    clocks = {fw: Clock(mod, "device") for fw, mod in frameworks.items()}
    rows = []

    copy = Row(f"copy {_count(n)} float32", "bandwidth", "GB/s", work=2 * n * 4,
               note="dynagrad and torch: clone() (dynagrad's copy kernel); memcpy D2D: numba's "
                    "DeviceNDArray.copy_to_device from another device array (cuMemcpyDtoD)")

    def build_copy() -> dict:
        out = {fw: Contender(lambda a=dev[fw][0]: a.clone(), clocks[fw]) for fw in frameworks}
        src = cuda.to_device(host32[0])
        dst = cuda.device_array_like(src)

        def memcpy():
            dst.copy_to_device(src)
            return dst
        out["memcpy D2D"] = Contender(memcpy, clocks["dynagrad"])  # same device, default stream
        return out
    rows.append(run(copy, build_copy, cfg,
                    lambda outs: _expect_close(copy.name, outs, host[0], 0.0, 0.0)))

    for name, (expr, np_expr, arrays) in ELEMENTWISE.items():
        row = Row(f"{name} {_count(n)} float32", "bandwidth", "GB/s", work=arrays * n * 4)

        def build(expr=expr) -> dict:
            return {fw: Contender(lambda t=dev[fw]: expr(*t), clocks[fw]) for fw in frameworks}
        ref = np_expr(*host)
        rows.append(run(row, build, cfg,
                        lambda outs, row=row, ref=ref: _expect_close(row.name, outs, ref, 1e-5,
                                                                     1e-5)))
    del dev

    measured = {label: copy.median(label) for label in copy.seconds if copy.median(label)}
    best = max(measured, key=measured.get) if measured else None
    for row in rows:
        dg_gbs = row.median("dynagrad")
        if best and dg_gbs:
            row.ratios["dg/copy"] = dg_gbs / measured[best]
        row.targets["dg/copy"] = (">=", COPY_TARGET)
        _vs_torch(row)
    if best:
        copy.note += f"; copy bandwidth for dg/copy: the fastest copy here, {best} " \
                     f"({measured[best]:.4g} GB/s)"
    return rows


# --- 2. matmul -------------------------------------------------------------------------------------

MATMUL_TARGET = 0.80
# max |error| allowed, relative to max |result| (float16 stores the result in half precision)
MATMUL_TOLERANCE = {"float32": 1e-4, "float16": 1e-2}


def matmul(frameworks: dict, sizes: Sizes, cfg: Config) -> list:
    """``a @ b`` for square float32 and float16 matrices, in TFLOP/s (2 n^3 per product)."""
    import dynagrad.kernels.cuda.runner as dg_cuda
    backend = dg_cuda.matmul_backend()
    clocks = {fw: Clock(mod, "device") for fw, mod in frameworks.items()}
    rows = []
    for n in sizes.matmul:
        for dtype in ("float32", "float16"):
            a, b = (_randn(n, n, seed=s).astype(dtype) for s in (10, 11))
            row = Row(f"matmul {n}x{n} {dtype}", "matmul", "TFLOP/s", work=2.0 * n ** 3,
                      note=f"dynagrad backend: {backend}")

            def build(a=a, b=b) -> dict:
                dev = _upload(frameworks, a, b)
                return {fw: Contender(lambda x=dev[fw][0], y=dev[fw][1]: x @ y, clocks[fw])
                        for fw in frameworks}

            def check(outs, row=row, a=a, b=b, dtype=dtype) -> None:
                ref = a.astype(np.float64) @ b.astype(np.float64)
                scale = float(np.max(np.abs(ref))) or 1.0
                _expect_close(row.name, outs, ref, 0.0, MATMUL_TOLERANCE[dtype] * scale)
            rows.append(run(row, build, cfg, check))
            _vs_torch(row)
            row.targets["dg/torch"] = (">=", MATMUL_TARGET)
    return rows


# --- 3. training steps -----------------------------------------------------------------------------

MLP_TARGET = 1.5  # dynagrad's ms per step over PyTorch's


def _sgd_momentum(optim, params):
    return optim.SGD(params, lr=0.01, momentum=0.9)


def _adam(optim, params):
    return optim.Adam(params, lr=1e-3)


def _copy_weights(src, dst, torch) -> None:
    """Load a (CPU) dynagrad module's state into its (CPU) PyTorch twin."""
    dst.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def _training_row(frameworks: dict, cfg: Config, name: str, make, in_shape: tuple, batch: int,
                  make_opt) -> Row:
    row = Row(name, "training", "ms")
    x = _randn(batch, *in_shape, seed=20)
    y = np.random.default_rng(21).integers(0, 10, batch).astype(np.int64)

    def build() -> dict:
        import dynagrad as dg
        dg.manual_seed(0)
        models = {fw: make(mod.nn) for fw, mod in frameworks.items()}
        if "torch" in models:  # same initial weights: the first losses must agree
            _copy_weights(models["dynagrad"], models["torch"], frameworks["torch"])
        out = {}
        for fw, mod in frameworks.items():
            model = models[fw].to("cuda")
            opt, loss_fn = make_opt(mod.optim, model.parameters()), mod.nn.CrossEntropyLoss()
            tx, ty = mod.tensor(x, device="cuda"), mod.tensor(y, device="cuda")

            def step(model=model, opt=opt, loss_fn=loss_fn, tx=tx, ty=ty):
                opt.zero_grad()
                loss = loss_fn(model(tx), ty)
                loss.backward()
                opt.step()
                return loss
            out[fw] = Contender(step, Clock(mod, "host"))
        return out

    def check(losses: dict) -> None:
        values = {fw: float(to_host(loss)) for fw, loss in losses.items()}
        if not all(np.isfinite(v) for v in values.values()):
            raise AssertionError(f"{name}: first loss is not finite: {values}")
        if len(values) == 2 and not np.isclose(values["dynagrad"], values["torch"], rtol=1e-3,
                                                atol=1e-4):
            raise AssertionError(f"{name}: first losses differ: {values}")

    peaks = _reset_peaks(frameworks)
    run(row, build, cfg, check)
    row.note = "peak allocated MiB during the row: " + ", ".join(
        f"{fw} {p():.3g}" for fw, p in peaks.items())
    _vs_torch(row)
    return row


def _reset_peaks(frameworks: dict) -> dict:
    """Reset each framework's peak-memory counter; returns ``{fw: () -> peak MiB}``."""
    out = {}
    for fw, mod in frameworks.items():
        mod.cuda.reset_peak_memory_stats()
        out[fw] = lambda mod=mod: mod.cuda.max_memory_allocated() / MIB
    return out


def training(frameworks: dict, sizes: Sizes, cfg: Config) -> list:
    """One optimiser step (zero_grad, forward, cross-entropy, backward, step), ms per step."""
    widths = "-".join(map(str, sizes.mlp))
    mlp_row = _training_row(frameworks, cfg, f"MLP {widths} b{sizes.mlp_batch} SGD-momentum step",
                            lambda nn: mlp(nn, sizes.mlp), (sizes.mlp[0],), sizes.mlp_batch,
                            _sgd_momentum)
    mlp_row.targets["dg/torch"] = ("<=", MLP_TARGET)
    side = sizes.lenet.side
    lenet_row = _training_row(frameworks, cfg,
                              f"{sizes.lenet.label()} b{sizes.lenet_batch} Adam step",
                              lambda nn: lenet5(nn, sizes.lenet), (1, side, side),
                              sizes.lenet_batch, _adam)
    return [mlp_row, lenet_row]


# --- 4. launch overhead ----------------------------------------------------------------------------

def launch(frameworks: dict, sizes: Sizes, cfg: Config) -> list:
    """``a + b`` on two small float32 tensors: host time per op, one synchronize at the end."""
    a, b = _randn(*sizes.launch, seed=30), _randn(*sizes.launch, seed=31)
    row = Row(f"a+b {'x'.join(map(str, sizes.launch))} float32, per op", "launch", "us",
              note="many calls, then one synchronize; time per call")

    def build() -> dict:
        dev = _upload(frameworks, a, b)
        return {fw: Contender(lambda x=dev[fw][0], y=dev[fw][1]: x + y, Clock(mod, "host"))
                for fw, mod in frameworks.items()}
    ref = a.astype(np.float64) + b
    run(row, build, cfg, lambda outs: _expect_close(row.name, outs, ref, 1e-6, 1e-6))
    _vs_torch(row)
    return [row]


SECTIONS = {"bandwidth": bandwidth, "matmul": matmul, "training": training, "launch": launch}
