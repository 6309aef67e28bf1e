"""``torch.backends.cuda``: ``matmul.allow_tf32`` is ``float32_matmul_precision != "highest"``
(setting it sets "high" or "highest"); the other flags are recorded with no effect."""
from __future__ import annotations

from .. import settings as _settings


def is_built() -> bool:
    """dynagrad always carries its CUDA backend (numba-cuda); ``dg.cuda.is_available()`` says
    whether a GPU can be used."""
    return True


class _Matmul:
    """``backends.cuda.matmul``: TF32 through the float32 matmul precision; the reduced-precision
    reduction flags are recorded only (dynagrad accumulates half-precision matmuls in float32)."""

    def __init__(self) -> None:
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _settings.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _settings.set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()

# scaled_dot_product_attention backends: recorded only (dynagrad has one implementation)
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def enable_flash_sdp(enabled: bool) -> None:
    _SDP["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _SDP["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    _SDP["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    _SDP["cudnn"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    return _SDP["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _SDP["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _SDP["math"]


def cudnn_sdp_enabled() -> bool:
    return _SDP["cudnn"]
