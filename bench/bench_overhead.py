"""Per-op overhead on (32,32) float32: a+b, relu, sum, matmul with and without requires_grad, and
the forward+backward of (a*b).sum(), next to NumPy and PyTorch in one run.

    python bench/bench_overhead.py [--quick]

The rows are the suite's "overhead" workloads (``python -m bench --only overhead``).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["--only", "overhead", *sys.argv[1:]]))
