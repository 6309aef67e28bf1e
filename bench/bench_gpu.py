"""dynagrad on CUDA against PyTorch CUDA, in one process, interleaved (issue 4).

Four sections: elementwise bandwidth (GB/s, against device-to-device copies of the same run),
matmul float32/float16 (TFLOP/s), the MLP and LeNet-5 training steps (ms), and per-op launch
overhead (us). Every row is warmed up first (the first call compiles the kernels), then timed in
repeats that alternate between dynagrad and PyTorch; cells are median [min-max]. PyTorch takes
part when it is installed with CUDA (TF32 switched off, so float32 is float32 on both sides).

    python bench/bench_gpu.py                       # full sizes (64M elements, 1024-4096 matmul)
    python bench/bench_gpu.py --quick               # 3 repeats, short samples
    python bench/bench_gpu.py --only matmul         # one section (repeatable)
    python bench/bench_gpu.py --json out.json       # default: bench/results_gpu.json
    NUMBA_ENABLE_CUDASIM=1 python bench/bench_gpu.py --smoke   # tiny sizes, runs on the simulator

Without CUDA it says why and exits 0. Exit status 1 means a row failed (see its error).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.gpu import report, workloads  # noqa: E402
from bench.gpu.timing import Config, Row  # noqa: E402

DEFAULT_JSON = Path(__file__).resolve().parent / "results_gpu.json"


def _torch_cuda(simulator: bool):
    """``(torch or None, note)``: PyTorch when it can run on this GPU next to dynagrad."""
    if simulator:  # dynagrad on the simulator against torch on a real GPU would compare nothing
        return None, "not run (dynagrad is on numba's CUDA simulator)"
    try:
        import torch
    except ImportError:
        return None, "not installed"
    if not torch.cuda.is_available():
        return None, f"{torch.__version__} has no usable CUDA here"
    # PyTorch would run float32 matmuls and convolutions in TF32 on Ampere and later (cuDNN's
    # default): dynagrad computes in full float32, so compare like with like.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch, f"{torch.__version__} (CUDA {torch.version.cuda}, TF32 off)"


def _cuda_unavailable_reason(dg) -> str | None:
    """None when dynagrad can use CUDA, else its error message (what is missing, how to fix)."""
    if dg.cuda.is_available():
        return None
    try:
        dg.zeros(1, device="cuda")
    except RuntimeError as exc:
        return str(exc)
    return "dg.cuda.is_available() is False"


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python bench/bench_gpu.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer repeats, shorter samples")
    mode.add_argument("--smoke", action="store_true",
                      help="tiny sizes and 2 repeats: checks the benchmark runs (simulator too)")
    p.add_argument("--only", metavar="SECTION", action="append", choices=list(workloads.SECTIONS),
                   help="run only this section (repeatable): %(choices)s")
    p.add_argument("--json", metavar="PATH", default=str(DEFAULT_JSON),
                   help="where to write the results (default: %(default)s)")
    args = p.parse_args(argv)

    import numba

    import dynagrad as dg
    why = _cuda_unavailable_reason(dg)
    if why is not None:
        print(f"bench_gpu: CUDA is not available, nothing measured.\n{why}")
        return 0
    simulator = bool(numba.config.ENABLE_CUDASIM)
    if simulator and not args.smoke:
        print("bench_gpu: numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1): full sizes would "
              "take days there; run with --smoke, or unset NUMBA_ENABLE_CUDASIM on a GPU machine",
              file=sys.stderr)
        return 2
    torch, torch_note = _torch_cuda(simulator)
    frameworks = {"dynagrad": dg} | ({"torch": torch} if torch is not None else {})
    cfg = Config.smoke() if args.smoke else Config.quick() if args.quick else Config()
    sizes = workloads.SMOKE if args.smoke else workloads.Sizes()
    mode_name = "smoke" if args.smoke else "quick" if args.quick else "full"

    info = report.machine(torch_note)
    print(f"bench_gpu ({mode_name}): {report.machine_line(info)}", file=sys.stderr, flush=True)
    rows, t0 = [], time.perf_counter()
    for name, section in workloads.SECTIONS.items():
        if args.only and name not in args.only:
            continue
        print(f"[{name}] ...", file=sys.stderr, flush=True)
        try:
            rows += section(frameworks, sizes, cfg)
        except Exception as exc:  # e.g. out of memory while preparing inputs: keep going
            rows.append(Row(f"{name} (section failed)", name, "ms",
                            error=f"{type(exc).__name__}: {exc}"))
    seconds = time.perf_counter() - t0

    for name in workloads.SECTIONS:
        chosen = [r for r in rows if r.section == name]
        if chosen:
            print(report.section_table(name, chosen) + "\n")
    print(report.targets_text(rows))
    print(f"\n{len(rows)} rows in {seconds:.0f} s ({mode_name} run; {report.machine_line(info)})")
    report.write_json(args.json, {"command": " ".join(["python bench/bench_gpu.py", *argv]),
                                  "mode": mode_name, "seconds": seconds, "machine": info,
                                  "config": dataclasses.asdict(cfg),
                                  "sizes": dataclasses.asdict(sizes)}, rows)
    return 1 if any(r.error for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
