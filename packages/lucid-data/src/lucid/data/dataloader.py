"""DataLoader: batches from a dataset, in the main process or in worker processes."""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from lucid import accelerator

from ._fetch import IterableFetcher, make_fetcher
from ._pool import MultiProcessIter, WorkerPool, resolve_context
from ._rng import derive_seed, draw_seed, seeded_default_generator
from ._worker import WorkerConfig
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, dataset_len
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DataLoader"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _SingleProcessIter:
    """Fetches each batch in the main process, under the same per-batch seed workers use."""

    def __init__(self, loader: DataLoader[Any], base_seed: int) -> None:
        self._index_iter = iter(loader._index_sampler)
        self._fetcher = make_fetcher(
            loader.dataset, loader._auto_collation, loader.collate_fn, loader.drop_last
        )
        self._base_seed = base_seed
        self._idx = 0

    def __iter__(self) -> _SingleProcessIter:
        return self

    def __next__(self) -> Any:
        index = next(self._index_iter)
        if isinstance(self._fetcher, IterableFetcher):
            return self._fetcher.fetch(index)
        with seeded_default_generator(derive_seed(self._base_seed, self._idx)):
            data = self._fetcher.fetch(index)
        self._idx += 1
        return data


class DataLoader(Generic[T_co]):
    """Iterates over ``dataset`` in batches, like ``torch.utils.data.DataLoader``.

    Batches are collated into lucid tensors on the CPU (``default_collate``). With
    ``shuffle=True`` the order is drawn from ``generator`` (a ``lucid.Generator``) or the
    default generator, so ``lucid.manual_seed`` fixes it. Each batch of a map-style dataset is
    fetched with the default generator seeded from a per-epoch base seed and the batch number,
    so random transforms give the same batches with or without workers.

    With ``num_workers > 0`` batches are made by that many worker processes (``fork`` on Linux,
    else ``spawn``: then the dataset, ``collate_fn`` and ``worker_init_fn`` must be picklable),
    each keeping ``prefetch_factor`` batches in flight, delivered in order. An exception in a
    worker is re-raised here with the worker's traceback; a worker that dies, or no batch within
    ``timeout`` seconds (if > 0), raises ``RuntimeError``. Workers stop at the end of each epoch,
    or with ``persistent_workers=True`` when the loader is garbage collected.

    Example:
        >>> import numpy as np, lucid
        >>> from lucid.data import TensorDataset
        >>> ds = TensorDataset(lucid.tensor(np.arange(10.0)))
        >>> [b[0].shape for b in DataLoader(ds, batch_size=4)]
        [(4,), (4,), (2,)]
    """

    def __init__(
        self,
        dataset: Dataset[T_co] | Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.pin_memory = pin_memory  # accepted for compatibility: batches stay on the CPU
        self.pin_memory_device = pin_memory_device  # likewise (torch's deprecated option)
        # torch lets workers deliver out of order when False; lucid's deliver in order either
        # way, which is one of the orders False allows
        self.in_order = in_order
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = (
            resolve_context(multiprocessing_context) if multiprocessing_context else None
        )
        self.generator = generator
        self.persistent_workers = persistent_workers
        self._pool: WorkerPool | None = None

        if isinstance(dataset, IterableDataset):
            _check_iterable_options(shuffle, sampler, batch_sampler)
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None:
            sampler = _default_sampler(dataset, bool(shuffle), generator)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FROZEN and getattr(self, "_initialized", False):
            raise ValueError(f"{name} attribute should not be set after DataLoader is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Iterable[Any]:
        """What the fetchers receive: index lists, single indices, or (iterable) batch sizes."""
        if isinstance(self.dataset, IterableDataset):
            return itertools.repeat(self.batch_size)
        return self.batch_sampler if self._auto_collation else self.sampler  # type: ignore[return-value]

    def __iter__(self) -> Iterator[Any]:
        if self.pin_memory and not accelerator.is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=2,
            )
        base_seed = draw_seed(self.generator)
        if self.num_workers == 0:
            return _SingleProcessIter(self, base_seed)
        if self._pool is not None and self._pool.alive:
            pool = self._pool
        else:
            if self._pool is not None:  # a persistent pool that lost a worker: start afresh
                self._pool.shutdown(force=True)
            _check_worker_number_rationality(self.num_workers)
            pool = WorkerPool(self._worker_config(base_seed), self.multiprocessing_context)
            self._pool = pool if self.persistent_workers else None
        assert self.prefetch_factor is not None
        return MultiProcessIter(
            pool,
            iter(self._index_sampler),
            base_seed,
            self.prefetch_factor,
            self.timeout,
            self.persistent_workers,
        )

    def _worker_config(self, base_seed: int) -> WorkerConfig:
        return WorkerConfig(
            dataset=self.dataset,
            auto_collation=self._auto_collation,
            collate_fn=self.collate_fn,
            drop_last=self.drop_last,
            base_seed=base_seed,
            init_fn=self.worker_init_fn,
            num_workers=self.num_workers,
        )

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = dataset_len(self.dataset)
            if self.batch_size is None:
                return n
            if self.drop_last:
                return n // self.batch_size
            return -(-n // self.batch_size)
        return dataset_len(self._index_sampler)

    def shutdown_workers(self) -> None:
        """Stop persistent workers now (they also stop when the loader is collected)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _default_sampler(dataset: Any, shuffle: bool, generator: Any) -> Iterable[Any]:
    if isinstance(dataset, IterableDataset):
        return itertools.repeat(None)
    if shuffle:
        return RandomSampler(dataset, generator=generator)
    return SequentialSampler(dataset)


def _usable_cpus() -> tuple[int | None, bool]:
    """The logical CPUs this process may run on, and whether its cpuset was taken into account."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)), True
    return os.cpu_count(), False


def _check_worker_number_rationality(num_workers: int) -> None:
    """torch's warning when a loader starts more worker processes than there are CPUs."""
    suggest, cpuset_checked = _usable_cpus()
    if suggest is not None and num_workers <= suggest:
        return
    if suggest is None:
        suggested = (
            "DataLoader is not able to compute a suggested max number of worker in current system."
        )
    else:
        cpuset = "" if cpuset_checked else " (`cpuset` is not taken into account)"
        suggested = (
            f"Our suggested max number of worker in current system is {suggest}{cpuset}, which "
            "is smaller than what this DataLoader is going to create."
        )
    warnings.warn(
        f"This DataLoader will create {num_workers} worker processes in total. {suggested} "
        "Please be aware that excessive worker creation might get DataLoader running slow or "
        "even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
        stacklevel=3,
    )


def _check_workers(
    num_workers: int, timeout: float, prefetch_factor: int | None, persistent: bool
) -> None:
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to disable "
            "multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing. Let "
            "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
        )
    if prefetch_factor is not None and prefetch_factor < 1:
        raise ValueError(f"prefetch_factor option should be positive, got {prefetch_factor}")
    if persistent and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_iterable_options(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    for name, value in (("shuffle", shuffle), ("sampler", sampler)):
        if value not in (None, False):
            raise ValueError(
                f"DataLoader with IterableDataset: expected unspecified {name} option, "
                f"but got {name}={value}"
            )
    if batch_sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
            f"but got batch_sampler={batch_sampler}"
        )
