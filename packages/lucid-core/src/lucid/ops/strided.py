"""``as_strided`` and its copy and scatter forms, on lucid's contiguous layout.

Lucid tensors have no storage separate from their shape, so ``as_strided`` addresses the
elements of ``input`` in row-major order (``input.reshape(-1)``): the same elements as torch's
for a contiguous input. The result is a gather (a copy, not a view: writing into it does not
change ``input``; docs/differences.md); gradients are the gather's, so overlapping windows
accumulate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lucid import dtypes
from lucid._creation import arange, zeros
from lucid._tensor import Tensor
from lucid.autograd.function import composite
from lucid.ops._registry import OpTable, op, sample
from lucid.ops.indexing import index_put, take

OPS = OpTable(
    op("as_strided", sample((3, 3), args=((2, 2), (1, 2)), gg=True),
       sample((16,), args=((2, 1, 1, 2), (1, 7, 7, 1)), tag="overlap"),
       sample((3, 3), args=((2, 2), (1, 2), 1), tag="offset")),
    op("as_strided_copy", sample((3, 3), args=((2, 2), (1, 2)), storage_offset=1),
       method=False),
    op("as_strided_scatter", sample((3, 3), (2, 2), args=((2, 2), (1, 2)), gg=True),
       sample((4, 4), (2, 2), args=((2, 2), (8, 2), 1), tag="offset")),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _strided_index(
    input: Tensor,  # noqa: A002
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int,
) -> Tensor:
    """The flat positions ``storage_offset + sum(i_d * stride_d)`` of every index of ``size``."""
    shape, steps = [int(s) for s in size], [int(s) for s in stride]
    if len(shape) != len(steps):
        raise RuntimeError(f"mismatch in length of strides and shape: size {shape}, stride {steps}")
    if any(s < 0 for s in shape) or any(s < 0 for s in steps) or storage_offset < 0:
        raise RuntimeError(
            f"as_strided: sizes, strides and storage offset must be non-negative, got size "
            f"{shape}, stride {steps}, storage_offset {storage_offset}"
        )
    needed = storage_offset + 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    if 0 not in shape and needed > input.numel():
        raise RuntimeError(
            f"setStorage: sizes {shape}, strides {steps}, storage offset {storage_offset}, "
            f"and itemsize {input.dtype.itemsize} requiring a storage size of "
            f"{needed * input.dtype.itemsize} are out of bounds for storage of size "
            f"{input.numel() * input.dtype.itemsize}"
        )
    index = zeros(shape, dtype=dtypes.int64, device=input.device) + storage_offset
    for d, (n, s) in enumerate(zip(shape, steps)):
        along = arange(n, dtype=dtypes.int64, device=input.device) * s
        index = index + along.reshape([n] + [1] * (len(shape) - d - 1))
    return index


def as_strided(
    input: Tensor,  # noqa: A002
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """The elements of ``input`` (in row-major order) at ``storage_offset + sum(i_d *
    stride_d)`` for every index ``i`` of ``size`` (``torch.as_strided``; a copy in lucid)."""
    index = _strided_index(input, size, stride, int(storage_offset or 0))
    return take(input, index)


def as_strided_copy(
    input: Tensor,  # noqa: A002
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """:func:`as_strided` (``torch.as_strided_copy``)."""
    return as_strided(input, size, stride, storage_offset)


@composite
def as_strided_scatter(
    input: Tensor,  # noqa: A002
    src: Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """A copy of ``input`` whose elements at ``as_strided(size, stride, storage_offset)``'s
    positions are ``src``'s (``torch.as_strided_scatter``)."""
    index = _strided_index(input, size, stride, int(storage_offset or 0))
    if tuple(src.shape) != tuple(index.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(index.shape)}"
        )
    flat = index_put(input.reshape(-1), (index.reshape(-1),), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)
