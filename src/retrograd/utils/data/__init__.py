"""Datasets, samplers and the DataLoader (PyTorch's ``torch.utils.data``).

Example:
    >>> import retrograd as torch
    >>> from retrograd.utils.data import DataLoader, TensorDataset
    >>> x, y = torch.arange(8.0).reshape(4, 2), torch.tensor([0, 1, 0, 1])
    >>> for xb, yb in DataLoader(TensorDataset(x, y), batch_size=2):
    ...     print(xb.shape, yb.tolist())
    torch.Size([2, 2]) [0, 1]
    torch.Size([2, 2]) [0, 1]
"""

from __future__ import annotations

from ._collate import default_collate, default_convert
from .dataloader import DataLoader, WorkerInfo, get_worker_info
from .datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe
from .datapipe_decorators import (
    argument_validation,
    functional_datapipe,
    guaranteed_datapipes_determinism,
    non_deterministic,
    runtime_validation,
    runtime_validation_disabled,
)
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info",
           "random_split", "DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe",
           "argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
           "non_deterministic", "runtime_validation", "runtime_validation_disabled"]
