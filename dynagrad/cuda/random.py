"""Seeding the CUDA random generators (PyTorch's ``torch.cuda.manual_seed`` names).

dynagrad draws CUDA random numbers from the same counter-based stream as the CPU, so one seed gives
the same numbers on both; these functions set the seeds of the per-GPU default generators. As in
PyTorch, calling them without CUDA is allowed: the seed is kept for when CUDA is first used.

Example:
    >>> import dynagrad as dg
    >>> dg.cuda.manual_seed_all(0)
"""
from __future__ import annotations

from ..kernels.cuda import runtime as _runtime

__all__ = ["manual_seed", "manual_seed_all"]


def _seed_cuda(op: str):
    from .. import random
    seed_cuda = getattr(random, "manual_seed_cuda", None)
    if seed_cuda is None:
        raise RuntimeError(f"{op}: this build has no CUDA generator to seed "
                           "(dynagrad.random.manual_seed_cuda is missing); use dg.manual_seed")
    return seed_cuda


def manual_seed(seed: int) -> None:
    """Seed the current GPU's default generator (every GPU's, kept for later, without CUDA).

    Example: ``dg.cuda.manual_seed(42)``.
    """
    seed_cuda = _seed_cuda("dg.cuda.manual_seed")
    if _runtime.is_available():
        seed_cuda(int(seed), _runtime.current_index("dg.cuda.manual_seed"))
    else:
        seed_cuda(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed the default generators of every GPU. Example: ``dg.cuda.manual_seed_all(42)``."""
    _seed_cuda("dg.cuda.manual_seed_all")(int(seed))
