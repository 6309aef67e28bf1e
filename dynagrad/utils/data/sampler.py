"""Samplers: iterables of dataset indices (or, for ``BatchSampler``, of index lists).

Random samplers draw from a ``dg.Generator``; without one they take a fresh seed from the default
generator at the start of each pass, so ``dg.manual_seed`` fixes every epoch's order.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence, Sized

import numpy as np

from ... import dtypes
from ...random import Generator, default_generator, multinomial, randint, randperm
from ...tensor import Tensor, _wrap

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

_SEED_HIGH = 2 ** 63 - 1


def draw_seed(generator: Generator | None) -> int:
    """A 63-bit seed drawn from ``generator`` (the default generator when None)."""
    return int(randint(0, _SEED_HIGH, (), generator=generator or default_generator).item())


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and usually ``__len__``."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _check_bool(name: str, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} should be a boolean value, but got {name}={value}")


# Indices drawn per randint call by RandomSampler(replacement=True); PyTorch uses 32 as well.
_REPLACEMENT_CHUNK = 32


class RandomSampler(Sampler):
    """Random indices: a permutation, or ``num_samples`` draws with ``replacement=True``.

    Without replacement and with ``num_samples > len(data_source)``, whole permutations are chained
    (PyTorch's behaviour), so every index appears equally often.
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_bool("replacement", replacement)
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        gen = self.generator
        if gen is None:
            gen = Generator().manual_seed(draw_seed(None))
        if self.replacement:
            # Drawn lazily in chunks (as PyTorch does): num_samples may be far larger than
            # memory, and a consumer that stops early never pays for the rest.
            full, rest = divmod(self.num_samples, _REPLACEMENT_CHUNK)
            for _ in range(full):
                yield from randint(0, n, (_REPLACEMENT_CHUNK,), generator=gen).tolist()
            if rest:
                yield from randint(0, n, (rest,), generator=gen).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=gen).tolist()
        yield from randperm(n, generator=gen).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a fresh permutation each pass)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in ``[0, len(weights))`` drawn with probability ∝ ``weights``.

    Example:
        >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], num_samples=3)
        >>> list(s)
        [1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        _check_positive_int("num_samples", num_samples)
        _check_bool("replacement", replacement)
        w = weights._data if isinstance(weights, Tensor) else np.asarray(weights)
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        self.weights = _wrap(w, dtypes.float64)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        draws = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from draws.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group another sampler's indices into lists of ``batch_size`` (the last may be shorter
    unless ``drop_last``)."""

    def __init__(self, sampler: Iterable, batch_size: int, drop_last: bool) -> None:
        _check_positive_int("batch_size", batch_size)
        _check_bool("drop_last", drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
