"""Meta-test: every op in the registry has a test line somewhere in the suite.

Each op test module declares ``TESTED_OPS``; an op that nobody claims fails here, so adding an op
without its forward / gradient test cannot go unnoticed.
"""
import importlib.util
from pathlib import Path

from dynagrad.ops.registry import REGISTRY
import dynagrad as dg


def _claimed_ops() -> dict:
    claimed = {}
    # tests/cuda is left out: its modules need its conftest (a CUDA device or the simulator)
    here = Path(__file__).parent
    for path in sorted(p for p in here.glob("**/test_*.py")
                       if p.relative_to(here).parts[0] != "cuda"):
        if path.name == Path(__file__).name:
            continue
        spec = importlib.util.spec_from_file_location(f"_meta_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name in getattr(module, "TESTED_OPS", ()):
            claimed.setdefault(name, []).append(path.name)
    return claimed


def test_every_registered_op_has_a_test_line():
    claimed = _claimed_ops()
    missing = sorted(set(REGISTRY) - set(claimed))
    assert not missing, f"ops without a test line: {missing}"


def test_test_lines_name_real_ops():
    unknown = sorted(set(_claimed_ops()) - set(REGISTRY))
    assert not unknown, f"TESTED_OPS names that are not registered ops: {unknown}"


def test_registered_functions_are_exported_and_methods_attached():
    for name, info in REGISTRY.items():
        if info.method:
            assert callable(getattr(dg.Tensor, info.method)), name
        if info.inplace:
            assert callable(getattr(dg.Tensor, info.inplace)), name
    from dynagrad.ops.registry import FUNCTIONS
    for name in FUNCTIONS:
        assert callable(getattr(dg, name)), name
