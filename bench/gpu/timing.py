"""Timing GPU work: warm-up first, then repeats interleaved across contenders, medians with range.

A *contender* is one way of doing a row's work (dynagrad, PyTorch, a raw cudaMemcpy) with the clock
that times it. Each contender is warmed up (the first call compiles or loads kernels and fills the
caching allocators), then the repeats rotate between contenders, so a slow moment of the machine
hits all of them alike.

Example:
    >>> import dynagrad as dg
    >>> from bench.gpu.timing import Clock, Config, Contender, Row, run
    >>> if dg.cuda.is_available():                                  # doctest: +SKIP
    ...     a = dg.ones(1024, device="cuda")
    ...     row = run(Row("a+a", "demo", "us"), lambda: {"dynagrad": Contender(
    ...         lambda: a + a, Clock(dg, "host"))}, Config.smoke())
    ...     row.median("dynagrad") > 0
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Config:
    """How hard to measure; ``quick()`` and ``smoke()`` shrink every knob."""
    repeats: int = 9              # timed samples per contender
    warmup: int = 3               # untimed calls first (at least 1: it compiles the kernels)
    sample_seconds: float = 0.05  # calls per sample are chosen to fill about this; 0: one call

    @classmethod
    def quick(cls) -> "Config":
        return cls(repeats=3, warmup=2, sample_seconds=0.015)

    @classmethod
    def smoke(cls) -> "Config":
        # one timed call: a smoke run checks that every row runs (on the simulator a LeNet-5
        # step takes ~9 s), not how fast
        return cls(repeats=1, warmup=1, sample_seconds=0.0)


class Clock:
    """Seconds per call of a function on one framework's CUDA device.

    ``mode="device"`` brackets the calls with two CUDA events: the GPU time between them (which
    also counts the GPU waiting on a slow host). ``mode="host"`` reads ``perf_counter`` around the
    calls with one synchronize at the end: the wall time a user waits (launch overhead, training
    steps). ``framework`` is a module with a torch-like ``cuda`` namespace (dynagrad or torch).
    """

    def __init__(self, framework, mode: str):
        if mode not in ("device", "host"):
            raise ValueError(f"Clock: mode must be 'device' or 'host', got {mode!r}")
        self.sync = framework.cuda.synchronize
        self.event = framework.cuda.Event
        self.mode = mode

    def per_call(self, fn: Callable[[], object], number: int) -> float:
        self.sync()  # nothing queued before the first timed call
        if self.mode == "host":
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            self.sync()
            return (time.perf_counter() - t0) / number
        start, end = self.event(enable_timing=True), self.event(enable_timing=True)
        start.record()
        for _ in range(number):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / number


@dataclass(frozen=True)
class Contender:
    """``fn()`` does the work once and returns its result; ``clock`` times it."""
    fn: Callable[[], object]
    clock: Clock


# unit -> value from (seconds per call, work per call): bytes for GB/s, flops for TFLOP/s
_UNITS = {"GB/s": lambda s, w: w / s / 1e9, "TFLOP/s": lambda s, w: w / s / 1e12,
          "ms": lambda s, w: s * 1e3, "us": lambda s, w: s * 1e6}


@dataclass
class Row:
    """One table row: seconds per call for each contender, shown in ``unit``.

    ``work`` is the bytes (GB/s) or floating-point operations (TFLOP/s) of one call. ``ratios``
    maps a name like ``"dg/torch"`` to a ratio of medians in ``unit``; ``targets`` maps some of
    those names to ``(">=" or "<=", bound)``.
    """
    name: str
    section: str
    unit: str
    work: float = 0.0
    seconds: dict = field(default_factory=dict)   # label -> [seconds per call, one per repeat]
    calls: dict = field(default_factory=dict)     # label -> calls per timed sample
    ratios: dict = field(default_factory=dict)
    targets: dict = field(default_factory=dict)
    note: str = ""
    error: str = ""

    def values(self, label: str) -> list:
        to_unit = _UNITS[self.unit]
        return [to_unit(s, self.work) for s in self.seconds.get(label, ())]

    def median(self, label: str) -> float | None:
        v = self.values(label)
        return statistics.median(v) if v else None

    def ratio(self, num: str, den: str) -> float | None:
        a, b = self.median(num), self.median(den)
        return a / b if a and b else None

    def to_json(self) -> dict:
        results = {}
        for label, secs in self.seconds.items():
            v = self.values(label)
            if v:
                results[label] = {"median": statistics.median(v), "min": min(v), "max": max(v),
                                  "values": v, "seconds": secs, "calls": self.calls.get(label)}
        return {"name": self.name, "section": self.section, "unit": self.unit, "work": self.work,
                "results": results, "ratios": self.ratios,
                "targets": {k: list(t) for k, t in self.targets.items()}, "note": self.note,
                "error": self.error}


def _calls_per_sample(c: Contender, cfg: Config) -> int:
    if cfg.sample_seconds <= 0:
        return 1
    once = c.clock.per_call(c.fn, 1)
    if once < 1e-3:  # one short call is mostly clock noise: time a batch of them
        once = c.clock.per_call(c.fn, 100)
    return max(1, int(cfg.sample_seconds / max(once, 1e-9)))


def run(row: Row, build: Callable[[], dict], cfg: Config,
        check: Callable[[dict], None] | None = None) -> Row:
    """Fill ``row.seconds``: ``build()`` gives ``{label: Contender}``; each is warmed up, then
    timed in ``cfg.repeats`` interleaved samples.

    ``check({label: first result})`` runs after the warm-up and raises if a result is wrong: a row
    that computes the wrong thing gets an error instead of timings. A contender that fails is left
    out and named in ``row.error``; the others are still measured.
    """
    try:
        contenders = build()
    except Exception as exc:  # report precisely, let the other rows run
        row.error = f"setup: {type(exc).__name__}: {exc}"
        return row
    firsts, errors = {}, []
    for label, c in list(contenders.items()):
        try:
            firsts[label] = c.fn()
            for _ in range(cfg.warmup - 1):
                c.fn()
            row.calls[label] = _calls_per_sample(c, cfg)
        except Exception as exc:
            errors.append(f"{label}: {type(exc).__name__}: {exc}")
            del contenders[label]
    if check is not None and firsts:
        try:
            check(firsts)
        except Exception as exc:
            errors.append(f"check: {type(exc).__name__}: {exc}")
            contenders = {}
    del firsts  # large outputs go back to the allocators before timing
    row.error = "; ".join(errors)
    order = list(contenders)
    row.seconds = {label: [] for label in order}
    gc.collect()
    for r in range(cfg.repeats):
        k = r % max(len(order), 1)
        for label in order[k:] + order[:k]:
            c = contenders[label]
            row.seconds[label].append(c.clock.per_call(c.fn, row.calls[label]))
    return row
