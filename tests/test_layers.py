"""The layers' import rules, checked on the source (ARCHITECTURE.md, "Layers").

An AST scan of every module under ``dynagrad/`` (imports inside functions included; docstrings
are not code) fails when
- ``kernels/`` imports anything above it: it may use only itself, ``_runtime`` and the base
  modules (dtypes, device, errors, shapes, determinism);
- ``autograd/`` imports the ops;
- ``nn/`` or ``optim/`` import the kernels (they reach them through ops);
- any module imports the package root (``import dynagrad`` or a name from its namespace).
Each exception below names the module and why it is one. The targets of ``kernels.backend`` are
checked against its contract too.
"""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dynagrad"
BASE = {"dtypes", "device", "errors", "shapes", "determinism", "_runtime"}

# module -> the imported top-level parts it may use although its rule forbids them, and why
EXCEPTIONS = {
    # an entry point that nothing imports: its ``warmup`` command runs ops to fill the cache
    "dynagrad.kernels.__main__": {"_warmup"},
    # fused optimizer updates are a kernel family of their own: one generated kernel per
    # parameter and step, run with no graph to record, so an op would be a layer with no job
    "dynagrad.optim.optimizer": {"kernels"},
}


def _modules(package: Path = PACKAGE):
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path.name == "__init__.py", path


def _import_nodes(tree, module_level_only: bool):
    """The import statements of ``tree``; with ``module_level_only``, those that run when the
    module is imported (not inside functions, nor under ``if TYPE_CHECKING``)."""
    if not module_level_only:
        yield from (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
        return
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
                isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test)):
            continue
        else:
            for field in ("body", "orelse", "handlers", "finalbody", "items"):
                stack.extend(n for n in getattr(node, field, ()) if isinstance(n, ast.AST))


def _imports(name: str, is_package: bool, path: Path, module_level_only: bool = False):
    """``(line, absolute module, imported names)`` of every import in the module."""
    tree = ast.parse(path.read_text())
    package = name.split(".") if is_package else name.split(".")[:-1]
    for node in _import_nodes(tree, module_level_only):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif node.module != "__future__":
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            yield node.lineno, module, tuple(a.name for a in node.names)


def _targets(module: str, names: tuple, package: Path = PACKAGE):
    """The dynagrad modules an import reaches: ``from pkg import sub`` reaches ``pkg.sub``."""
    if module != "dynagrad" and not module.startswith("dynagrad."):
        return []
    folder = package.parent
    subs = [f"{module}.{n}" for n in names
            if (folder / f"{module}.{n}".replace(".", "/")).with_suffix(".py").exists()
            or (folder / f"{module}.{n}".replace(".", "/") / "__init__.py").exists()]
    return subs or [module]


def _violations(package: Path = PACKAGE):
    found = []
    for name, is_package, path in _modules(package):
        layer = name.split(".")[1] if "." in name else ""
        allowed_extra = EXCEPTIONS.get(name, set())
        for line, module, names in _imports(name, is_package, path):
            where = f"{path.relative_to(package.parent)}:{line}"
            if module == "dynagrad" and not names:
                found.append(f"{where} imports the package root")
                continue
            for target in _targets(module, names, package):
                if target == "dynagrad":
                    found.append(f"{where} imports {', '.join(names)} from the package root")
                    continue
                part = target.split(".")[1]
                if part in allowed_extra or part == layer:
                    continue
                if layer == "kernels" and part not in BASE:
                    found.append(f"{where}: kernels imports {target}")
                elif layer == "autograd" and part == "ops":
                    found.append(f"{where}: autograd imports {target}")
                elif layer in ("nn", "optim") and part == "kernels":
                    found.append(f"{where}: {layer} imports {target}")
    return found


def test_layers_import_only_downwards():
    found = _violations()
    assert not found, "import rules broken (see ARCHITECTURE.md):\n" + "\n".join(found)


def test_exceptions_are_still_needed():
    # an exception nobody uses any more is a rule that silently stopped being checked
    used = {name: set() for name in EXCEPTIONS}
    for name, is_package, path in _modules():
        if name not in EXCEPTIONS:
            continue
        for _, module, names in _imports(name, is_package, path):
            for target in _targets(module, names):
                if "." in target:
                    used[name].add(target.split(".")[1])
    for name, parts in EXCEPTIONS.items():
        assert parts <= used[name], f"{name} no longer imports {parts - used[name]}"


def test_the_scan_sees_each_kind_of_violation(tmp_path):
    fake = tmp_path / "dynagrad"
    for folder in ("kernels", "autograd", "nn"):
        (fake / folder).mkdir(parents=True)
        (fake / folder / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "ops.py").write_text("import dynagrad\n")
    (fake / "kernels" / "bad.py").write_text("def f():\n    from ..ops import add\n")
    (fake / "autograd" / "bad.py").write_text("from dynagrad import ops\n")
    (fake / "nn" / "bad.py").write_text("from ..kernels import bad\nfrom .. import tensor_fn\n")
    found = "\n".join(_violations(fake))
    assert "kernels/bad.py:2: kernels imports dynagrad.ops" in found, found
    assert "autograd/bad.py:1: autograd imports dynagrad.ops" in found, found
    assert "nn/bad.py:1: nn imports dynagrad.kernels.bad" in found, found
    assert "nn/bad.py:2 imports tensor_fn from the package root" in found, found
    assert "ops.py:1 imports the package root" in found, found


def _unit(module: str) -> str:
    """The part of the package a module belongs to for the circle check: an op family or nn
    package by its own name, else the top-level module or package."""
    parts = module.split(".")
    return ".".join(parts[1:3]) if len(parts) > 2 and parts[1] in ("ops", "nn") else parts[1]


def _circles():
    """The strongly connected groups (of two or more units) of module-level imports."""
    edges = {}
    for name, is_package, path in _modules():
        if name.endswith(".__main__") or name == "dynagrad":  # entry points and the public root
            continue
        for _, module, names in _imports(name, is_package, path, module_level_only=True):
            for target in _targets(module, names):
                if target != "dynagrad" and _unit(name) != _unit(target):
                    edges.setdefault(_unit(name), set()).add(_unit(target))
    reach = {}
    for start in edges:  # (a few dozen units: a search from each is cheap)
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    return {frozenset(u for u in reach if u in reach[start] and start in reach[u]) | {start}
            for start in reach if start in reach[start]}


def test_module_level_imports_form_no_circle_but_the_op_families():
    # Circles closed by imports inside functions (Tensor <-> autograd <-> creation) are the
    # natural ones ARCHITECTURE.md lists; at import time only the op families compose each other
    families = frozenset({"ops.elementwise", "ops.indexing", "ops.movement", "ops.placement",
                          "ops.reduce"})
    circles = _circles()
    assert all(c <= families for c in circles), [sorted(c) for c in circles]


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_each_target_implements_the_backend_contract(target):
    from dynagrad.kernels import backend
    module = backend.cpu if target == "cpu" else backend.cuda
    reference = inspect.signature(getattr(backend.cpu, "elementwise")).parameters
    assert list(reference) == ["expr", "kinds", "types", "out_type", "operands", "out", "params"]
    for family in backend.FAMILIES:
        fn = getattr(module, family, None)
        assert callable(fn), f"kernels.{target}.backend lacks the family {family}"
        other = getattr(backend.cuda if target == "cpu" else backend.cpu, family)
        assert list(inspect.signature(fn).parameters) == \
            list(inspect.signature(other).parameters), family
