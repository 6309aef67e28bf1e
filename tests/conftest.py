"""Suite-wide set-up: without an NVIDIA GPU, CUDA code runs on Numba's simulator.

The simulator must be chosen before ``numba.cuda`` is first imported, so it is set here, before any
test module imports dynagrad. On a machine with a GPU (or with ``NUMBA_ENABLE_CUDASIM`` already set
either way) nothing changes: ``tests/cuda`` then runs on the real device.
"""
import os
import shutil


def _has_nvidia_gpu() -> bool:
    return os.path.exists("/dev/nvidiactl") or shutil.which("nvidia-smi") is not None


if "NUMBA_ENABLE_CUDASIM" not in os.environ and not _has_nvidia_gpu():
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
