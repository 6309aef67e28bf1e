"""dynagrad.nn: layers, losses and containers with PyTorch's names and semantics.

Development scaffold: each submodule below exports ``__all__`` and is re-exported here.
"""
import importlib as _importlib
import importlib.util as _util

_SUBMODULES = ["parameter", "module", "modules.container", "modules.linear", "modules.activation",
               "modules.loss", "modules.conv", "modules.pooling", "modules.norm",
               "modules.dropout", "modules.embedding", "modules.upsample", "modules.rnn",
               "modules.attention", "modules.transformer"]
for _name in _SUBMODULES:
    if _util.find_spec(f"{__name__}.{_name}") is not None:
        _mod = _importlib.import_module(f"{__name__}.{_name}")
        globals().update({k: getattr(_mod, k) for k in getattr(_mod, "__all__", ())})
from . import functional, init, utils  # noqa: E402,F401
