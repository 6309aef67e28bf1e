"""``bench/bench_gpu.py`` end to end, in a child process: ``--smoke`` on the device under test
(numba's CUDA simulator without a GPU, where PyTorch CUDA is left out; the real GPU and PyTorch
CUDA otherwise), and a clear message with exit status 0 when CUDA is missing.

The smoke run takes about 25 s on the simulator: a few tiny launches per row, and the two training
steps dominate (each simulated launch is 10-20 ms of Python threads).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_gpu.py"
SECTIONS = {"bandwidth", "matmul", "training", "launch"}


def _bench(args: list, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The JSON of one ``--smoke`` run (the child inherits NUMBA_ENABLE_CUDASIM, if set)."""
    out = tmp_path_factory.mktemp("bench") / "gpu.json"
    proc = _bench(["--smoke", "--json", str(out)], dict(os.environ))
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    for section in SECTIONS:
        assert f"### {section}" in proc.stdout
    return json.loads(out.read_text())


def test_smoke_measures_every_row_of_every_section(smoke):
    assert set(smoke["sections"]) == SECTIONS
    assert smoke["mode"] == "smoke"
    assert smoke["config"] == {"repeats": 1, "warmup": 1, "sample_seconds": 0.0}
    for rows in smoke["sections"].values():
        assert rows
        for row in rows:
            assert row["error"] == "", row["name"]
            assert row["results"], row["name"]
            for label, res in row["results"].items():
                assert len(res["values"]) == 1 and res["calls"] >= 1, (row["name"], label)
                assert 0 < res["min"] <= res["median"] <= res["max"], (row["name"], label)
            if "torch" in row["results"]:  # a GPU machine with PyTorch CUDA
                assert row["ratios"]["dg/torch"] > 0, row["name"]


def test_smoke_sizes_units_and_work(smoke):
    names = {s: [r["name"] for r in rows] for s, rows in smoke["sections"].items()}
    assert names["bandwidth"] == ["copy 64 float32", "a+b 64 float32", "a*b+c 64 float32",
                                  "exp 64 float32"]
    assert names["matmul"] == ["matmul 8x8 float32", "matmul 8x8 float16"]
    assert names["training"][0] == "MLP 16-8-8-10 b4 SGD-momentum step"
    assert names["launch"] == ["a+b 32x32 float32, per op"]
    units = {s: {r["unit"] for r in rows} for s, rows in smoke["sections"].items()}
    assert units == {"bandwidth": {"GB/s"}, "matmul": {"TFLOP/s"}, "training": {"ms"},
                     "launch": {"us"}}
    # bytes per call: 64 float32 read and written once per array the kernels touch
    assert [r["work"] for r in smoke["sections"]["bandwidth"]] == [512, 768, 1536, 512]
    assert [r["work"] for r in smoke["sections"]["matmul"]] == [2 * 8 ** 3] * 2
    # the shown values are the timed seconds converted with the row's work
    copy = smoke["sections"]["bandwidth"][0]["results"]["dynagrad"]
    assert copy["values"] == pytest.approx([512 / s / 1e9 for s in copy["seconds"]])
    step = smoke["sections"]["training"][0]["results"]["dynagrad"]
    assert step["values"] == pytest.approx([s * 1e3 for s in step["seconds"]])


def test_smoke_compares_bandwidth_with_copies_of_the_same_run(smoke):
    rows = smoke["sections"]["bandwidth"]
    copies = rows[0]["results"]
    assert {"dynagrad", "memcpy D2D"} <= set(copies)
    fastest = max(c["median"] for c in copies.values())
    for row in rows:
        ratio = row["ratios"]["dg/copy"]
        assert ratio == pytest.approx(row["results"]["dynagrad"]["median"] / fastest)
        assert row["targets"]["dg/copy"] == [">=", 0.8]
    targets = {(t["row"], t["ratio"]) for t in smoke["targets"]}
    assert ("MLP 16-8-8-10 b4 SGD-momentum step", "dg/torch") in targets
    assert ("matmul 8x8 float16", "dg/torch") in targets
    assert smoke["machine"]["matmul_backend"] in ("cublas", "numba")


def test_without_cuda_it_says_why_and_exits_0(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["NUMBA_DISABLE_CUDA"] = "1"  # numba-cuda then reports no device, GPU or not
    out = tmp_path / "gpu.json"
    proc = _bench(["--smoke", "--json", str(out)], env)
    assert proc.returncode == 0, proc.stderr
    assert "CUDA is not available, nothing measured" in proc.stdout
    assert "NUMBA_DISABLE_CUDA" in proc.stdout  # numba's reason is passed on
    assert not out.exists()
