"""Map-style and iterable datasets, and the ways to combine and split them."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar, cast

import numpy as np

import lucid

from ._batch import StackedSamples
from ._rng import numpy_rng

T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset(Generic[T_co]):
    """A map-style dataset: ``__getitem__(index)`` returns one sample.

    Subclasses may also define ``__getitems__(indices) -> list`` that returns a whole batch of
    samples at once (vectorised); the DataLoader uses it when present.
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other: Dataset[Any]) -> ConcatDataset[Any]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: ``__iter__`` yields samples.

    With ``num_workers > 0`` every worker iterates its own copy; split the stream with
    ``lucid.data.get_worker_info()`` to avoid duplicates.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other: Dataset[Any]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


def dataset_len(dataset: object) -> int:
    """``len(dataset)``: map-style datasets and samplers define ``__len__`` though ``Dataset``
    does not declare it (as in PyTorch, where an iterable dataset may have no length); one
    without it raises ``TypeError`` as ``len`` does."""
    return len(cast(Sized, dataset))


def _first_dim(t: Any) -> int:
    shape = getattr(t, "shape", None)
    if shape is None or len(shape) == 0:
        raise ValueError(f"TensorDataset needs tensors with a first dimension, got {t!r}")
    return int(shape[0])


class TensorDataset(Dataset[tuple[Any, ...]]):
    """Samples are the rows of the given tensors (all with the same first dimension).

    Example:
        >>> import numpy as np, lucid
        >>> ds = TensorDataset(lucid.tensor(np.zeros((4, 2))), lucid.tensor(np.arange(4)))
        >>> len(ds), ds[1][1].item()
        (4, 1)
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = [_first_dim(t) for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"Size mismatch between tensors: first dimensions are {sizes}")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices: Sequence[int]) -> StackedSamples:
        """One fancy-index per tensor instead of one Python call per sample."""
        idx = np.asarray(indices, dtype=np.int64)
        return StackedSamples(*(_take_rows(t, idx) for t in self.tensors))

    def __len__(self) -> int:
        return _first_dim(self.tensors[0])


def _take_rows(t: Any, idx: np.ndarray) -> Any:
    """Rows ``idx`` of a tensor or array, as one tensor or array (a list for anything else)."""
    if isinstance(t, lucid.Tensor) and t.device == "cpu":
        return lucid.from_numpy(t.array[idx])
    if isinstance(t, np.ndarray):
        return t[idx]
    return [t[int(i)] for i in idx]


class StackDataset(Dataset[Any]):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) across datasets."""

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args and kwargs:
            raise ValueError("StackDataset takes datasets as positional or keyword, not both")
        parts: list[Any] = list(args) if args else list(kwargs.values())
        if not parts:
            raise ValueError("StackDataset needs at least one dataset")
        lengths = [len(p) for p in parts]
        if any(n != lengths[0] for n in lengths):
            raise ValueError(f"Size mismatch between datasets: lengths are {lengths}")
        self._length = lengths[0]
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets."""

    def __init__(self, datasets: Iterable[Dataset[T_co]]) -> None:
        self.datasets: list[Dataset[T_co]] = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        sizes = [dataset_len(d) for d in self.datasets]
        self.cumulative_sizes: list[int] = list(itertools.accumulate(sizes))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        offset = self.cumulative_sizes[which - 1] if which > 0 else 0
        if which >= len(self.datasets):
            raise IndexError(f"index {idx} is out of range for a dataset of length {len(self)}")
        return self.datasets[which][idx - offset]


class ChainDataset(IterableDataset[Any]):
    """The chaining of iterable datasets, one after the other."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            total += dataset_len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: Sequence[int]) -> Sequence[T_co]:
        mapped = [int(self.indices[i]) for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            batch: Sequence[T_co] = getitems(mapped)
            return batch
        return [self.dataset[i] for i in mapped]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_from_fractions(fractions: Sequence[float], n: int) -> list[int]:
    lengths = [int(math.floor(n * f)) for f in fractions]
    for i in range(n - sum(lengths)):  # hand the remainder out round-robin
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return lengths


def random_split(
    dataset: Dataset[T_co],
    lengths: Sequence[int | float],
    generator: Any = None,
) -> list[Subset[T_co]]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1 (the
    remainder is handed out round-robin). The permutation is drawn from ``generator`` (a
    ``lucid.Generator``), else from the default generator.

    Example:
        >>> import lucid
        >>> a, b = random_split(range(10), [0.7, 0.3], generator=lucid.Generator().manual_seed(0))
        >>> len(a), len(b)
        (7, 3)
    """
    n = dataset_len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and n != 1:
        if any(f < 0 or f > 1 for f in lengths):
            raise ValueError(f"Fractions must be in [0, 1], got {list(lengths)}")
        counts = _lengths_from_fractions(lengths, n)
    else:
        counts = [int(x) for x in lengths]
        if any(c != x or c < 0 for c, x in zip(counts, lengths)):
            raise ValueError(
                f"lengths must be non-negative integers or fractions summing to 1, "
                f"got {list(lengths)}"
            )
    if sum(counts) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset! "
            f"(lengths sum to {sum(counts)}, dataset has {n})"
        )
    perm = numpy_rng(generator).permutation(n).tolist()
    offsets = np.cumsum([0, *counts]).tolist()
    return [Subset(dataset, perm[offsets[i] : offsets[i + 1]]) for i in range(len(counts))]
