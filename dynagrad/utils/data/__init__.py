"""dynagrad.utils.data: datasets, samplers and the DataLoader, with PyTorch's names and semantics.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.utils.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(dg.arange(10.0)), batch_size=4, shuffle=True,
    ...                     generator=dg.Generator().manual_seed(0))
    >>> [len(b[0]) for b in loader]
    [4, 4, 2]
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .worker import WorkerInfo, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "DataLoader", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "default_collate", "default_convert", "get_worker_info", "WorkerInfo"]
