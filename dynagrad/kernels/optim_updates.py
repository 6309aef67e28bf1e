"""Kernel templates for optimizer updates: one fused loop per parameter tensor.

Every kernel has the signature ``kernel(p, g, *buffers, *scalars)`` over 1-D contiguous arrays of
one floating dtype: ``p`` (the parameter, updated in place), ``g`` (its gradient, read-only) and the
optimizer's state buffers (updated in place). Scalars arrive already in the parameter's dtype, so a
float32 kernel does float32 arithmetic like PyTorch's CPU kernels. Bodies use no float literals
(a float64 literal would promote float32 arithmetic); every constant is a scalar argument.

The kernels specialize on the dtype and on the boolean options that change which buffers exist
(e.g. ``amsgrad``, ``centered``); options like ``maximize`` are runtime scalars (``sgn`` = +-1).

Example:
    >>> src, name, sig, what = update_kernel("adagrad", "float32")
    >>> name, len(sig)
    ('kernel', 7)
"""
from __future__ import annotations

from numba import types

from .cpu.templates import HEADER, NUMBA_TYPE, pooled_kernel

_DECORATOR = '@numba.njit(cache=True, nogil=True, error_model="numpy")\n'

# lerp(a, b, w) exactly as PyTorch's CPU kernel: the formula switches at w = 0.5 for accuracy;
# ``wc`` is 1 - w, computed once in double precision by the caller.
_LERP = "({a} + {w} * ({b} - {a}) if {w} < 0.5 else {b} - ({b} - {a}) * {wc})"


def _lerp(a: str, b: str, w: str, wc: str) -> str:
    return _LERP.format(a=a, b=b, w=w, wc=wc)


def _sgd(momentum: bool, nesterov: bool) -> tuple:
    buffers = ("buf",) if momentum else ()
    scalars = ("sgn", "wd", "lr", "mom", "omd") + (("first",) if momentum else ())
    body = ["g = sgn * g_[i] + wd * p[i]"]
    if momentum:  # the first step seeds the buffer with the gradient itself
        body += ["b = g if first else mom * buf[i] + omd * g", "buf[i] = b",
                 "g = g + mom * b" if nesterov else "g = b"]
    body.append("p[i] = p[i] - lr * g")
    return buffers, scalars, body


def _adam(amsgrad: bool) -> tuple:
    # coupled weight decay passes decay=1, wd=lambda;
    # decoupled (AdamW) passes decay=1-lr*lambda, wd=0
    buffers = ("m_", "v_") + (("vmax",) if amsgrad else ())
    scalars = ("sgn", "wd", "decay", "w1", "w1c", "beta2", "omb2", "bc2s", "eps", "nstep")
    body = ["x = p[i] * decay", "g = sgn * g_[i] + wd * x",
            f"m = {_lerp('m_[i]', 'g', 'w1', 'w1c')}", "v = beta2 * v_[i] + omb2 * (g * g)",
            "m_[i] = m", "v_[i] = v"]
    if amsgrad:
        body += ["v = max(vmax[i], v)", "vmax[i] = v"]
    body += ["d = math.sqrt(v) / bc2s + eps", "p[i] = x + nstep * (m / d)"]
    return buffers, scalars, body


def _rmsprop(centered: bool, momentum: bool) -> tuple:
    buffers = ("sq",) + (("ga",) if centered else ()) + (("buf",) if momentum else ())
    scalars = ("sgn", "wd", "alpha", "oma", "omac", "eps", "mom", "nlr")
    body = ["x = p[i]", "g = sgn * g_[i] + wd * x", "s = alpha * sq[i] + oma * (g * g)",
            "sq[i] = s"]
    if centered:
        body += [f"a = {_lerp('ga[i]', 'g', 'oma', 'omac')}", "ga[i] = a",
                 "avg = math.sqrt(s - a * a) + eps"]
    else:
        body.append("avg = math.sqrt(s) + eps")
    if momentum:
        body += ["b = mom * buf[i] + g / avg", "buf[i] = b", "p[i] = x + nlr * b"]
    else:
        body.append("p[i] = x + nlr * (g / avg)")
    return buffers, scalars, body


def _adagrad() -> tuple:
    body = ["x = p[i]", "g = sgn * g_[i] + wd * x", "s = acc[i] + g * g", "acc[i] = s",
            "p[i] = x + nclr * (g / (math.sqrt(s) + eps))"]
    return ("acc",), ("sgn", "wd", "eps", "nclr"), body


def _adadelta() -> tuple:
    body = ["x = p[i]", "g = sgn * g_[i] + wd * x", "s = rho * sq[i] + omr * (g * g)",
            "sq[i] = s", "delta = math.sqrt(acc[i] + eps) / math.sqrt(s + eps) * g",
            "acc[i] = rho * acc[i] + omr * (delta * delta)", "p[i] = x + nlr * delta"]
    return ("sq", "acc"), ("sgn", "wd", "rho", "omr", "eps", "nlr"), body


def _adamax() -> tuple:
    body = ["x = p[i]", "g = sgn * g_[i] + wd * x",
            f"m = {_lerp('m_[i]', 'g', 'w1', 'w1c')}", "m_[i] = m",
            "u = max(u_[i] * beta2, abs(g) + eps)", "u_[i] = u", "p[i] = x + nclr * (m / u)"]
    return ("m_", "u_"), ("sgn", "wd", "w1", "w1c", "beta2", "eps", "nclr"), body


def _nadam() -> tuple:
    body = ["x = p[i] * decay", "g = sgn * g_[i] + wd * x",
            f"m = {_lerp('m_[i]', 'g', 'w1', 'w1c')}", "v = beta2 * v_[i] + omb2 * (g * g)",
            "m_[i] = m", "v_[i] = v", "d = math.sqrt(v / bc2) + eps",
            "x = x + cg * (g / d)", "p[i] = x + cm * (m / d)"]
    return ("m_", "v_"), ("sgn", "wd", "decay", "w1", "w1c", "beta2", "omb2", "bc2", "eps",
                          "cg", "cm"), body


def _radam() -> tuple:
    body = ["x = p[i] * decay", "g = sgn * g_[i] + wd * x",
            f"m = {_lerp('m_[i]', 'g', 'w1', 'w1c')}", "v = beta2 * v_[i] + omb2 * (g * g)",
            "m_[i] = m", "v_[i] = v",
            "if rectify:",
            "    p[i] = x - (m / bc1) * lr * (bc2s / (math.sqrt(v) + eps)) * rect",
            "else:",
            "    p[i] = x - (m / bc1) * lr"]
    return ("m_", "v_"), ("sgn", "wd", "decay", "w1", "w1c", "beta2", "omb2", "bc1", "lr",
                          "bc2s", "eps", "rect", "rectify"), body


def _asgd() -> tuple:
    body = ["x = p[i]", "g = sgn * g_[i] + wd * x", "x = x * decay", "x = x + neta * g",
            "p[i] = x",
            "ax[i] = x if mu_one else ax[i] + (x - ax[i]) * mu"]
    return ("ax",), ("sgn", "wd", "decay", "neta", "mu", "mu_one"), body


def _rprop() -> tuple:
    body = ["g = sgn * g_[i]", "s = g * prev[i]", "st = ss[i]",
            "if s > 0:", "    st = st * etaplus", "elif s < 0:", "    st = st * etaminus",
            "st = min(max(st, smin), smax)", "ss[i] = st",
            "if s < 0:", "    g = g * 0",  # a sign flip skips this step's update (g*0 keeps dtype)
            "if g > 0:", "    p[i] = p[i] - st", "elif g < 0:", "    p[i] = p[i] + st",
            "prev[i] = g"]
    return ("prev", "ss"), ("sgn", "etaplus", "etaminus", "smin", "smax"), body


_FAMILIES = {"sgd": _sgd, "adam": _adam, "rmsprop": _rmsprop, "adagrad": _adagrad,
             "adadelta": _adadelta, "adamax": _adamax, "nadam": _nadam, "radam": _radam,
             "asgd": _asgd, "rprop": _rprop}
_FLAGS = ("first", "rectify", "mu_one")  # scalar arguments that are booleans, not numbers


def update_kernel(family: str, dtype: str, *options: bool, target: str = "cpu") -> tuple:
    """``(source, "kernel", signature, description)`` for one optimizer family, dtype and
    options. ``target="cuda"`` wraps the same loop body in a grid-stride ``cuda.jit`` kernel;
    ``"cpu-threaded"`` splits it over OpenBLAS's workers (needs ``worker_pool.AVAILABLE``)."""
    buffers, scalars, body = _FAMILIES[family](*options)
    scalar_t = getattr(types, NUMBA_TYPE[dtype])
    on_gpu = target == "cuda"
    arr = types.Array(scalar_t, 1, "C")
    signature = ((arr, types.Array(scalar_t, 1, "C", readonly=not on_gpu)) + (arr,) * len(buffers)
                 + tuple(types.boolean if s in _FLAGS else scalar_t for s in scalars))
    what = f"optim.{family}{tuple(options)} {dtype} {target}"
    if target == "cpu-threaded":
        args = ([(name, dtype, "slice") for name in ("p", "g_") + buffers]
                + [(name, "bool" if name in _FLAGS else dtype, "scalar") for name in scalars])
        loop = ["    for i in range(n):"] + ["        " + line for line in body]
        return pooled_kernel(args, loop, decorator=_DECORATOR), "kernel", signature, what
    loop = "\n".join("        " + line for line in body)
    header, decorator, indices = HEADER, _DECORATOR, "range(p.shape[0])"
    if on_gpu:
        header, decorator = _CUDA_HEADER, "@cuda.jit(cache=True)\n"
        indices = "range(cuda.grid(1), p.shape[0], cuda.gridsize(1))"
    src = (header + decorator + f"def kernel(p, g_, {', '.join(buffers + scalars)}):\n"
           f"    for i in {indices}:\n{loop}\n")
    return src, "kernel", signature, what


_CUDA_HEADER = "import math\nfrom numba import cuda\n\n"
