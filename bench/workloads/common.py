"""What every in-process workload shares: the frameworks, seeded data, weight copying."""
from __future__ import annotations

import numpy as np

import dynagrad as dg

try:
    import torch
    torch.set_num_threads(2)  # the machine has 2 cores; PyTorch's default may differ
except ImportError:  # the suite still measures dynagrad and NumPy
    torch = None


def namespaces() -> dict:
    """``{framework: (tensor module, nn module)}`` for the frameworks whose APIs match."""
    spaces = {"dynagrad": (dg, dg.nn)}
    if torch is not None:
        spaces["torch"] = (torch, torch.nn)
    return spaces


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def labels(n: int, classes: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, n).astype(np.int64)


def as_tensors(fw: str, *arrays: np.ndarray) -> list:
    """The same arrays as ``fw`` tensors (copies, so frameworks never share a buffer)."""
    mod = dg if fw == "dynagrad" else torch
    return [mod.tensor(a.copy()) for a in arrays]


def copy_weights(src, dst) -> None:
    """Load a dynagrad module's state into its PyTorch twin (names match PyTorch's)."""
    dst.load_state_dict({k: torch.tensor(v.detach().numpy().copy())
                         for k, v in src.state_dict().items()})


def check_close(name: str, ours, theirs, rtol: float = 1e-3, atol: float = 1e-4) -> None:
    """Fail the workload when the two frameworks do not compute the same thing."""
    a = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    b = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    if not np.allclose(a, b, rtol=rtol, atol=atol):
        raise AssertionError(f"{name}: dynagrad and PyTorch disagree "
                             f"(max abs diff {np.max(np.abs(a - b)):.3g})")
