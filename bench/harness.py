"""Timing and result types: warm-up first, then repeats interleaved across frameworks.

A *timed* workload builds one zero-argument callable per framework; the harness warms each up
(compiles / loads kernels, fills allocator caches), picks how many calls make one sample, and then
takes the repeats round-robin, rotating the order each round, so that a noisy neighbour slows every
framework alike. A *probe* workload (memory, start-up) measures in child processes and returns its
samples directly.
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

FRAMEWORKS = ("dynagrad", "numpy", "torch")
# Seconds of idleness before a sample of another framework: OpenBLAS's threads (NumPy's BLAS, so
# dynagrad's and NumPy's matmuls) busy-wait about 0.1 s after each call before they sleep, and
# while they spin a PyTorch step on the same 2 cores ran 2-3.5x slower (LeNet-5: 17.6 ms with no
# gap, 12.7 with 0.05 s, 4.8 with 0.1 s; dynagrad's own time did not change).
SWITCH_IDLE_SECONDS = 0.15


@dataclass(frozen=True)
class Config:
    """How hard to measure: ``--quick`` shrinks every knob."""
    repeats: int = 9           # timed samples per framework
    warmup: int = 3            # untimed calls first (the first one compiles / loads kernels)
    sample_seconds: float = 0.05  # calls per sample are chosen to fill about this long
    process_repeats: int = 3   # child processes per probe (start-up, warm cache)
    switch_idle_seconds: float = SWITCH_IDLE_SECONDS

    @classmethod
    def quick(cls) -> "Config":
        return cls(repeats=3, warmup=2, sample_seconds=0.015, process_repeats=1)


@dataclass
class Result:
    """One table row: samples per framework in ``unit`` ("s" per call, or "MB")."""
    name: str
    group: str
    unit: str = "s"
    samples: dict = field(default_factory=dict)   # framework -> list[float]
    note: str = ""
    error: str = ""
    calls: dict = field(default_factory=dict)     # framework -> calls per timed sample

    def median(self, fw: str) -> float | None:
        s = self.samples.get(fw)
        return statistics.median(s) if s else None

    def ratio(self, other: str = "torch") -> float | None:
        a, b = self.median("dynagrad"), self.median(other)
        return a / b if a is not None and b else None

    def to_json(self) -> dict:
        stats = {fw: {"median": statistics.median(s), "min": min(s), "max": max(s), "samples": s}
                 for fw, s in self.samples.items() if s}
        return {"name": self.name, "group": self.group, "unit": self.unit, "results": stats,
                "dynagrad_over_torch": self.ratio("torch"),
                "dynagrad_over_numpy": self.ratio("numpy"), "calls_per_sample": self.calls,
                "note": self.note, "error": self.error}


@dataclass(frozen=True)
class Timed:
    """``build(cfg)`` returns ``{framework: callable}``; frameworks it cannot run are left out."""
    name: str
    group: str
    build: Callable[[Config], dict]


@dataclass(frozen=True)
class Probe:
    """``measure(cfg)`` returns ``({framework: [values]}, note)`` in ``unit``."""
    name: str
    group: str
    measure: Callable[[Config], tuple]
    unit: str = "s"


def seconds_per_call(fn: Callable[[], object], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def run_timed(w: Timed, cfg: Config) -> Result:
    res = Result(w.name, w.group)
    fns = w.build(cfg)
    errors = []
    for fw, fn in list(fns.items()):
        try:
            for _ in range(cfg.warmup):
                fn()
        except Exception as exc:  # one framework failing leaves the others measured
            errors.append(f"{fw}: {type(exc).__name__}: {exc}")
            del fns[fw]
            continue
        once = seconds_per_call(fn, 1)
        if once < 1e-3:  # one call of a tiny op is mostly timer noise
            once = seconds_per_call(fn, 200)
        res.calls[fw] = max(1, int(cfg.sample_seconds / max(once, 1e-9)))
    res.error = "; ".join(errors)
    order = list(fns)
    res.samples = {fw: [] for fw in order}
    gc.collect()
    for r in range(cfg.repeats):
        for fw in order[r % len(order):] + order[:r % len(order)]:
            if len(order) > 1:  # let the previous framework's thread pools fall asleep
                time.sleep(cfg.switch_idle_seconds)
            res.samples[fw].append(seconds_per_call(fns[fw], res.calls[fw]))
    return res


def run_probe(w: Probe, cfg: Config) -> Result:
    samples, note = w.measure(cfg)
    return Result(w.name, w.group, w.unit, samples, note)


def run(w: Timed | Probe, cfg: Config) -> Result:
    """Run one workload; a failure becomes the row's ``error`` instead of stopping the suite."""
    try:
        return run_timed(w, cfg) if isinstance(w, Timed) else run_probe(w, cfg)
    except Exception as exc:  # report precisely, keep going
        unit = w.unit if isinstance(w, Probe) else "s"
        return Result(w.name, w.group, unit, error=f"{type(exc).__name__}: {exc}")
