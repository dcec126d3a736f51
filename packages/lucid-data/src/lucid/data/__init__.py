"""lucid.data: datasets, samplers, the DataLoader, transforms and standard dataset readers.

Example:
    >>> import numpy as np, lucid
    >>> from lucid.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(lucid.tensor(np.ones((6, 2), np.float32)), lucid.tensor(np.arange(6)))
    >>> x, y = next(iter(DataLoader(ds, batch_size=4, shuffle=True)))
    >>> x.shape, y.shape
    ((4, 2), (4,))
"""

from __future__ import annotations

import importlib
from typing import Any

from . import io, models, ops
from ._batch import StackedSamples
from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
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

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "StackedSamples",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "io",
    "models",
    "ops",
    "random_split",
]

# `import torchvision` loads torchvision.datasets, .transforms, .utils and .tv_tensors too, so
# programs call `torchvision.utils.make_grid(...)` after that one import. These are loaded on
# first access rather than at import: `lucid.utils.data` (torch.utils.data's path) is this
# package, and its users should not pay for the image datasets and transforms.
_LAZY_SUBMODULES = ("datasets", "transforms", "utils", "tv_tensors")


def __getattr__(name: str) -> Any:
    """``lucid.data.datasets`` / ``transforms`` / ``utils`` / ``tv_tensors`` after a plain
    ``import lucid.data``, as torchvision's are after ``import torchvision``."""
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
