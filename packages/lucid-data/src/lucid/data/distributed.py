"""DistributedSampler: each of ``num_replicas`` processes sees its own shard of the data."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sized

import numpy as np

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _from_env(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value is None else int(value)


class DistributedSampler(Sampler[int]):
    """Restricts loading to the shard of ``rank`` out of ``num_replicas``.

    Without ``num_replicas`` / ``rank`` they come from the ``WORLD_SIZE`` / ``RANK``
    environment variables (default 1 and 0). With ``shuffle`` the permutation is seeded by
    ``seed + epoch``: identical on every replica, new each epoch (call ``set_epoch`` before each
    epoch). Without ``drop_last`` the data are padded by repeating indices so every replica
    gets the same number of samples; with it the tail is dropped.

    Example:
        >>> s = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)
        >>> list(s)
        [1, 4, 7, 0]
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        num_replicas = _from_env("WORLD_SIZE", 1) if num_replicas is None else num_replicas
        rank = _from_env("RANK", 0) if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"num_replicas should be a positive integer, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch: with ``shuffle``, each epoch gets a different (shared) order."""
        self.epoch = epoch
