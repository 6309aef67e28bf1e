"""Optimizer updates composed from in-place tensor ops, for parameters on any device.

Each function here is the tensor form of one family of ``dynagrad/kernels/fused_update.py``: same
arguments in the same order (``p``, its gradient ``g``, the state ``buffers``, the scalars), same
arithmetic in the same order, so a float32 update matches the fused CPU kernel up to rounding.
``optimizer.launch`` sends CUDA parameters here; the caller runs under ``no_grad``.

Example:
    >>> import dynagrad as dg
    >>> p, g = dg.tensor([1.0, 2.0]), dg.tensor([0.5, 0.5])
    >>> update_composite("sgd", (False, False), p, g, (), 1.0, 0.0, 0.1, 0.0, 1.0)
    >>> p.tolist()
    [0.949999988079071, 1.9500000476837158]
"""
from __future__ import annotations

from ..ops.elementwise import where
from ..tensor import Tensor


def _decayed_grad(p: Tensor, g: Tensor, sgn, wd) -> Tensor:
    """``sgn * g + wd * p`` (skipping a factor of 1 and a zero weight decay, which change
    nothing)."""
    d = g if sgn == 1 else g * sgn
    return d if wd == 0 else d + p * wd


def _lerp_(a: Tensor, b: Tensor, w, wc) -> None:
    """``a = lerp(a, b, w)`` in place as the fused kernels compute it (``wc`` is ``1 - w``)."""
    if w < 0.5:
        a.add_((b - a) * w)
    else:
        a.copy_(b - (b - a) * wc)


def _sgd(p, g, bufs, sgn, wd, lr, mom, omd, first=False, *, momentum: bool, nesterov: bool):
    d = _decayed_grad(p, g, sgn, wd)
    if momentum:
        buf = bufs[0]
        if first:  # the first step seeds the buffer with the gradient itself
            buf.copy_(d)
        else:
            buf.mul_(mom).add_(d * omd)
        d = d + buf * mom if nesterov else buf
    p.sub_(d * lr)


def _adam(p, g, bufs, sgn, wd, decay, w1, w1c, beta2, omb2, bc2s, eps, nstep, *, amsgrad: bool):
    m, v = bufs[0], bufs[1]
    if decay != 1:
        p.mul_(decay)
    d = _decayed_grad(p, g, sgn, wd)
    _lerp_(m, d, w1, w1c)
    v.mul_(beta2).add_(d * d * omb2)
    if amsgrad:
        v = bufs[2].maximum_(v)
    p.add_(m / (v.sqrt() / bc2s + eps) * nstep)


def _rmsprop(p, g, bufs, sgn, wd, alpha, oma, omac, eps, mom, nlr, *, centered: bool,
             momentum: bool):
    sq = bufs[0]
    d = _decayed_grad(p, g, sgn, wd)
    sq.mul_(alpha).add_(d * d * oma)
    if centered:
        ga = bufs[1]
        _lerp_(ga, d, oma, omac)
        avg = (sq - ga * ga).sqrt() + eps
    else:
        avg = sq.sqrt() + eps
    if momentum:
        buf = bufs[-1]
        buf.mul_(mom).add_(d / avg)
        p.add_(buf * nlr)
    else:
        p.add_(d / avg * nlr)


def _adagrad(p, g, bufs, sgn, wd, eps, nclr):
    acc = bufs[0]
    d = _decayed_grad(p, g, sgn, wd)
    acc.add_(d * d)
    p.add_(d / (acc.sqrt() + eps) * nclr)


def _adadelta(p, g, bufs, sgn, wd, rho, omr, eps, nlr):
    sq, acc = bufs
    d = _decayed_grad(p, g, sgn, wd)
    sq.mul_(rho).add_(d * d * omr)
    delta = (acc + eps).sqrt() / (sq + eps).sqrt() * d
    acc.mul_(rho).add_(delta * delta * omr)
    p.add_(delta * nlr)


def _adamax(p, g, bufs, sgn, wd, w1, w1c, beta2, eps, nclr):
    m, u = bufs
    d = _decayed_grad(p, g, sgn, wd)
    _lerp_(m, d, w1, w1c)
    u.mul_(beta2).maximum_(d.abs() + eps)
    p.add_(m / u * nclr)


def _nadam(p, g, bufs, sgn, wd, decay, w1, w1c, beta2, omb2, bc2, eps, cg, cm):
    m, v = bufs
    if decay != 1:
        p.mul_(decay)
    d = _decayed_grad(p, g, sgn, wd)
    _lerp_(m, d, w1, w1c)
    v.mul_(beta2).add_(d * d * omb2)
    den = (v / bc2).sqrt() + eps
    p.add_(d / den * cg)
    p.add_(m / den * cm)


def _radam(p, g, bufs, sgn, wd, decay, w1, w1c, beta2, omb2, bc1, lr, bc2s, eps, rect, rectify):
    m, v = bufs
    if decay != 1:
        p.mul_(decay)
    d = _decayed_grad(p, g, sgn, wd)
    _lerp_(m, d, w1, w1c)
    v.mul_(beta2).add_(d * d * omb2)
    if rectify:
        p.sub_(m / bc1 * lr * (bc2s / (v.sqrt() + eps)) * rect)
    else:
        p.sub_(m / bc1 * lr)


def _asgd(p, g, bufs, sgn, wd, decay, neta, mu, mu_one):
    ax = bufs[0]
    d = _decayed_grad(p, g, sgn, wd)
    if decay != 1:
        p.mul_(decay)
    p.add_(d * neta)
    if mu_one:
        ax.copy_(p)
    else:
        ax.add_((p - ax) * mu)


def _rprop(p, g, bufs, sgn, etaplus, etaminus, smin, smax):
    prev, sizes = bufs
    d = g if sgn == 1 else g * sgn
    s = d * prev
    grown = where(s > 0, sizes * etaplus, where(s < 0, sizes * etaminus, sizes))
    sizes.copy_(grown.clamp(smin, smax))
    d = where(s < 0, 0.0, d)  # a sign flip skips this step's update
    p.sub_(d.sign() * sizes)
    prev.copy_(d)


_FAMILIES = {"sgd": (_sgd, ("momentum", "nesterov")), "adam": (_adam, ("amsgrad",)),
             "rmsprop": (_rmsprop, ("centered", "momentum")), "adagrad": (_adagrad, ()),
             "adadelta": (_adadelta, ()), "adamax": (_adamax, ()), "nadam": (_nadam, ()),
             "radam": (_radam, ()), "asgd": (_asgd, ()), "rprop": (_rprop, ())}


def update_composite(family: str, options: tuple, p: Tensor, g: Tensor, buffers: tuple,
                     *scalars) -> None:
    """Update ``p`` and its state ``buffers`` in place from its gradient ``g``: the fused
    kernel ``family`` with boolean ``options``, written with tensor ops (call under no_grad)."""
    fn, names = _FAMILIES[family]
    fn(p, g, buffers, *scalars, **dict(zip(names, options)))
