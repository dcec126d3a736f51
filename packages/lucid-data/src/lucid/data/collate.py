"""default_collate: a list of samples -> one batch of lucid tensors (on the CPU)."""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid

from ._batch import StackedSamples

__all__ = ["default_collate", "default_convert"]

_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _stack_arrays(arrays: Sequence[np.ndarray]) -> Any:
    first = arrays[0]
    if first.dtype.kind in "OSUV":
        raise TypeError(_ERROR.format(first.dtype))
    if any(a.shape != first.shape for a in arrays):
        shapes = sorted({a.shape for a in arrays})
        raise RuntimeError(f"stack expects each array to be equal size, but got shapes {shapes}")
    return lucid.from_numpy(np.stack(arrays))


def _collate_tensors(batch: Sequence[Any]) -> Any:
    if all(t.device == "cpu" for t in batch):
        return _stack_arrays([t.array for t in batch])
    return lucid.stack(list(batch))


def _collate_sequence(batch: Sequence[Any]) -> Any:
    elem = batch[0]
    size = len(elem)
    if any(len(e) != size for e in batch):
        raise RuntimeError("each element in list of batch should be of equal size")
    transposed = list(zip(*batch))
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in transposed))
    if isinstance(elem, tuple):
        return [default_collate(s) for s in transposed]
    if isinstance(elem, collections.abc.MutableSequence):
        out = copy.copy(elem)
        for i, samples in enumerate(transposed):
            out[i] = default_collate(samples)
        return out
    try:
        return type(elem)([default_collate(s) for s in transposed])
    except TypeError:
        return [default_collate(s) for s in transposed]


def _collate_mapping(batch: Sequence[Any]) -> Any:
    elem = batch[0]
    collated = {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, collections.abc.MutableMapping):
        out = copy.copy(elem)
        out.update(collated)
        return out
    try:
        return type(elem)(collated)
    except TypeError:
        return collated


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists, dicts, namedtuples.

    Tensors and numpy arrays are stacked along a new first dimension; Python floats become a
    float64 tensor, ints int64, bools bool (as in PyTorch); strings and bytes are kept as a
    list; a tuple sample gives a list of batches, a namedtuple a namedtuple.

    Example:
        >>> import numpy as np
        >>> xs, ys = default_collate([(np.zeros(2, np.float32), 1), (np.ones(2, np.float32), 0)])
        >>> xs.shape, ys.tolist()
        ((2, 2), [1, 0])
    """
    if isinstance(batch, StackedSamples):  # a vectorised __getitems__: already stacked
        return batch.collate(default_collate)
    if len(batch) == 0:
        raise ValueError("default_collate: got an empty batch")
    elem = batch[0]
    if isinstance(elem, lucid.Tensor):
        return _collate_tensors(batch)
    if isinstance(elem, np.ndarray):
        return _stack_arrays(batch)
    if isinstance(elem, np.generic):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        return lucid.from_numpy(np.array(batch))
    if isinstance(elem, bool):
        return lucid.from_numpy(np.array(batch, dtype=np.bool_))
    if isinstance(elem, int):
        return lucid.from_numpy(np.array(batch, dtype=np.int64))
    if isinstance(elem, float):
        return lucid.from_numpy(np.array(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(batch)
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequence(batch)
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Turn numpy arrays (recursively) into lucid tensors, without stacking anything.

    Used when automatic batching is off (``batch_size=None``).
    """
    if isinstance(data, lucid.Tensor):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "OSUV":
            return data
        return lucid.from_numpy(data)
    if isinstance(data, np.generic):
        return data if data.dtype.kind in "OSUV" else lucid.from_numpy(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data
