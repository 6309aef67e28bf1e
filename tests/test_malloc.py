"""glibc malloc tuning at import (dynagrad._runtime.malloc): a 20 MiB buffer comes from the
reusable heap, not from fresh mapped pages, unless the user opts out; the user's own malloc settings win."""
import ctypes
import json
import os
import subprocess
import sys

import pytest

from dynagrad._runtime import malloc as _malloc


def _glibc_with_mallinfo2() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2")
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _glibc_with_mallinfo2(), reason="glibc >= 2.33 (mallinfo2)")

# bytes glibc holds in mapped blocks before and after allocating a 20 MiB array
_PROBE = """
import ctypes, json, numpy as np, dynagrad
from dynagrad._runtime import malloc as _malloc
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
before = libc.mallinfo2().hblkhd
a = np.ones(20 << 18, np.float32)
from dynagrad.kernels.cpu import memory
print(json.dumps({"tuned": _malloc.TUNED, "mapped": libc.mallinfo2().hblkhd - before,
                  "pool_min": memory.POOL_MIN_BYTES}))
"""


def _probe(**env) -> dict:
    full = {k: v for k, v in os.environ.items()
            if k not in ("DYNAGRAD_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_",
                         "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=full, text=True,
                         capture_output=True, check=True).stdout
    return json.loads(out)


def test_import_keeps_large_buffers_on_the_heap():
    report = _probe()
    # ... and the memory pool leaves every block below the mmap threshold to malloc
    assert report == {"tuned": True, "mapped": 0, "pool_min": _malloc.MMAP_THRESHOLD_BYTES}
    assert _malloc.TUNED  # this test process imported dynagrad too


@pytest.mark.parametrize("env", [{"DYNAGRAD_MALLOC_TUNING": "0"},
                                 {"MALLOC_MMAP_THRESHOLD_": "131072"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}])
def test_opt_out_and_user_settings_leave_malloc_alone(env):
    report = _probe(**env)
    assert not report["tuned"]
    assert report["mapped"] >= 20 << 20  # glibc's default: a fresh mapping
    assert report["pool_min"] == 2 << 20  # so the memory pool takes blocks from 2 MiB
