"""Every notebook runs top to bottom (code cells executed in order in one namespace, in a fresh
process so worker processes fork from a clean interpreter, as they do under Jupyter)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    cells = json.loads(path.read_text())["cells"]
    source = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    proc = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_there_is_a_notebook():
    assert NOTEBOOKS
