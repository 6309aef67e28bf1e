"""The glue to numba-cuda: loading it lazily, availability, device ordinals and contexts.

Nothing here runs at ``import dynagrad``: ``numba.cuda`` takes about a second to start, so it is
imported the first time a function needs it. Under ``NUMBA_ENABLE_CUDASIM=1`` (set before numba.cuda
is imported) numba-cuda's simulator stands in for a GPU: one device, kernels run as Python threads.

Example:
    >>> from dynagrad.kernels.cuda import runtime as _runtime
    >>> isinstance(_runtime.is_available(), bool)
    True
"""
from __future__ import annotations

from ...device import device as _device

_HOW_TO_FIX = ("install numba-cuda with the CUDA toolkit wheels matching your driver "
               "(pip install 'numba-cuda[cu12]' or 'numba-cuda[cu13]') on a machine with an NVIDIA "
               "GPU and driver, or set NUMBA_ENABLE_CUDASIM=1 before importing dynagrad to run "
               "CUDA code on numba's (slow) simulator; use device='cpu' otherwise")

_state: dict = {}  # "cuda": the numba.cuda module or None, "why": the reason it is unusable


def _load() -> None:
    """Import numba.cuda once and record whether a device (or the simulator) can be used."""
    try:
        from numba import cuda
        from numba.cuda.core import config  # numba-cuda's (Numba's own old CUDA target lacks it)
    except Exception as err:  # not installed, or its CUDA bindings are missing
        _state.update(cuda=None, why=f"numba-cuda is not installed or could not be imported "
                                     f"({err})", sim=False)
        return
    try:
        ok = bool(cuda.is_available())
    except Exception as err:  # a broken driver must read as "not available", not crash
        ok, why = False, str(err)
    else:
        why = "" if ok else _driver_error(cuda)
    _state.update(cuda=cuda if ok else None, why=why, sim=ok and bool(config.ENABLE_CUDASIM))


def _driver_error(cuda) -> str:
    """numba's reason the driver did not start, on one line."""
    err = getattr(cuda, "cuda_error", lambda: None)()
    text = " ".join(str(err).split()) if err else ""
    return f"no usable NVIDIA GPU or driver was found ({text})" if text else \
        "no usable NVIDIA GPU or driver was found"


def is_available() -> bool:
    """True when numba-cuda can run kernels: a GPU with its driver, or the simulator."""
    if not _state:
        _load()
    return _state["cuda"] is not None


def require(op: str):
    """The numba.cuda module, or a RuntimeError naming ``op`` and how to get CUDA working."""
    if not _state:
        _load()
    cuda = _state["cuda"]
    if cuda is None:
        raise RuntimeError(f"{op}: CUDA is not available: {_state['why']}. To fix: {_HOW_TO_FIX}")
    return cuda


def is_simulator() -> bool:
    """True when numba-cuda runs its simulator instead of a GPU (NUMBA_ENABLE_CUDASIM=1)."""
    if not _state:
        _load()
    return _state["sim"]


def device_count() -> int:
    """How many CUDA devices numba-cuda sees (0 without CUDA)."""
    count = _state.get("count")
    if count is None:
        count = _state["count"] = len(_state["cuda"].gpus) if is_available() else 0
    return count


def current_index(op: str = "current_device") -> int:
    """The calling thread's current device ordinal (device 0 until one is selected)."""
    cuda = require(op)
    if device_count() == 1:  # the common case needs no driver query
        return 0
    active = cuda.gpus.current  # the top of this thread's context stack, or None
    return 0 if active is None else int(active.id)


def check_index(index: int, op: str) -> int:
    """``index`` if it names an existing device, else a RuntimeError naming ``op``."""
    count = device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"{op}: invalid CUDA device ordinal {index} (this machine has "
                           f"{count} CUDA device{'' if count == 1 else 's'}: valid ordinals are "
                           f"0..{count - 1})")
    return index


def resolve(dev, op: str) -> int:
    """A device argument as an ordinal: ``None``/``"cuda"`` -> current, ``"cuda:N"``/``N`` -> N."""
    require(op)
    if dev is None:
        return current_index(op)
    if isinstance(dev, int) and not isinstance(dev, bool):
        return check_index(dev, op)
    d = dev if isinstance(dev, _device) else _device(dev) if isinstance(dev, str) else None
    if d is None:
        raise TypeError(f"{op}: expected a device like 'cuda', 'cuda:0', 0 or dg.device('cuda:0'), "
                        f"got {dev!r}")
    if d.type != "cuda":
        raise ValueError(f"{op}: expected a CUDA device, got {d}")
    return current_index(op) if d.index is None else check_index(d.index, op)


def set_current(index: int) -> None:
    """Make device ``index`` current for this thread (its primary context on top of the stack)."""
    cuda = require("set_device")
    if is_simulator() or current_index("set_device") == index:
        return  # the simulator has one device; selecting the current one changes nothing
    from numba.cuda.cudadrv.driver import driver
    # Replace the top of the context stack rather than pushing, so repeated set_device calls do
    # not grow the stack; a context pushed by the user below the top stays where it is.
    if cuda.gpus.current is not None:
        driver.pop_active_context()
    cuda.select_device(index)
