"""Constraints: the sets a distribution's parameters and samples live in (PyTorch's
``torch.distributions.constraints``). ``constraint.check(value)`` returns a boolean tensor over
the batch (the event dimensions reduced away).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.distributions import constraints
    >>> constraints.positive.check(dg.tensor([1.0, -1.0])).tolist()
    [True, False]
"""
from __future__ import annotations

import numpy as np

from ..creation import tensor as _tensor
from ..tensor import Tensor

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


def _show(bound):
    """A bound as PyTorch's f-strings show it: a 0-dim tensor as its number."""
    return bound.item() if isinstance(bound, Tensor) and bound.dim() == 0 else bound


class Constraint:
    """A region of values. ``is_discrete``: integer valued; ``event_dim``: how many rightmost
    dimensions make one event (checked together)."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (it cannot be checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a ``dependent`` placeholder."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: on the class it says "depends on the
    parameters", on an instance it computes the actual constraint.

    Example::

        @constraints.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return constraints.interval(self.low, self.high)
    """

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more dimensions in each event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        if not isinstance(base_constraint, Constraint):
            raise TypeError("expected a Constraint")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}(lower_bound={_show(self.lower_bound)}, "
                f"upper_bound={_show(self.upper_bound)})")


class _IntegerLessThan(Constraint):
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={_show(self.upper_bound)})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={_show(self.lower_bound)})"


class _Real(Constraint):
    def check(self, value):
        return value.isnan().logical_not()


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={_show(self.lower_bound)})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={_show(self.upper_bound)})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}(lower_bound={_show(self.lower_bound)}, "
                f"upper_bound={_show(self.upper_bound)})")


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Non-negative vectors summing to one (to 1e-6)."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative integer vectors summing to at most ``upper_bound``."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    """Lower triangular with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit length."""
    event_dim = 2

    def check(self, value):
        tol = float(np.finfo(value.dtype.np).eps) * value.shape[-1] * 10
        row_norm = (value * value).sum(-1).sqrt()
        unit_rows = ((row_norm - 1).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        from ..creation import full
        ok = value.shape[-2] == value.shape[-1]
        return full(tuple(value.shape[:-2]), ok, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        close = ((value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs())
        return close.reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


def _host_eigvalsh(value: Tensor) -> np.ndarray:
    from ..kernels.buffers import host
    return np.linalg.eigvalsh(host(value.detach()._data).astype(np.float64))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return _tensor(_host_eigvalsh(value)[..., 0] >= 0, device=value.device)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return _tensor(_host_eigvalsh(value)[..., 0] > 0, device=value.device)


class _Cat(Constraint):
    """``cseq[i]`` on the slice of ``dim`` of length ``lengths[i]`` (as ``cat`` builds it)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError("cseq and lengths must have the same length")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        from ..ops.movement import cat as _cat
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` on index ``i`` of ``dim`` (as ``stack`` builds it)."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value):
        from ..ops.movement import stack as _stack
        parts = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return _stack([c.check(v) for v, c in zip(parts, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
