"""Render the GPU benchmark: one Markdown table per section, the targets, the machine, JSON."""
from __future__ import annotations

import json
import platform
import sys

from ..report import notes_and_errors
from .timing import Row

HEADINGS = {
    "bandwidth": "Elementwise bandwidth, float32 (GB/s, higher is better). Bytes per call: every "
                 "kernel reads its inputs and writes its output once (a*b+c runs as two kernels). "
                 "dg/copy: dynagrad's GB/s over the fastest device-to-device copy of this run; "
                 "dg/torch: over PyTorch's GB/s.",
    "matmul": "Matmul (TFLOP/s = 2n^3 / time, higher is better; dg/torch: dynagrad's TFLOP/s "
              "over PyTorch's).",
    "training": "Training step on CUDA (ms per step, wall clock, lower is better; dg/torch: "
                "dynagrad's time over PyTorch's).",
    "launch": "Launch overhead (us per op, wall clock, lower is better; dg/torch: dynagrad's "
              "time over PyTorch's).",
}


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def _cell(row: Row, label: str) -> str:
    v = row.values(label)
    return f"{_fmt(row.median(label))} [{_fmt(min(v))}-{_fmt(max(v))}]" if v else "-"


def _ratio_cell(row: Row, name: str) -> str:
    r = row.ratios.get(name)
    if r is None:
        return "-"
    if name not in row.targets:
        return f"{r:.2f}"
    return f"{r:.2f} ({'met' if met(r, *row.targets[name]) else 'missed'})"


def met(value: float, op: str, bound: float) -> bool:
    return value >= bound if op == ">=" else value <= bound


def section_table(section: str, rows: list) -> str:
    """A heading and a table: one column per contender, then the ratios."""
    labels, ratios = [], []  # in order of first appearance
    for r in rows:
        for label in r.seconds:
            labels += [] if label in labels else [label]
        for name in [*r.ratios, *r.targets]:
            ratios += [] if name in ratios else [name]
    units = {r.unit for r in rows}
    lines = [f"### {section}", "", HEADINGS.get(section, ""), "",
             "| workload | " + ("unit | " if len(units) > 1 else "") +
             " | ".join(labels + ratios) + " |",
             "|---" * (1 + (len(units) > 1) + len(labels) + len(ratios)) + "|"]
    for r in rows:
        cells = [_cell(r, label) for label in labels] + [_ratio_cell(r, n) for n in ratios]
        lines.append(f"| {r.name} | " + (f"{r.unit} | " if len(units) > 1 else "") +
                     " | ".join(cells) + " |")
    return "\n".join(lines + notes_and_errors(rows))


def targets(rows: list) -> list:
    """Every target: the row, the ratio's name and value (None if unmeasured), bound, met."""
    out = []
    for r in rows:
        for name, (op, bound) in r.targets.items():
            value = r.ratios.get(name)
            out.append({"row": r.name, "ratio": name, "value": value, "op": op, "bound": bound,
                        "met": None if value is None else met(value, op, bound)})
    return out


def targets_text(rows: list) -> str:
    lines = ["### targets", ""]
    for t in targets(rows):
        value = "not measured" if t["value"] is None else f"{t['value']:.2f}"
        status = {None: "-", True: "met", False: "missed"}[t["met"]]
        lines.append(f"- {t['row']}: {t['ratio']} {value} (target "
                     f"{t['op']} {t['bound']:.2f}): {status}")
    return "\n".join(lines)


def machine(torch_note: str) -> dict:
    """What the numbers were measured on: GPU, driver and runtime, library versions."""
    import numba

    import dynagrad as dg
    import dynagrad.kernels.cuda.runner as dg_cuda
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "gpu": dg.cuda.get_device_name(), "capability": list(dg.cuda.get_device_capability()),
            "simulator": bool(numba.config.ENABLE_CUDASIM), "numba": numba.__version__,
            "dynagrad": dg.__version__, "matmul_backend": dg_cuda.matmul_backend(),
            "torch": torch_note}
    try:
        import numba_cuda
        info["numba_cuda"] = numba_cuda.__version__
    except ImportError:  # numba's bundled CUDA target (older numba)
        info["numba_cuda"] = None
    if not info["simulator"]:
        from numba.cuda.cudadrv import driver, runtime
        info["cuda_driver"] = _version(driver.get_version)
        info["nvrtc"] = _version(runtime.get_version)  # numba-cuda's "runtime" version
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        info["torch_gpu"] = torch.cuda.get_device_name()
    return info


def _version(query) -> str:
    """``"major.minor"`` from a numba version query; "?" if it fails (the figures matter more)."""
    try:
        return ".".join(map(str, query()))
    except Exception as exc:
        return f"? ({type(exc).__name__}: {exc})"


def machine_line(info: dict) -> str:
    cuda = (f" (compute capability {'.'.join(map(str, info['capability']))}), CUDA driver "
            f"{info['cuda_driver']}, NVRTC {info['nvrtc']}" if "cuda_driver" in info else "")
    return (f"{info['gpu']}{cuda}; "
            f"python {info['python']}, numba {info['numba']}, numba-cuda {info['numba_cuda']}, "
            f"dynagrad {info['dynagrad']} (matmul: {info['matmul_backend']}); "
            f"torch: {info['torch']}")


def write_json(path: str, doc: dict, rows: list) -> None:
    sections: dict = {}
    for r in rows:
        sections.setdefault(r.section, []).append(r.to_json())
    doc = {**doc, "sections": sections, "targets": targets(rows)}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
