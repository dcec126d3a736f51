"""Fetchers: turn what the sampler yields into one collated batch (in any process)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from .dataset import IterableDataset

Collate = Callable[[Any], Any]


class MapFetcher:
    """Reads ``dataset[i]`` for the sampled indices (one ``__getitems__`` call when defined)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Collate) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self._getitems = getattr(dataset, "__getitems__", None)

    def fetch(self, index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self._getitems is not None:
            data = self._getitems(index)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableFetcher:
    """Pulls the next ``batch_size`` samples (``index``) from the dataset's iterator."""

    def __init__(
        self, dataset: Any, auto_collation: bool, collate_fn: Collate, drop_last: bool
    ) -> None:
        self.iterator: Iterator[Any] = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = list(itertools.islice(self.iterator, index))
        if len(data) < index:
            self.ended = True
            if not data or self.drop_last:
                raise StopIteration
        return self.collate_fn(data)


def make_fetcher(
    dataset: Any, auto_collation: bool, collate_fn: Collate, drop_last: bool
) -> MapFetcher | IterableFetcher:
    if isinstance(dataset, IterableDataset):
        return IterableFetcher(dataset, auto_collation, collate_fn, drop_last)
    return MapFetcher(dataset, auto_collation, collate_fn)
