"""Two-level kernel cache: generated source -> Numba dispatcher, in memory and on disk.

Every kernel is a small generated Python module. Its file name is a hash of everything that changes
the compiled code (the source itself, the helper modules it imports, dynagrad's kernel ABI, Numba's
version), so a stale entry can never be picked up. Numba's own ``cache=True`` stores the machine
code next to it;
one file per specialization plus a per-file lock keeps concurrent processes from corrupting a shared
index (numba#10128).

Example:
    >>> import dynagrad as dg
    >>> sorted(dg.kernels.cache_stats())[:3]
    ['compile_seconds', 'compiles', 'disk_load_seconds']
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numba

from .._runtime.gc import collection_paused

KERNEL_ABI = "1"  # bump when the calling convention of generated kernels changes

_memory: dict = {}          # key -> compiled dispatcher
_stats = {"hits": 0, "misses": 0, "compiles": 0, "disk_loads": 0,
          "compile_seconds": 0.0, "disk_load_seconds": 0.0}
# Hits of the elementwise hot paths, which run on every small op: a list item increments
# faster than a dict entry. ``cache_stats`` adds them to "hits".
hot_hits = [0]
# Modules whose code compiles into the kernels that import them (scalar libraries, GEMM tiles,
# intrinsics) declare themselves with ``compiled_into_kernels``; a kernel's key holds the source of
# each such module its generated source imports, so editing one recompiles the kernels using it.
_HELPERS: dict = {}  # module name -> hash of its source (and of the modules it takes code from)
_IMPORTS = re.compile(r"^from (dynagrad(?:\.\w+)+) import", re.M)


def cache_dir() -> Path:
    """Where kernel sources and Numba's machine code live (``DYNAGRAD_CACHE_DIR``)."""
    root = os.environ.get("DYNAGRAD_CACHE_DIR") or os.path.join(Path.home(), ".cache", "dynagrad")
    return Path(root) / f"numba-{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"


def cache_stats() -> dict:
    """Counters since the process started (or since ``reset_stats``): hits, misses, compiles,
    disk_loads, compile_seconds, disk_load_seconds, and ``kernels`` held in memory."""
    return dict(_stats, hits=_stats["hits"] + hot_hits[0], kernels=len(_memory))


def reset_stats() -> None:
    for k in _stats:
        _stats[k] = 0.0 if k.endswith("seconds") else 0
    hot_hits[0] = 0


_clear_hooks: list = []  # callables that drop references to kernels held outside _memory


def clear_cache(disk: bool = True) -> None:
    """Forget every compiled kernel in this process and, with ``disk=True``, delete the disk cache."""
    _memory.clear()
    for hook in _clear_hooks:
        hook()
    if disk:
        shutil.rmtree(cache_dir(), ignore_errors=True)


def compiled_into_kernels(name: str, *takes_code_from: str) -> None:
    """Declare module ``name`` (call it with ``__name__``) as code that compiles into the kernels
    importing it; ``takes_code_from`` names modules whose functions it compiles in as well."""
    files = [sys.modules[n].__file__ for n in (name, *takes_code_from)]
    _HELPERS[name] = hashlib.sha256(b"".join(Path(f).read_bytes() for f in files)).hexdigest()[:16]


def _helpers_fingerprint(source: str) -> str:
    """The hashes of the declared helper modules ``source`` imports."""
    names = sorted(set(_IMPORTS.findall(source)))
    for name in names:
        if name not in _HELPERS:
            importlib.import_module(name)  # a helper declares itself when it is imported
    return ",".join(_HELPERS[name] for name in names if name in _HELPERS)


def _log(msg: str) -> None:
    if os.environ.get("DYNAGRAD_LOG_COMPILE"):
        print(f"[dynagrad.kernels] {msg}", file=sys.stderr)


def lookup(key: tuple, build: Callable[[], tuple], target: str = "cpu"):
    """The dispatcher for ``key``, building it on the first request.

    ``build()`` returns ``(source, function_name, argument_types, description)``; with a tuple of
    function names and one of argument types, the dispatchers of those functions of the one
    module come back as a tuple (the helpers they share then compile once). Hot paths call
    ``_memory.get(key)`` themselves and come here only on a miss. ``target="cuda"`` compiles a
    ``cuda.jit`` kernel for the current GPU; its disk entry is keyed by ``cuda_arch()`` too (the
    caller puts that in ``key`` as well).
    """
    disp = _memory.get(key)
    if disp is not None:
        _stats["hits"] += 1
        return disp
    _stats["misses"] += 1
    with collection_paused():  # a load or compile's objects mostly live on (see _gc)
        source, fname, signature, what = build()
        disp = _load_or_compile(source, fname, signature, what, target)
    _memory[key] = disp
    return disp


_cuda_facts: list = []  # [arch tag, numba-cuda version], filled on first use


def cuda_arch() -> str:
    """The current GPU's compute capability as a tag (``"sm_90"``); ``"sim"`` under the simulator.

    Taken once per process: every GPU in a process is assumed to share one architecture.
    """
    if not _cuda_facts:
        from importlib.metadata import version

        from numba import cuda
        from numba.cuda.core import config
        if config.ENABLE_CUDASIM:
            arch = "sim"
        else:
            major, minor = cuda.get_current_device().compute_capability
            arch = f"sm_{major}{minor}"
        _cuda_facts.extend((arch, version("numba-cuda")))
    return _cuda_facts[0]


def _load_or_compile(source: str, fname: str, signature: str, what: str, target: str = "cpu"):
    parts = (source, str(signature), KERNEL_ABI, numba.__version__, _helpers_fingerprint(source))
    if target == "cuda":
        cuda_arch()
        parts += tuple(_cuda_facts)
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"k_{digest}.py"
    with open(folder / f"k_{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process at a time writes/compiles this kernel
        try:
            return _import_and_compile(path, source, fname, signature, what, digest, target)
        except Exception as exc:  # a corrupted entry: discard it and build afresh, once
            if isinstance(exc, numba.core.errors.NumbaError) or (
                    isinstance(exc, RuntimeError) and "DYNAGRAD_FORBID_COMPILE" in str(exc)):
                raise  # a bug in the generated source or a refused compile: not corruption
            _log(f"discarding corrupted cache entry for {what}: {exc!r}")
            _discard(path)
            return _import_and_compile(path, source, fname, signature, what, digest, target)


def _discard(path: Path) -> None:
    path.unlink(missing_ok=True)
    pycache = path.parent / "__pycache__"
    if pycache.is_dir():
        for f in pycache.glob(path.stem + ".*"):
            f.unlink(missing_ok=True)


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _import_and_compile(path, source, fname, signature, what, digest, target="cpu"):
    try:
        on_disk = path.read_text()
    except (OSError, UnicodeDecodeError):
        on_disk = None
    if on_disk != source:
        if on_disk is not None:
            _log(f"source of {what} on disk differs from its hash: rewriting")
            _discard(path)
        _write_atomic(path, source)
    spec = importlib.util.spec_from_file_location(f"dynagrad_kernel_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Numba's disk cache rebuilds globals by module name
    spec.loader.exec_module(module)
    if target == "cuda":
        return _compile_cuda(getattr(module, fname), signature, what, path)
    if isinstance(fname, str):
        return _compile_cpu(getattr(module, fname), signature, what, path)
    # several functions of one module: helpers they share compile once
    return tuple(_compile_cpu(getattr(module, name), sig, f"{what} ({name})", path)
                 for name, sig in zip(fname, signature))


def _compile_cpu(disp, signature, what: str, path: Path):
    """Compile (or load from Numba's disk cache) ``disp`` for its one ``signature``."""
    if os.environ.get("DYNAGRAD_FORBID_COMPILE", "") not in ("", "0"):
        def refuse(*args, **kwargs):
            raise RuntimeError(f"DYNAGRAD_FORBID_COMPILE is set but kernel {what} "
                               f"({path.name}) is not in the disk cache and would compile")
        disp._compiler.compile = refuse
    t0 = time.perf_counter()
    disp.compile(signature)
    _count(disp, time.perf_counter() - t0, what)
    disp.disable_compile()  # other layouts convert to the one signature instead of compiling
    return disp


def _count(disp, seconds: float, what: str) -> None:
    """Book a first compile of ``disp`` as a disk load or a compile (Numba knows which)."""
    if sum(disp.stats.cache_hits.values()):
        _stats["disk_loads"] += 1
        _stats["disk_load_seconds"] += seconds
    else:
        _stats["compiles"] += 1
        _stats["compile_seconds"] += seconds
        _log(f"compiled {what} in {seconds:.2f}s (not in the disk cache)")


def _compile_cuda(disp, signature, what: str, path: Path):
    """Compile (or load from Numba's disk cache) a ``cuda.jit`` kernel for ``signature``."""
    if _cuda_facts[0] == "sim":  # simulated kernels are Python functions: nothing to compile
        _stats["compiles"] += 1
        return disp
    forbid = os.environ.get("DYNAGRAD_FORBID_COMPILE", "") not in ("", "0")
    if forbid:
        disp.disable_compile()  # a disk-cache miss then raises instead of compiling
    t0 = time.perf_counter()
    try:
        disp.compile(signature)
    except RuntimeError as exc:
        if forbid and "Compilation disabled" in str(exc):
            raise RuntimeError(f"DYNAGRAD_FORBID_COMPILE is set but CUDA kernel {what} "
                               f"({path.name}) is not in the disk cache and would "
                               f"compile") from None
        raise
    _count(disp, time.perf_counter() - t0, f"CUDA {what} for {_cuda_facts[0]}")
    # Kernels launch through a ``cuda_launch.Launcher``; the few it cannot pack go through this
    # dispatcher, left as numba's own ``specialize()`` leaves one: one signature, launched without
    # matching argument types on every call. Arrays then pass by shape and strides whatever layout
    # numba would type them as (a C-contiguous array for an "A" parameter), and scalars convert
    # to the declared type. (Matching costs microseconds a launch, and numba-cuda 0.30's search
    # for a conversion fails on CUDA overloads: "'_Kernel' has no attribute 'objectmode'".)
    disp.disable_compile()
    disp._specialized = True
    from .cuda.launch import launcher
    return launcher(disp, what)
