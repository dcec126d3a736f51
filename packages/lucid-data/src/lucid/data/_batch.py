"""StackedSamples: a whole batch read at once, kept as stacked columns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

import lucid


def _row(column: Any, i: int) -> Any:
    if isinstance(column, lucid.Tensor):
        if column.device == "cpu":
            return lucid.from_numpy(column.array[i, ...])  # ``...`` keeps 0-d rows arrays
        return column[i]
    return column[i]


class StackedSamples(Sequence[tuple[Any, ...]]):
    """The samples of one batch, stored column by column (e.g. images, labels).

    What a vectorised ``Dataset.__getitems__`` can return instead of a list of tuples: it
    reads as a sequence of sample tuples (rows are made only when asked for), and
    ``default_collate`` takes the columns as they are instead of splitting and re-stacking them.
    Columns are lucid tensors, numpy arrays (first dimension = batch) or lists.

    Example:
        >>> import numpy as np
        >>> batch = StackedSamples(np.zeros((3, 2), np.float32), [0, 1, 2])
        >>> len(batch), batch[1][1]
        (3, 1)
    """

    def __init__(self, *columns: Any) -> None:
        if not columns:
            raise ValueError("StackedSamples needs at least one column")
        sizes = [len(c) for c in columns]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"StackedSamples columns differ in length: {sizes}")
        self.columns = columns
        self._length = sizes[0]

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if not -self._length <= index < self._length:
            raise IndexError(f"index {index} is out of range for a batch of {self._length}")
        return tuple(_row(c, index) for c in self.columns)

    def collate(self, collate_column: Any) -> list[Any]:
        """One batch per column, as ``default_collate`` would give for the rows."""
        out = []
        for c in self.columns:
            if isinstance(c, lucid.Tensor):
                out.append(c)
            elif isinstance(c, np.ndarray) and c.dtype.kind not in "OSUV":
                out.append(lucid.from_numpy(np.ascontiguousarray(c)))
            else:
                out.append(collate_column(list(c)))
        return out
