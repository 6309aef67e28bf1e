"""Run dynagrad's benchmark suite: every workload JIT-warm, for dynagrad, NumPy and PyTorch
interleaved in one process, printed as a table of medians [min-max] and dynagrad/PyTorch ratios.

    python -m bench                        # the full suite (a few minutes)
    python -m bench --quick --only MLP     # a short run of the workloads whose name contains "MLP"
    python bench/run.py --json out.json --plot ratios.png
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import harness, report  # noqa: E402
from bench.registry import WORKLOADS  # noqa: E402

DEFAULT_JSON = Path(__file__).resolve().parent / "results.json"


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer repeats, shorter samples")
    p.add_argument("--only", metavar="NAME", action="append",
                   help="run workloads whose name contains NAME (case-insensitive; repeatable)")
    p.add_argument("--json", metavar="PATH", default=str(DEFAULT_JSON),
                   help="where to write the results (default: %(default)s)")
    p.add_argument("--plot", metavar="PATH", help="bar chart of dg/torch ratios (needs matplotlib)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = p.parse_args(argv)

    chosen = [w for w in WORKLOADS
              if not args.only or any(s.lower() in w.name.lower() for s in args.only)]
    if args.list or not chosen:
        print("\n".join(w.name for w in WORKLOADS) if args.list else "no workload matches --only")
        return 0 if args.list else 2
    cfg = harness.Config.quick() if args.quick else harness.Config()
    results, t0 = [], time.perf_counter()
    for i, w in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {w.name} ...", file=sys.stderr, flush=True)
        results.append(harness.run(w, cfg))
    print(report.table(results))
    print(f"\n{len(results)} workloads in {time.perf_counter() - t0:.0f} s "
          f"({'quick' if args.quick else 'full'} run; {report.machine_line()})")
    report.write_json(args.json, results, dataclasses.asdict(cfg), argv)
    if args.plot and not report.plot(args.plot, results):
        print("--plot: matplotlib is not installed; no chart drawn", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
