"""``python -m dynagrad.as_torch``: unmodified torch scripts (tests/data/as_torch/) run on dynagrad.

Every run is a subprocess, so ``torch`` is never aliased in the test process itself."""
import json
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


MISSING = [("missing_api.py", 5, "torch.no_such_function"),
           ("missing_import.py", 2, "torch.no_such_module"),
           ("missing_method.py", 4, "torch.Tensor.no_such_method"),
           ("missing_name.py", 1, "torch.nn.modules.sparse.NoSuchLayer")]


def _check_one_line(stderr, script, line, api):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    path = os.path.join(SCRIPTS, script)
    assert lines[0].startswith(f"dynagrad.as_torch: {path}:{line}: {api} is not provided")
    assert "Traceback" not in stderr


def test_missing_api_gives_one_line_and_exit_1():
    script, line, api = MISSING[0]
    r = _run(os.path.join(SCRIPTS, script))  # the command line itself
    assert r.returncode == 1
    _check_one_line(r.stderr, script, line, api)
    # the other kinds of missing API, in one process (each start costs an import of dynagrad)
    paths = [os.path.join(SCRIPTS, m[0]) for m in MISSING[1:]]
    code = ("import contextlib, io, json, dynagrad.as_torch as a\n"
            "out = []\n"
            f"for p in {paths!r}:\n"
            "    err = io.StringIO()\n"
            "    with contextlib.redirect_stderr(err):\n"
            "        out.append((a.main([p]), err.getvalue()))\n"
            "print(json.dumps(out))")
    r = _run(code=code)
    assert r.returncode == 0, r.stderr
    for (rc, stderr), (script, line, api) in zip(json.loads(r.stdout), MISSING[1:]):
        assert rc == 1
        _check_one_line(stderr, script, line, api)


def test_usage_missing_script_and_other_errors_keep_their_traceback(tmp_path):
    bad = tmp_path / "err.py"
    bad.write_text('raise ValueError("boom")\n')
    own = tmp_path / "own.py"  # a script's own missing attribute is its bug, not a missing API
    own.write_text("import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n\n\n"
                   "Net().no_such_attr\n")
    nope = str(tmp_path / "nope.py")
    code = ("import sys, dynagrad.as_torch as a\n"
            f"print(a.main([]), a.main([{nope!r}]))\n"
            f"sys.exit(a.main([{str(bad)!r}]))")
    r = _run(code=code)
    assert r.stdout.strip() == "2 2"  # usage; no such file
    # an error that is not a missing API keeps Python's traceback and exit status
    assert r.returncode == 1 and "Traceback" in r.stderr and "ValueError: boom" in r.stderr
    r = _run(str(own))
    assert r.returncode == 1 and "Traceback" in r.stderr
    assert "'Net' object has no attribute 'no_such_attr'" in r.stderr


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


# --- compatibility names, against torch -----------------------------------------------------------

torch = pytest.importorskip("torch")
import numpy as np

import dynagrad as dg

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
          "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types_construct_as_torch(name):
    ours, theirs = getattr(dg, name), getattr(torch, name)
    a, b = ours([1, 0, 2]), theirs([1, 0, 2])
    assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(ours(2, 3).shape) == tuple(theirs(2, 3).shape) == (2, 3)
    assert tuple(ours(dg.Size([4])).shape) == (4,)
    assert tuple(ours().shape) == tuple(theirs().shape) == (0,)
    assert ours(a) is a  # a tensor of the right dtype is returned as it is
    assert isinstance(a, ours) and isinstance(b, theirs)
    other = "DoubleTensor" if name != "DoubleTensor" else "FloatTensor"
    assert not isinstance(a, getattr(dg, other)) and not isinstance(b, getattr(torch, other))
    assert not isinstance([1], ours)


def test_legacy_tensor_type_rejects_another_dtype_like_torch():
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.ones(2, dtype=torch.float64))
    with pytest.raises(TypeError):
        dg.FloatTensor(dg.ones(2, dtype=dg.float64))


def test_accelerator_answers_from_cuda():
    assert dg.accelerator.is_available() == dg.cuda.is_available()
    if not dg.cuda.is_available():  # as torch's CPU build answers
        assert dg.accelerator.device_count() == torch.accelerator.device_count() == 0
        assert dg.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
        for fn in ("current_device_index", "synchronize", "empty_cache", "memory_allocated"):
            with pytest.raises(RuntimeError, match="Cannot access accelerator device when none "
                                                   "is available."):
                getattr(dg.accelerator, fn)()
    else:
        assert dg.accelerator.current_accelerator() == dg.device("cuda")
        assert dg.accelerator.device_count() == dg.cuda.device_count()
    public = {n for n in dir(torch.accelerator) if not n.startswith("_")}
    assert set(dg.accelerator.__all__) <= public


def test_safe_globals_like_torch():
    class Mine:
        pass
    s = dg.serialization
    s.clear_safe_globals()
    try:
        s.add_safe_globals([Mine])
        assert s.get_safe_globals() == [Mine]
        with s.safe_globals([(dict, "builtins.dict")]):
            assert s.get_safe_globals() == [Mine, (dict, "builtins.dict")]
        assert s.get_safe_globals() == [Mine]
        with pytest.raises(TypeError, match="not iterable"):
            s.add_safe_globals(3)
    finally:
        s.clear_safe_globals()
    assert s.get_safe_globals() == []


def test_generator_device():
    assert dg.Generator().device == dg.device("cpu")
    assert str(dg.Generator().device) == str(torch.Generator().device)


def test_backends_flags_as_torch():
    b, tb = dg.backends, torch.backends
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):  # torch's defaults
        assert getattr(b.cudnn, name) == getattr(tb.cudnn, name), name
    assert b.mps.is_available() is False and b.mkldnn.is_available() is False
    assert b.cudnn.is_available() is False and b.openmp.is_available() is False
    before = dg.get_float32_matmul_precision()
    try:
        # matmul.allow_tf32 is the float32 matmul precision, both ways, as in torch
        for lib in (dg, torch):
            lib.backends.cuda.matmul.allow_tf32 = True
            assert lib.get_float32_matmul_precision() == "high"
            lib.set_float32_matmul_precision("highest")
            assert lib.backends.cuda.matmul.allow_tf32 is False
            lib.set_float32_matmul_precision("medium")
            assert lib.backends.cuda.matmul.allow_tf32 is True
        # cudnn.deterministic is not use_deterministic_algorithms, in torch nor here
        b.cudnn.deterministic, tb.cudnn.deterministic = True, True
        assert dg.are_deterministic_algorithms_enabled() is torch.are_deterministic_algorithms_enabled() is False
    finally:
        b.cudnn.deterministic, tb.cudnn.deterministic = False, False
        dg.set_float32_matmul_precision(before)
        torch.set_float32_matmul_precision("highest")
