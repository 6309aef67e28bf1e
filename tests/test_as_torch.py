"""``python -m dynagrad.as_torch``: unmodified torch scripts (tests/data/as_torch/) run on dynagrad.

Every run is a subprocess, so ``torch`` is never aliased in the test process itself."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPTS = os.path.join(HERE, "data", "as_torch")


def _run(*args, code=None):
    cmd = [sys.executable, "-m", "dynagrad.as_torch", *args] if code is None else \
        [sys.executable, "-c", code]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300, env=env,
                          cwd=ROOT)


def test_training_loop_runs_as_main_with_args_and_script_folder_on_path():
    r = _run(os.path.join(SCRIPTS, "train_loop.py"), "3")
    assert r.returncode == 0, r.stderr
    # __name__ is "__main__", argv[1:] are the script's, helper_mod came from the script folder
    assert r.stdout.strip() == "__main__ ['3'] helper True"


def test_deep_module_paths_give_dynagrads_own_objects():
    r = _run(os.path.join(SCRIPTS, "deep_paths.py"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "deep paths ok"


@pytest.mark.parametrize("script,line,api", [
    ("missing_api.py", 5, "torch.no_such_function"),
    ("missing_import.py", 2, "torch.no_such_module"),
])
def test_missing_api_gives_one_line_and_exit_1(script, line, api):
    path = os.path.join(SCRIPTS, script)
    r = _run(path)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"dynagrad.as_torch: {path}:{line}: {api} is not provided")
    assert "Traceback" not in r.stderr


def test_missing_script_and_usage():
    assert _run(os.path.join(SCRIPTS, "nope.py")).returncode == 2
    assert _run().returncode == 2


def test_other_errors_keep_their_traceback():
    r = _run(code="import dynagrad.as_torch as a, sys; sys.exit(a.main(['-c']))")
    assert r.returncode == 2  # no such file "-c"
    code = ("import sys, dynagrad.as_torch as a\n"
            "open('/tmp/_dg_as_torch_err.py', 'w').write('raise ValueError(\"boom\")')\n"
            "sys.exit(a.main(['/tmp/_dg_as_torch_err.py']))")
    r = _run(code=code)
    assert r.returncode == 1 and "Traceback" in r.stderr and "ValueError: boom" in r.stderr


def test_install_and_uninstall_in_a_notebook_process():
    code = """
import sys, dynagrad, dynagrad.as_torch as at
import dynagrad.nn.modules.activation as act
at.install()
import torch, torch.nn.modules.sparse
from torch.nn.modules.activation import MultiheadAttention
assert torch is dynagrad and torch.nn.modules.sparse.Embedding is dynagrad.nn.Embedding
assert MultiheadAttention is dynagrad.nn.MultiheadAttention
try:
    import torch.onnx
except ModuleNotFoundError as e:
    assert "torch.onnx" in str(e)
else:
    raise AssertionError("torch.onnx imported")
at.uninstall()
assert not any(k == "torch" or k.startswith("torch.") for k in sys.modules)
assert not hasattr(dynagrad.nn.modules, "sparse") and not hasattr(act, "MultiheadAttention")
import torch
assert torch is not dynagrad and hasattr(torch, "_C")
print("ok")
"""
    r = _run(code=code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
