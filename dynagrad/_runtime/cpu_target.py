"""How Numba compiles for this CPU, chosen before Numba is first imported.

LLVM's tuning for many AVX-512 Intel CPUs prefers 256-bit vectors (a hedge against the clock
drop of early AVX-512 parts); PyTorch's CPU kernels use the full 512 bits on the same machines.
Our vectorized transcendentals (float32 ``exp``/``tanh``/GELU) run markedly faster at 512 bits,
so where the CPU has AVX-512, dynagrad asks for it.

Set ``DYNAGRAD_PREFER_256_BIT=1`` to keep LLVM's choice; an explicit ``NUMBA_CPU_NAME`` or
``NUMBA_CPU_FEATURES`` is always respected, and nothing changes if Numba was imported first.

Example:
    >>> import os, dynagrad
    >>> "prefer-256-bit" not in os.environ.get("NUMBA_CPU_FEATURES", "") or \\
    ...     os.environ["NUMBA_CPU_FEATURES"].endswith(",-prefer-256-bit")
    True
"""
from __future__ import annotations

import os
import sys


def prefer_wide_vectors() -> None:
    """Let LLVM use 512-bit vectors on an AVX-512 CPU (sets ``NUMBA_CPU_FEATURES``)."""
    if ("numba" in sys.modules or "NUMBA_CPU_FEATURES" in os.environ
            or "NUMBA_CPU_NAME" in os.environ
            or os.environ.get("DYNAGRAD_PREFER_256_BIT", "") not in ("", "0")):
        return
    from llvmlite import binding
    features = binding.get_host_cpu_features()
    if features.get("avx512f"):
        os.environ["NUMBA_CPU_FEATURES"] = features.flatten() + ",-prefer-256-bit"


def compiles_for_avx512() -> bool:
    """Whether Numba generates AVX-512 code here (host CPU, or the features set in
    ``NUMBA_CPU_FEATURES``); a named ``NUMBA_CPU_NAME`` counts as no, to stay portable."""
    if os.environ.get("NUMBA_CPU_NAME", "host") != "host":
        return False
    features = os.environ.get("NUMBA_CPU_FEATURES")
    if features is not None:
        return "+avx512f" in features.split(",")
    from llvmlite import binding
    return bool(binding.get_host_cpu_features().get("avx512f"))
