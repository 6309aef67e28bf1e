"""dynagrad.nn.functional: the functional form of every layer, activation and loss.

Development scaffold: each submodule below exports ``__all__`` and is re-exported here.
"""
import importlib as _importlib
import importlib.util as _util

from ...ops.movement import pad  # noqa: F401  (torch.nn.functional.pad)

_SUBMODULES = ["linear", "activation", "loss", "conv", "pooling", "norm", "misc", "rnn", "attention"]
for _name in _SUBMODULES:
    if _util.find_spec(f"{__name__}.{_name}") is not None:
        _mod = _importlib.import_module(f"{__name__}.{_name}")
        globals().update({k: getattr(_mod, k) for k in getattr(_mod, "__all__", ())})
