"""Reverse-mode autodiff: the engine, grad modes, custom Functions and gradient checks."""
from . import functional, grad_mode  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, Node
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "Node", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "gradcheck", "gradgradcheck", "GradcheckError",
           "detect_anomaly", "set_detect_anomaly"]
