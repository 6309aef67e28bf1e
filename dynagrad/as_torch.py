"""Run an unmodified PyTorch script on dynagrad: ``python -m dynagrad.as_torch SCRIPT [ARGS]``.

``import torch`` then gives the ``dynagrad`` package itself, and ``torch.X.Y`` gives the module
``dynagrad.X.Y`` (the same module object, never a copy). PyTorch's deeper file layout, where
dynagrad has no file of that name (``torch.nn.modules.sparse``, ``torch.optim.adamw``,
``torch.utils.data.distributed`` ...), gets an alias module whose attributes are looked up in the
nearest dynagrad package above it and then in that package's parents, down to (not including)
``dynagrad`` itself: ``torch.nn.modules.sparse.Embedding is dynagrad.nn.Embedding``. A real
module on such a path also answers, from the same packages, the names PyTorch keeps there and
dynagrad keeps elsewhere (``torch.nn.modules.activation.MultiheadAttention``; only under
``torch.nn.modules``, ``torch.optim``, ``torch.utils.data`` and ``torch.distributions``). A path with no
dynagrad package above it (``torch.onnx``) is not found.

The script runs as ``python SCRIPT ARGS`` would run it: ``__name__ == "__main__"``, its folder
first on ``sys.path`` and ``sys.argv == [SCRIPT, *ARGS]``. When it reaches something dynagrad
lacks (an import, or an attribute of a ``torch`` module or tensor) it stops with one line on
stderr naming the missing API and the script line that used it, and exit status 1; any other
error prints its usual traceback.

In a notebook, ``dynagrad.as_torch.install()`` sets up the same ``import torch`` (and
``uninstall()`` takes it down again).

Example:
    >>> import dynagrad.as_torch as at
    >>> at.install()
    >>> import torch.nn.modules.linear
    >>> import dynagrad
    >>> torch.nn.modules.linear.Linear is dynagrad.nn.Linear
    True
    >>> at.uninstall()
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import runpy
import sys
import types

__all__ = ["install", "run_script", "uninstall"]

_ROOT = "dynagrad"
# packages whose modules, in PyTorch, hold names that dynagrad keeps in another file of the same
# package: a real dynagrad module under one of these also answers names from the packages above it
_LAYOUT = ("dynagrad.nn.modules.", "dynagrad.optim.", "dynagrad.utils.data.",
           "dynagrad.distributions.")
_HERE = os.path.dirname(os.path.abspath(__file__))  # the dynagrad package folder


def _to_dg(name: str) -> str:
    return _ROOT + name[len("torch"):]


def _to_torch(name: str) -> str:
    """``dynagrad.nn.functional`` -> ``torch.nn.functional`` (other names unchanged)."""
    if name == _ROOT or name.startswith(_ROOT + "."):
        return "torch" + name[len(_ROOT):]
    return name


def _real_module(dg_name: str):
    """The dynagrad module of that name, or None where dynagrad has no such file."""
    if dg_name in sys.modules:
        return sys.modules[dg_name]
    try:
        if importlib.util.find_spec(dg_name) is None:
            return None
    except ImportError:  # a parent is not a package
        return None
    return importlib.import_module(dg_name)


def _fallbacks(dg_name: str) -> list:
    """The dynagrad packages above ``dg_name`` that exist, nearest first, ``dynagrad`` excluded."""
    parts = dg_name.split(".")
    found = []
    for i in range(len(parts) - 1, 1, -1):
        mod = _real_module(".".join(parts[:i]))
        if mod is not None and hasattr(mod, "__path__"):
            found.append(mod)
    return found


def _lookup(owner: str, spaces: list, attr: str):
    for space in spaces:
        if attr in vars(space):
            return vars(space)[attr]
    raise AttributeError(f"module {owner!r} has no attribute {attr!r}", name=attr)


class _AliasModule(types.ModuleType):
    """A PyTorch module path that dynagrad has no file for: its names come from ``_spaces``."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _lookup(self.__name__, self.__dict__["_spaces"], attr)

    def __dir__(self):
        names = set(super().__dir__())
        for space in self.__dict__["_spaces"]:
            names.update(n for n in vars(space) if not n.startswith("_"))
        return sorted(names)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``torch`` and ``torch.*`` imports with dynagrad's modules (see the module doc)."""

    def __init__(self):
        self.patched = []  # (module, had its own __getattr__?) to undo in uninstall
        self.added = []  # (parent module, attribute) set by the import system on our parents

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("torch."):
            return None
        dg_name = _to_dg(fullname)
        real = _real_module(dg_name)
        if real is None and not _fallbacks(dg_name):
            raise ModuleNotFoundError(f"No module named {fullname!r} (dynagrad has no "
                                      f"{fullname})", name=fullname)
        is_pkg = real is not None and hasattr(real, "__path__")
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_pkg)

    def create_module(self, spec):
        dg_name = _to_dg(spec.name)
        parent, _, child = spec.name.rpartition(".")
        parent_mod = sys.modules.get(parent)
        if parent_mod is not None and child not in vars(parent_mod):
            self.added.append((parent_mod, child))
        real = _real_module(dg_name)
        spaces = _fallbacks(dg_name)
        if real is None:
            mod = _AliasModule(spec.name, f"PyTorch's {spec.name}, answered by dynagrad")
            mod._spaces = spaces
            return mod
        if spaces and dg_name.startswith(_LAYOUT) and "__getattr__" not in vars(real):
            # PyTorch keeps some names in this file that dynagrad keeps elsewhere in the package
            def fallback(attr, _name=real.__name__, _spaces=spaces):
                return _lookup(_name, _spaces, attr)
            real.__getattr__ = fallback
            self.patched.append(real)
        return real

    def exec_module(self, module):
        pass  # the module is dynagrad's, already executed


_STATE: dict = {"finder": None}


def install() -> None:
    """Make ``import torch`` (and every ``torch.*`` path dynagrad provides) give dynagrad."""
    if _STATE["finder"] is not None:
        return
    root = importlib.import_module(_ROOT)
    finder = _Finder()
    _STATE["finder"] = finder
    _STATE["saved"] = {k: v for k, v in sys.modules.items()
                       if k == "torch" or k.startswith("torch.")}
    for k in _STATE["saved"]:
        del sys.modules[k]
    sys.modules["torch"] = root
    sys.meta_path.insert(0, finder)


def uninstall() -> None:
    """Undo ``install()``: ``import torch`` finds PyTorch (if installed) again."""
    finder = _STATE["finder"]
    if finder is None:
        return
    sys.meta_path.remove(finder)
    for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[k]
    sys.modules.update(_STATE.pop("saved"))
    for mod in finder.patched:
        del mod.__getattr__
    for parent, child in finder.added:
        vars(parent).pop(child, None)
    _STATE["finder"] = None


# --- running a script --------------------------------------------------------------------------

_MISSING_NAME = re.compile(r"cannot import name '([^']+)' from '([^']+)'")


def _missing_api(exc: BaseException) -> str | None:
    """The torch name ``exc`` says is missing, or None when ``exc`` is not about a missing API."""
    if isinstance(exc, ImportError):
        m = _MISSING_NAME.search(str(exc))
        if m and m.group(2).startswith(("torch", _ROOT)):
            return f"{_to_torch(m.group(2))}.{m.group(1)}"
        if exc.name and (exc.name == "torch" or exc.name.startswith(("torch.", _ROOT + "."))):
            return _to_torch(exc.name)
        return None
    if isinstance(exc, AttributeError) and getattr(exc, "name", None):
        obj = getattr(exc, "obj", None)
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith(("torch", _ROOT)):
            return f"{_to_torch(obj.__name__)}.{exc.name}"
        # an object of a dynagrad class (not of a script's subclass, whose missing attribute is
        # the script's own bug) or a dynagrad class itself
        cls = obj if isinstance(obj, type) else type(obj)
        if cls.__module__.startswith(_ROOT):
            owner = "torch.Tensor" if cls is sys.modules[_ROOT].Tensor else \
                f"{_to_torch(cls.__module__)}.{cls.__qualname__}"
            return f"{owner}.{exc.name}"
    return None


def _user_frame(tb):
    """The innermost frame of the script's own code, when every frame below it is the import
    machinery or this module (so the error is the script's use of a missing API, not a fault
    inside dynagrad)."""
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    for i in range(len(frames) - 1, -1, -1):
        fname = frames[i][0]
        if fname.startswith("<frozen") or os.path.abspath(fname) == os.path.abspath(__file__):
            continue
        if os.path.abspath(fname).startswith(_HERE + os.sep):
            return None  # raised inside dynagrad: a real traceback is more useful
        return frames[i]
    return None


def run_script(script: str, args: list[str]) -> int:
    """Run ``script`` as ``__main__`` with ``import torch`` answered by dynagrad; the exit status."""
    path = os.path.abspath(script)
    if not os.path.exists(path):
        print(f"dynagrad.as_torch: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(path)  # as `python SCRIPT` puts it
    install()
    try:
        runpy.run_path(path, run_name="__main__")
    except (ImportError, AttributeError) as exc:
        missing, where = _missing_api(exc), _user_frame(exc.__traceback__)
        if missing is None or where is None:
            raise
        print(f"dynagrad.as_torch: {where[0]}:{where[1]}: {missing} is not provided by "
              f"dynagrad ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m dynagrad.as_torch SCRIPT [ARGS ...]", file=sys.stderr)
        return 2
    return run_script(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main())
