"""Render results: a Markdown table (stdout and README), JSON, and an optional bar chart."""
from __future__ import annotations

import json
import os
import platform
import sys

from .harness import FRAMEWORKS, Result

_SCALES = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6))


def _display_unit(r: Result) -> tuple[str, float]:
    if r.unit != "s":
        return r.unit, 1.0
    largest = max((r.median(fw) or 0) for fw in FRAMEWORKS)
    return next(((name, scale) for name, scale in _SCALES if largest >= scale), _SCALES[-1])


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _cell(r: Result, fw: str, scale: float) -> str:
    s = r.samples.get(fw)
    if not s:
        return "-"
    return f"{_fmt(r.median(fw) / scale)} [{_fmt(min(s) / scale)}-{_fmt(max(s) / scale)}]"


def _ratio(x: float | None) -> str:
    return f"{x:.2f}" if x is not None else "-"


def notes_and_errors(rows) -> list:
    """The Markdown lines under a table: each row's note and error, if any."""
    notes = [f"- {r.name}: {r.note}" for r in rows if r.note]
    errors = [f"- {r.name}: {r.error}" for r in rows if r.error]
    return ((["", "Notes:", *notes] if notes else [])
            + (["", "Errors:", *errors] if errors else []))


def table(results: list[Result]) -> str:
    """Median [min-max] per framework, and dynagrad's time over PyTorch's and NumPy's."""
    lines = ["| workload | unit | dynagrad | numpy | torch | dg/torch | dg/numpy |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        unit, scale = _display_unit(r)
        cells = [_cell(r, fw, scale) for fw in FRAMEWORKS]
        lines.append(f"| {r.name} | {unit} | " + " | ".join(cells) +
                     f" | {_ratio(r.ratio('torch'))} | {_ratio(r.ratio('numpy'))} |")
    return "\n".join(lines + notes_and_errors(results))


def machine() -> dict:
    """What the numbers were measured on."""
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    for name in ("numpy", "numba", "torch", "dynagrad"):
        mod = sys.modules.get(name)
        info[name] = getattr(mod, "__version__", "?") if mod else None
    if sys.modules.get("torch"):
        info["torch_threads"] = sys.modules["torch"].get_num_threads()
    return info


def machine_line() -> str:
    m = machine()
    torch = f", torch {m['torch']} ({m['torch_threads']} threads)" if m["torch"] else ""
    return (f"{m['cpus']} CPUs ({m['processor']}), python {m['python']}, numpy {m['numpy']}, "
            f"numba {m['numba']}{torch}, dynagrad {m['dynagrad']}")


def write_json(path: str, results: list[Result], config: dict, argv: list) -> None:
    doc = {"command": " ".join(["python -m bench", *argv]), "machine": machine(),
           "config": config, "results": [r.to_json() for r in results]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def plot(path: str, results: list[Result]) -> bool:
    """A bar per workload of dynagrad's time over PyTorch's (log scale, 1.0 = parity)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [(r.name, r.ratio("torch")) for r in results if r.ratio("torch")]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2))
    names, ratios = zip(*reversed(rows))
    ax.barh(names, ratios, color=["tab:green" if x <= 1 else "tab:red" for x in ratios])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("dynagrad time / PyTorch time (lower is better)")
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True
