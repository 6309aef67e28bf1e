"""Workloads measured in fresh child processes: start-up time and peak memory.

Each child is ``python -c SCRIPT`` with a self-contained script, so nothing of this process
(imports, kernel cache, allocator state) leaks into what it measures.
"""
from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# One MLP training step, written against a module ``fw`` (dynagrad or torch: same API).
_MLP = """
fw.manual_seed(0)
nn = fw.nn
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10))
opt = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
x, y = fw.randn(128, 784), fw.randint(0, 10, (128,))
def step():
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
"""

_NUMPY_MLP = """
import numpy as np
from bench.workloads.numpy_mlp import NumpyMLP
rng = np.random.default_rng(0)
shapes = [(256, 784), (256, 256), (10, 256)]
net = NumpyMLP([(0.03 * rng.standard_normal(s, dtype=np.float32), np.zeros(s[0], np.float32))
                for s in shapes], lr=0.01, momentum=0.9)
x, y = rng.standard_normal((128, 784), dtype=np.float32), rng.integers(0, 10, 128)
def step():
    net.step(x, y)
"""

_IMPORT = {"dynagrad": "import dynagrad as fw\n",
           "torch": "import torch as fw\nfw.set_num_threads(2)\n",
           "numpy": f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"}

_STARTUP = """{imports}{mlp}step()
import json, time
end = time.time()
stats = fw.kernels.cache_stats() if fw.__name__ == "dynagrad" else None
print(json.dumps({{"end": end, "stats": stats}}))
"""

# Peak memory: VmHWM (the kernel's resident high-water mark, what getrusage's ru_maxrss reports)
# reset through /proc/self/clear_refs, minus VmRSS at the reset.
_MEMORY = """import json
def mib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
{imports}reset_peak()
base = mib("VmRSS")
{mlp}setup_peak = mib("VmHWM")
reset_peak()
before = mib("VmRSS")
for _ in range(20):
    step()
peak = max(setup_peak, mib("VmHWM"))
print(json.dumps({{"run": peak - base, "steps": mib("VmHWM") - before, "process": peak}}))
"""


# Children run as a default Python does: writing and reading bytecode caches. With
# PYTHONDONTWRITEBYTECODE set (as on the project's sandbox) an editable checkout, which pip does
# not byte-compile, recompiles dynagrad's 1.1 MB of source in every process: +0.2 s of warm
# start-up (0.94 s against 0.75, medians of 5), while installed packages such as torch keep the
# bytecode pip wrote for them.
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _child(script: str, env: dict | None = None) -> tuple[float, dict]:
    """Run ``python -c script``; returns (its wall time to the JSON it printed last, that JSON)."""
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**_CHILD_ENV, **(env or {})}, cwd=REPO)
    if out.returncode:
        raise RuntimeError(f"child failed: {out.stderr.strip().splitlines()[-1]}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return report.get("end", time.time()) - t0, report


def _installed(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def _frameworks() -> list:
    return ["dynagrad", "numpy"] + (["torch"] if _installed("torch") else [])


def import_time(cfg) -> tuple:
    """``python -c "import X"`` up to the end of the import, per framework."""
    script = "import {}\nimport json, time\nprint(json.dumps({{'end': time.time()}}))"
    samples = {fw: [_child(script.format(fw))[0] for _ in range(cfg.process_repeats)]
               for fw in _frameworks()}
    return samples, "python -c 'import X', to the end of the import"


@functools.lru_cache(maxsize=None)
def _first_steps(repeats: int) -> dict:
    """Start-up samples shared by the two start-up rows: dynagrad on an empty kernel cache (a new
    DYNAGRAD_CACHE_DIR each time), dynagrad on the warm cache the last cold run left, PyTorch."""
    runs = {"cold": [], "warm": [], "torch": []}
    script = _STARTUP.format(imports=_IMPORT["dynagrad"], mlp=_MLP)
    with tempfile.TemporaryDirectory(prefix="dynagrad-bench-") as tmp:
        for i in range(repeats):
            env = {"DYNAGRAD_CACHE_DIR": os.path.join(tmp, str(i))}
            runs["cold"].append(_child(script, env))
        for _ in range(repeats):
            runs["warm"].append(_child(script, env))
    if _installed("torch"):
        script = _STARTUP.format(imports=_IMPORT["torch"], mlp=_MLP)
        runs["torch"] = [_child(script) for _ in range(repeats)]
    return runs


def _kernel_note(runs: list) -> str:
    def med(key):
        return statistics.median(r[1]["stats"][key] for r in runs)
    return (f"{med('compiles'):.0f} kernels compiled in {med('compile_seconds'):.1f} s, "
            f"{med('disk_loads'):.0f} loaded from disk in {med('disk_load_seconds'):.2f} s")


def first_step(cache: str):
    """``python -c`` to the end of the first MLP (batch 128) training step; ``cache`` is "cold"
    (empty kernel cache) or "warm"."""
    def measure(cfg) -> tuple:
        runs = _first_steps(cfg.process_repeats)
        samples = {"dynagrad": [r[0] for r in runs[cache]]}
        if runs["torch"]:
            samples["torch"] = [r[0] for r in runs["torch"]]
        return samples, _kernel_note(runs[cache])
    return measure


@functools.lru_cache(maxsize=None)
def _memory_runs(repeats: int) -> dict:
    runs = {}
    for fw in _frameworks():
        mlp = _NUMPY_MLP if fw == "numpy" else _MLP
        script = _MEMORY.format(imports=_IMPORT[fw], mlp=mlp)
        runs[fw] = [_child(script)[1] for _ in range(repeats)]
    return runs


def peak_memory(part: str):
    """Peak MiB above a starting resident size. ``part`` "run": from just after the import,
    through building the model, optimizer and batch and 20 training steps; "steps": from the
    built model to the end of the 20 steps (gradients, optimizer state, activations and, for
    dynagrad, loading the step's kernels from the warm disk cache)."""
    def measure(cfg) -> tuple:
        runs = _memory_runs(cfg.process_repeats)
        procs = " / ".join(f"{fw} {statistics.median(r['process'] for r in rs):.0f}"
                           for fw, rs in runs.items())
        return ({fw: [r[part] for r in rs] for fw, rs in runs.items()},
                f"VmHWM delta in a child; whole-process peak MiB: {procs}")
    return measure
