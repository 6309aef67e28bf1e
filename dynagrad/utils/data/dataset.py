"""Datasets: the map-style ``Dataset`` (``len`` + ``[i]``) and the stream-style ``IterableDataset``,
plus the usual combinators (``TensorDataset``, ``ConcatDataset``, ``ChainDataset``, ``Subset``) and
``random_split``.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.utils.data import TensorDataset, random_split
    >>> ds = TensorDataset(dg.arange(10), dg.arange(10) * 2)
    >>> ds[3]
    (tensor(3), tensor(6))
    >>> train, val = random_split(ds, [0.8, 0.2], generator=dg.Generator().manual_seed(0))
    >>> len(train), len(val)
    (8, 2)
"""
from __future__ import annotations

import bisect
import math
import warnings
from typing import Generic, Iterable, Iterator, Sequence, TypeVar

from ...random import Generator, randperm
from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    A subclass may also define ``__getitems__(indices)`` to fetch a whole batch at once; the
    DataLoader then calls it instead of indexing one sample at a time.
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other: "Dataset[T_co]") -> "ConcatDataset[T_co]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy of the dataset, so a dataset
    that should not yield duplicates shards itself with ``get_worker_info()``:

    Example:
        >>> from dynagrad.utils.data import IterableDataset, get_worker_info
        >>> class Range(IterableDataset):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
        ...         return iter(range(start, self.n, step))
        >>> list(Range(4))
        [0, 1, 2, 3]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other: "Dataset[T_co]") -> "ChainDataset[T_co]":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the i-th rows of each tensor: ``TensorDataset(x, y)[i] == (x[i], y[i])``."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor")
        n = tensors[0].size(0)
        for t in tensors:
            if t.size(0) != n:
                shapes = ", ".join(str(tuple(x.shape)) for x in tensors)
                raise ValueError(f"TensorDataset: Size mismatch between tensors: every tensor must "
                                 f"have the same size in dimension 0 (got shapes {shapes})")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples of several same-length datasets side by side: ``StackDataset(a, b)[i]`` is
    ``(a[i], b[i])`` and ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``.

    Example:
        >>> StackDataset([1, 2], ["a", "b"])[1]
        (2, 'b')
        >>> StackDataset(x=[1, 2], y=["a", "b"])[0]
        {'x': 1, 'y': 'a'}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets: tuple | dict = args or kwargs
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """One batch; each part uses its dataset's own ``__getitems__`` when it has one."""
        named = isinstance(self.datasets, dict)
        columns = {}  # part key -> that part's samples, in batch order
        for key, d in (self.datasets.items() if named else enumerate(self.datasets)):
            fetch = getattr(d, "__getitems__", None)
            if callable(fetch):
                items = fetch(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if named:
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        return [tuple(col[j] for col in columns.values()) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The samples of several map-style datasets one after the other."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError(f"ConcatDataset: absolute value of index {idx} should not exceed "
                                 f"dataset length {n}")
            idx += n
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} is out of range for length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, chained."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        # keep the inner dataset's batched fetch when it has one
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_from_fractions(fractions: Sequence[float], n: int) -> list[int]:
    if not math.isclose(sum(fractions), 1.0) or any(f < 0 or f > 1 for f in fractions):
        raise ValueError(f"random_split: fractions must each lie in [0, 1] and sum to 1 "
                         f"(got {list(fractions)}, sum {sum(fractions)})")
    lengths = [int(math.floor(n * f)) for f in fractions]
    # hand the samples lost to flooring out one at a time, first split first (PyTorch's rule)
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"random_split: length of split at index {i} is 0; this split will be "
                          "empty", stacklevel=3)
    return lengths


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset[T_co]]:
    """Split ``dataset`` into disjoint random subsets of the given lengths.

    ``lengths`` are sample counts summing to ``len(dataset)``, or fractions summing to 1 (floored,
    with the remainder spread one by one over the first splits). ``generator`` fixes the split.
    """
    n = len(dataset)
    if all(0 <= f <= 1 for f in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) != n:
        lengths = _lengths_from_fractions(lengths, n)
    if any(not float(x).is_integer() or x < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions that "
                         f"sum to 1 (got {list(lengths)})")
    lengths = [int(x) for x in lengths]
    if sum(lengths) != n:
        raise ValueError(f"random_split: Sum of input lengths ({sum(lengths)}) does not equal the "
                         f"length of the input dataset ({n})!")
    perm = randperm(n, generator=generator).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start:start + length]))
        start += length
    return out
