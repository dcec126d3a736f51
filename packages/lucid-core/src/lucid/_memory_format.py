"""Memory formats (``torch.memory_format``): the layout objects and the stride rules behind
``Tensor.to(memory_format=)``, ``contiguous``, ``is_contiguous`` and ``*_like``.

A channels-last tensor on a backend that shows strides (NumPy) is an NHWC-contiguous array
viewed as NCHW through a transpose, so its strides are torch's. Such arrays are remembered
here (by identity, weakly): the NumPy conv kernels also return NHWC-backed arrays for NCHW
inputs, which torch reports as contiguous, so strides alone cannot tell the formats apart.
An op whose input array is remembered and whose output is channels-last strided marks its
output too (what TensorIterator's layout propagation gives in torch for elementwise ops).
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "layout",
    "memory_format",
    "preserve_format",
    "sparse_coo",
    "strided",
]


class memory_format:  # noqa: N801 - torch's name
    """A memory format (``torch.memory_format``): ``lucid.contiguous_format``,
    ``lucid.channels_last``, ``lucid.channels_last_3d`` or ``lucid.preserve_format``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"lucid.{self._name}"

    def __reduce__(self) -> str:
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


class layout:  # noqa: N801 - torch's name
    """A tensor layout (``torch.layout``): ``lucid.strided`` (every lucid tensor's) or
    ``lucid.sparse_coo`` (accepted where torch makes COO tensors; lucid stores them dense)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"lucid.{self._name}"

    def __reduce__(self) -> str:
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def check_layout(value: Any, fn: str) -> None:
    """Accept ``layout=None`` or ``layout=lucid.strided``; refuse every other layout with an
    error that says why (lucid has only strided tensors), and non-layouts as torch does."""
    if value is None or value is strided:
        return
    if isinstance(value, layout) or type(value).__name__ == "layout":
        raise RuntimeError(
            f"{fn}(): lucid creates only strided tensors, got layout={value!r} (lucid has no "
            "sparse or compressed layouts; see docs/differences.md)"
        )
    raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, not {type(value).__name__}")


# Physical dim order (outermost first) of each channels-last format.
_PERM = {channels_last: (0, 2, 3, 1), channels_last_3d: (0, 2, 3, 4, 1)}
_RANK = {channels_last: 4, channels_last_3d: 5}

# id(array) -> weak reference, for the arrays that hold a channels-last tensor.
_marked: dict[int, weakref.ReferenceType[Any]] = {}


def check(fmt: Any, fn: str) -> memory_format:
    """``fmt`` if it is a memory format (``None`` reads as ``preserve_format``), else the
    TypeError torch raises."""
    if fmt is None:
        return preserve_format
    if not isinstance(fmt, memory_format):
        raise TypeError(
            f"{fn}(): argument 'memory_format' must be lucid.memory_format, "
            f"not {type(fmt).__name__}"
        )
    return fmt


def check_rank(fmt: memory_format, ndim: int) -> None:
    """Raise as torch does when a channels-last format meets a tensor of another rank."""
    rank = _RANK.get(fmt)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")


def is_channels_last_contiguous(
    fmt: memory_format, shape: tuple[int, ...], strides: tuple[int, ...]
) -> bool:
    """torch's ``compute_channels_last_contiguous_2d/3d``: dense in ``fmt``'s dim order (dims
    of size 1 may have any stride); False for a tensor of another rank."""
    perm = _PERM[fmt]
    if len(shape) != len(perm):
        return False
    expected = 1
    for d in reversed(perm):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def suggest(shape: tuple[int, ...], strides: tuple[int, ...]) -> memory_format:
    """torch's ``suggest_memory_format``: the channels-last format where the strides order
    the dims as it does (its ``is_channels_last_strides_2d/3d``), else contiguous_format."""
    fmt = channels_last_format_of(len(shape))
    if fmt is None or strides[1] == 0:
        return contiguous_format
    low = 0
    for d in reversed(_PERM[fmt]):
        if shape[d] == 0 or strides[d] < low:
            return contiguous_format
        if d == 0 and low == strides[1]:  # N111 and sliced N11W read as contiguous, as torch
            return contiguous_format
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return fmt


def channels_last_format_of(ndim: int) -> memory_format | None:
    """The channels-last format for a tensor of ``ndim`` dims, if there is one."""
    return channels_last if ndim == 4 else channels_last_3d if ndim == 5 else None


def to_layout(xp: Any, arr: Any, fmt: memory_format) -> Any:
    """``arr`` (a strided array) re-laid-out densely in ``fmt``, same values and shape."""
    perm = _PERM.get(fmt)
    if perm is None:  # (NumPy's ascontiguousarray makes a 0-d array 1-d)
        return arr if len(arr.shape) == 0 else xp.ascontiguousarray(arr)
    inverse = tuple(sorted(range(len(perm)), key=perm.__getitem__))
    out = xp.transpose(xp.array(xp.transpose(arr, perm), order="C", copy=True), inverse)
    mark(out)
    return out


def mark(arr: Any) -> None:
    """Remember ``arr`` as the storage of a channels-last tensor."""
    key = id(arr)

    def forget(_ref: Any) -> None:
        _marked.pop(key, None)

    _marked[key] = weakref.ref(arr, forget)


def is_marked(arr: Any) -> bool:
    """Whether ``arr`` holds a channels-last tensor (its strides are still dense in it)."""
    ref = _marked.get(id(arr))
    return ref is not None and ref() is arr


def marked_strides(arr: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``arr``'s element strides if it is a remembered channels-last array, else None."""
    if not _marked or not is_marked(arr):
        return None
    fmt = channels_last_format_of(len(shape))
    strides = getattr(arr, "strides", None)
    if fmt is None or strides is None:
        return None
    elem = tuple(s // arr.itemsize for s in strides)
    if not is_channels_last_contiguous(fmt, shape, elem):
        return None
    return channels_last_strides(fmt, shape)  # torch's strides, size-1 dims included


def channels_last_strides(fmt: memory_format, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides torch gives a dense tensor of ``shape`` in ``fmt`` (its
    ``get_channels_last_strides_2d/3d``)."""
    out = [0] * len(shape)
    acc = 1
    for d in reversed(_PERM[fmt]):
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def propagate(in_arrays: Any, out: Any) -> None:
    """Mark op outputs that stay channels-last strided when an input array was marked."""
    if not any(is_marked(a) for a in in_arrays if getattr(a, "strides", None) is not None):
        return
    for o in out if type(out) is tuple else (out,):
        shape = getattr(o, "shape", None)
        strides = getattr(o, "strides", None)
        if shape is None or strides is None:
            continue
        fmt = channels_last_format_of(len(shape))
        elem = tuple(s // o.itemsize for s in strides)
        if fmt is not None and is_channels_last_contiguous(fmt, tuple(shape), elem):
            mark(o)
