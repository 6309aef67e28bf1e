"""The scalar functions op expressions call resolve on both targets, and the float functions'
table (kernels/float_functions.py) is what both scalar libraries export.

A static check: every name an elementwise expression calls (``fexp(x)``, ``clamp(x, lo, hi)``,
``math.sin(x)``, ``np.floor(x)``) must exist in the CPU kernels' namespace and in the CUDA one, so a
helper written for one target only fails here, on any machine, not first on a GPU.
"""
from __future__ import annotations

import ast
import math

import numpy as np
import pytest

from dynagrad.kernels import float_functions
from dynagrad.kernels.cpu import scalarlib as cpu_lib
from dynagrad.ops.elementwise import OPS


def _expressions():
    for op in OPS.values():
        yield from ((op.name, e) for e in op.exprs.values())
        if op.bounded is not None:
            yield from ((op.name, e) for e in op.bounded[1].values())


def _called_names(expr: str):
    """``(module or None, name)`` of every call in ``expr``: ``fexp(x)`` -> (None, "fexp")."""
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                yield None, f.id
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                yield f.value.id, f.attr


_BUILTINS = {"abs", "min", "max", "float", "int", "bool"}


def _resolves(namespace: dict, module, name) -> bool:
    if module is None:
        return name in namespace or name in _BUILTINS
    return module in namespace and hasattr(namespace[module], name)


def test_the_scan_finds_the_calls():
    assert set(_called_names("fexp(x) + math.sin(y) if np.floor(x) else clamp(x, lo, hi)")) == \
        {(None, "fexp"), ("math", "sin"), ("np", "floor"), (None, "clamp")}


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_every_name_an_op_expression_calls_resolves_on_both_targets(target):
    if target == "cpu":  # what a generated CPU kernel sees: ``from ...scalarlib import *``
        namespace = {"math": math, "np": np}
        namespace.update({k: getattr(cpu_lib, k) for k in dir(cpu_lib) if not k.startswith("_")})
    else:  # a generated CUDA kernel: ``from ...cuda.scalarlib import *`` (its __all__)
        from dynagrad.kernels.cuda import scalarlib as cuda_lib
        namespace = {k: getattr(cuda_lib, k) for k in cuda_lib.__all__}
    missing = sorted({f"{op}: {m + '.' if m else ''}{n}" for op, e in _expressions()
                      for m, n in _called_names(e) if not _resolves(namespace, m, n)})
    assert not missing, f"names op expressions call that {target} kernels lack: {missing}"


def test_both_libraries_export_every_row_and_nothing_else_by_that_prefix():
    from dynagrad.kernels.cuda import scalarlib as cuda_lib
    rows = {r.name for r in float_functions.ROWS}
    assert len(rows) == len(float_functions.ROWS)
    for row in float_functions.ROWS:
        assert callable(getattr(cpu_lib, row.name)), row.name
        assert row.name in cuda_lib.__all__, row.name
        assert row.float32 is None or callable(getattr(cpu_lib, row.float32)), row.float32


@pytest.mark.parametrize("row", float_functions.ROWS, ids=lambda r: r.name)
def test_each_rows_host_form_is_its_libm_expression(row):
    # the CUDA library's host form (what the simulator runs) against Python's math in float64
    from dynagrad.kernels.cuda import scalarlib as cuda_lib
    for v in (-2.5, -0.5, 0.25, 1.5):
        want = eval(row.libm, {"math": math, "x": v, "T": float,
                               "sigmoid": lambda t: 1 / (1 + math.exp(-t))})
        got = getattr(cuda_lib, row.name)(np.float64(v))
        assert got == pytest.approx(want, rel=1e-15, nan_ok=True), (row.name, v)
