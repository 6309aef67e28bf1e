"""The von Mises distribution: a circular normal on [-pi, pi).

Sampling uses the generator's stream on the host (NumPy's von Mises sampler; a host round trip
on CUDA).

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.VonMises(dg.tensor(0.0), dg.tensor(1.0))
    >>> round(float(d.log_prob(dg.tensor(0.0))), 4)
    -1.0738
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..kernels.buffers import device_index, host, move_array
from ..ops.special import i0e, i1e
from ..random import _gen, _result
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["VonMises"]


class VonMises(Distribution):
    """VonMises(loc, concentration): density exp(k cos(x - loc)) / (2 pi I0(k))."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        # log I0(k) = log(i0e(k)) + k, finite for large k
        return k * ((value - self.loc).cos() - 1) - math.log(2 * math.pi) - i0e(k).log()

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        at = device_index(self.loc._data)
        loc = np.broadcast_to(host(self.loc.detach()._data).astype(np.float64), shape)
        k = np.broadcast_to(host(self.concentration.detach()._data).astype(np.float64), shape)
        draws = _gen(None, at).vonmises(loc, k)
        # wrap into [-pi, pi) around the location
        draws = np.remainder(draws + math.pi, 2 * math.pi) - math.pi
        return _result(move_array(draws, None), self.loc.dtype, False, at)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # the circular variance 1 - I1(k) / I0(k)
        k = self.concentration
        return 1 - i1e(k) / i0e(k)
