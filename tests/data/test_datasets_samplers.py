"""Datasets, samplers and random_split: behaviour and PyTorch parity where the result is
deterministic (torch's random streams differ from ours, so random orders are checked by their
properties instead)."""
import collections

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.utils.data import (BatchSampler, ChainDataset, ConcatDataset, Dataset,
                                 IterableDataset, RandomSampler, SequentialSampler, Subset,
                                 SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                                 random_split)

torch = pytest.importorskip("torch")
tdata = torch.utils.data


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


class Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


def test_tensor_dataset_rows_and_len():
    x, y = dg.arange(12.0).view(6, 2), dg.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    np.testing.assert_array_equal(a.numpy(), [8.0, 9.0])
    assert b.item() == 4


def test_tensor_dataset_size_mismatch_message():
    with pytest.raises(ValueError, match=r"Size mismatch.*\(3,\), \(4, 2\)"):
        TensorDataset(dg.zeros(3), dg.zeros(4, 2))


def test_concat_dataset_matches_torch():
    ours = ConcatDataset([Squares(3), Squares(4)])
    ref = tdata.ConcatDataset([Squares(3), Squares(4)])
    assert len(ours) == len(ref) == 7
    assert ours.cumulative_sizes == ref.cumulative_sizes
    assert [ours[i] for i in range(-7, 7)] == [ref[i] for i in range(-7, 7)]
    assert [x for x in (Squares(2) + Squares(2))] == [0, 1, 0, 1]
    with pytest.raises(IndexError):
        ours[7]
    with pytest.raises(ValueError, match="should not exceed"):
        ours[-8]
    with pytest.raises(ValueError, match="empty"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="IterableDataset"):
        ConcatDataset([Count(2)])


def test_chain_dataset_and_iterable_add():
    assert list(Count(2) + Count(3)) == [0, 1, 0, 1, 2]
    assert list(ChainDataset([Count(1), Count(2)])) == [0, 0, 1]


def test_subset_and_getitems():
    ds = Subset(Squares(10), [9, 2, 5])
    assert len(ds) == 3
    assert [ds[i] for i in range(3)] == [81, 4, 25]
    assert ds.__getitems__([2, 0]) == [25, 81]


def test_random_split_lengths_disjoint_and_reproducible():
    ds = Squares(10)
    parts = random_split(ds, [3, 7], generator=dg.Generator().manual_seed(5))
    assert [len(p) for p in parts] == [3, 7]
    idx = parts[0].indices + parts[1].indices
    assert sorted(idx) == list(range(10))
    again = random_split(ds, [3, 7], generator=dg.Generator().manual_seed(5))
    assert again[0].indices == parts[0].indices
    other = random_split(ds, [3, 7], generator=dg.Generator().manual_seed(6))
    assert other[0].indices + other[1].indices != idx


@pytest.mark.parametrize("n,fractions", [(10, [0.8, 0.2]), (11, [0.5, 0.3, 0.2]),
                                         (7, [1 / 3, 1 / 3, 1 / 3])])
def test_random_split_fraction_lengths_match_torch(n, fractions):
    ours = random_split(Squares(n), fractions, generator=dg.Generator().manual_seed(0))
    ref = tdata.random_split(Squares(n), fractions, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in ours] == [len(p) for p in ref]
    assert sorted(sum((p.indices for p in ours), [])) == list(range(n))


def test_random_split_errors():
    with pytest.raises(ValueError, match="does not equal the length"):
        random_split(Squares(5), [2, 2])
    with pytest.raises(ValueError, match="sum to 1"):
        random_split(Squares(5), [0.5, 0.6])
    with pytest.warns(UserWarning, match="split at index 2 is 0"):
        parts = random_split(Squares(2), [0.5, 0.5, 0.0])
    assert [len(p) for p in parts] == [1, 1, 0]


def test_random_split_uses_default_generator():
    dg.manual_seed(3)
    a = random_split(Squares(8), [4, 4])[0].indices
    dg.manual_seed(3)
    assert random_split(Squares(8), [4, 4])[0].indices == a


def test_sequential_and_batch_sampler_match_torch():
    assert list(SequentialSampler(range(5))) == list(tdata.SequentialSampler(range(5)))
    for bs in (1, 2, 3, 7):
        for drop in (False, True):
            ours = BatchSampler(SequentialSampler(range(7)), bs, drop)
            ref = tdata.BatchSampler(tdata.SequentialSampler(range(7)), bs, drop)
            assert list(ours) == list(ref)
            assert len(ours) == len(ref)


def test_batch_sampler_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(TypeError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 1)


def test_random_sampler_permutation_and_generator():
    g = dg.Generator().manual_seed(1)
    s = RandomSampler(range(20), generator=g)
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second  # the generator advances between epochs
    g.manual_seed(1)
    assert list(s) == first


def test_random_sampler_default_generator_reproducible():
    dg.manual_seed(7)
    a = list(RandomSampler(range(30)))
    dg.manual_seed(7)
    assert list(RandomSampler(range(30))) == a
    assert a != list(range(30))


def test_random_sampler_num_samples_without_replacement_chains_permutations():
    s = RandomSampler(range(4), num_samples=10, generator=dg.Generator().manual_seed(0))
    out = list(s)
    assert len(s) == len(out) == 10
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2


def test_random_sampler_replacement_statistics():
    s = RandomSampler(range(5), replacement=True, num_samples=20000,
                      generator=dg.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=5)
    assert counts.sum() == 20000
    np.testing.assert_allclose(counts / 20000, 0.2, atol=0.015)


def test_random_sampler_replacement_is_lazy():
    """Draws come in small chunks: a huge num_samples costs nothing until iterated (the whole
    draw at once would ask for 75 GiB), and a count that is not a chunk multiple is exact."""
    import itertools
    import time
    import tracemalloc
    s = RandomSampler(range(7), replacement=True, num_samples=10**10,
                      generator=dg.Generator().manual_seed(0))
    assert len(s) == 10**10
    tracemalloc.start()
    t0 = time.perf_counter()
    head = list(itertools.islice(iter(s), 100))
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 5 and peak < 10 * 2**20
    assert len(head) == 100 and all(0 <= i < 7 for i in head)
    assert len(list(RandomSampler(range(3), replacement=True, num_samples=70))) == 70


def test_random_sampler_errors():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)


def test_subset_random_sampler():
    idx = [10, 20, 30, 40]
    s = SubsetRandomSampler(idx, generator=dg.Generator().manual_seed(0))
    out = list(s)
    assert sorted(out) == idx and len(s) == 4


def test_weighted_random_sampler_frequencies():
    w = [1.0, 2.0, 0.0, 7.0]
    s = WeightedRandomSampler(w, num_samples=20000, generator=dg.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=4)
    np.testing.assert_allclose(counts / 20000, np.array(w) / 10, atol=0.015)
    assert counts[2] == 0


def test_weighted_random_sampler_without_replacement_is_distinct():
    s = WeightedRandomSampler(dg.tensor([1.0, 1.0, 5.0, 1.0]), 4, replacement=False,
                              generator=dg.Generator().manual_seed(0))
    assert sorted(s) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)


def test_weighted_random_sampler_reproducible():
    a = list(WeightedRandomSampler([1, 2, 3], 50, generator=dg.Generator().manual_seed(4)))
    b = list(WeightedRandomSampler([1, 2, 3], 50, generator=dg.Generator().manual_seed(4)))
    assert a == b


def test_dataset_base_raises():
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    with pytest.raises(NotImplementedError):
        iter(IterableDataset())


def test_ordered_dict_samples_keep_type():
    from dynagrad.utils.data import default_collate
    out = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert type(out) is collections.OrderedDict and out["a"].tolist() == [1, 2]


class _Batched:
    """A dataset with a batched fetch (records which path was used)."""

    def __init__(self, n):
        self.n, self.batched = n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * 10

    def __getitems__(self, indices):
        self.batched += 1
        return [i * 10 for i in indices]


def test_stack_dataset_matches_torch():
    from dynagrad.utils.data import DataLoader, StackDataset
    ours_b, theirs_b = _Batched(4), _Batched(4)
    for ours, theirs in [(StackDataset(ours_b, "abcd"), tdata.StackDataset(theirs_b, "abcd")),
                         (StackDataset(x=ours_b, y=[1.5] * 4), tdata.StackDataset(
                             x=theirs_b, y=[1.5] * 4))]:
        assert len(ours) == len(theirs) == 4
        assert ours[2] == theirs[2]
        assert ours.__getitems__([3, 0]) == theirs.__getitems__([3, 0])
    assert ours_b.batched == theirs_b.batched == 2  # the inner batched fetch is used
    # through a DataLoader: default_collate of tuples and of dicts
    ds = StackDataset(dg.arange(6.0).reshape(3, 2), [0, 1, 2])
    (x, y), = list(DataLoader(ds, batch_size=3))
    (tx, ty), = list(torch.utils.data.DataLoader(
        tdata.StackDataset(torch.arange(6.0).reshape(3, 2), [0, 1, 2]), batch_size=3))
    assert x.tolist() == tx.tolist() and y.tolist() == ty.tolist()
    for args, kwargs, match in [((), {}, "At least one dataset should be passed"),
                                (([1],), {"a": [1]}, "but both types are given"),
                                (([1], [1, 2]), {}, "Size mismatch between datasets"),
                                ((), {"a": [1], "b": []}, "Size mismatch between datasets")]:
        for cls in (StackDataset, tdata.StackDataset):
            with pytest.raises(ValueError, match=match):
                cls(*args, **kwargs)
