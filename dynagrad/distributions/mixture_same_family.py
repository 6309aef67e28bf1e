"""MixtureSameFamily: a mixture whose components are the batch of one distribution, chosen by
a Categorical.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.distributions import Categorical, MixtureSameFamily, Normal
    >>> mix = MixtureSameFamily(Categorical(dg.tensor([0.5, 0.5])),
    ...                         Normal(dg.tensor([-1.0, 1.0]), dg.tensor([1.0, 1.0])))
    >>> float(mix.mean)
    0.0
"""
from __future__ import annotations

from typing import ClassVar

from ..tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """MixtureSameFamily(mixture_distribution, component_distribution): the rightmost batch
    dim of ``component_distribution`` indexes the components, weighted by the Categorical
    ``mixture_distribution``."""

    arg_constraints: ClassVar[dict] = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(  # noqa: TRY004 (PyTorch's exception type)
                " The Mixture distribution needs to be an  instance of "
                "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError(  # noqa: TRY004 (PyTorch's exception type)
                "The Component distribution need to be an instance of "
                "torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible "
                                 f"with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad_probs(self):
        """Mixture probabilities with 1-sized dims for the event (to weight component values)."""
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._pad_probs() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: E[Var(X | k)] + Var(E[X | k])
        probs = self._pad_probs()
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self._component_distribution.variance).sum(dim)
        diff = self._component_distribution.mean - self._pad(self.mean)
        var_cond_mean = (probs * diff.pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=()):
        from ..autograd import no_grad
        with no_grad():
            sample_len = len(sample_shape)
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = tuple(self.event_shape)
            mix_sample = self._mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.expand(mix_shape + (1,) + es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self._mixture_distribution},\n  "
                f"{self._component_distribution})")
