"""The base class of every distribution: shapes, argument and sample validation, and the
interface (sample, rsample, log_prob, cdf, icdf, entropy, mean, mode, variance, ...).

Shapes follow PyTorch: a draw of ``sample(sample_shape)`` has shape
``sample_shape + batch_shape + event_shape``; ``log_prob`` reduces the event dimensions.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Normal(dg.zeros(2), 1.0)
    >>> tuple(d.sample((3,)).shape), tuple(d.batch_shape), tuple(d.event_shape)
    ((3, 2), (2,), ())
"""
from __future__ import annotations

import warnings

from ..autograd import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A parameterised probability distribution (subclasses set ``arg_constraints``,
    ``support`` and the methods they can compute)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made afterwards (default: on,
        unless Python runs with -O)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # a parameter derived from another one is valid when that one is
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                        f"{constraint!r}, but found invalid values:\n{_fmt(value)}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A view of this distribution with a larger ``batch_shape`` (parameters expanded, no
        copies)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Each parameter's name mapped to the constraint its values satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint every sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """A sample (no gradient) of shape ``sample_shape + batch_shape + event_shape``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterized sample: gradients flow from it to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Raise ValueError if ``value`` has the wrong event shape, does not broadcast with the
        batch, or lies outside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")  # noqa: TRY004 (torch)
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual_shape = value.shape
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values:\n{_fmt(value)}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {_fmt(v) if v.numel() == 1 else v.size()}"
                         for p, v in ((p, self.__dict__[p]) for p in names))
        return f"{self.__class__.__name__}({args})"


def _fmt(t):
    """How PyTorch formats a tensor in an f-string: a 0-dim tensor as its number."""
    return t.item() if t.dim() == 0 else t


def _expanded(dist, cls, batch_shape, _instance, names) -> Distribution:
    """``dist.expand(batch_shape)`` for a distribution whose state is the parameters ``names``
    (each expanded to ``batch_shape`` + its own trailing event dims) and nothing else."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    extra = len(dist.batch_shape)
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            trailing = tuple(value.shape[extra:])
            setattr(new, name, value.expand(tuple(batch_shape) + trailing))
    Distribution.__init__(new, batch_shape, dist.event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
