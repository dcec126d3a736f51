"""torch's lower-level names of ordinary ops: constant_pad_nd, fill, nonzero_static,
split_with_sizes and the ``unsafe_`` splits.

``unsafe_split`` / ``unsafe_chunk`` are torch's splits whose outputs skip the view bookkeeping;
lucid's splits are cheap already, so they are the ordinary ones here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lucid._creation import zeros_like
from lucid._tensor import Tensor
from lucid.autograd.function import Function, composite
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import index_int
from lucid.ops.join import cat, chunk, pad, split
from lucid.ops.sorting import nonzero

OPS = OpTable(
    op("constant_pad_nd", sample((2, 3), args=((1, 2),), gg=True),
       sample((2, 3, 4), args=((1, 0, 0, 2), 1.5), tag="value"),
       sample((3, 4), args=((-1, 1),), tag="crop"), method=False),
    op("fill", sample((2, 3), args=(1.5,)), method=False),
    op("nonzero_static", sample((3, 4), domain="int", high=2, size=5, tag="pad"),
       sample((3, 4), domain="int", high=2, size=2, fill_value=7, tag="cut"),
       nograd="indices"),
    op("split_with_sizes", sample((5, 3), args=([1, 3, 1],)),
       sample((2, 5), args=([2, 0, 3], 1), tag="dim")),
    op("unsafe_split", sample((5, 3), args=(2,))),
    op("unsafe_split_with_sizes", sample((5, 3), args=([4, 1],))),
    op("unsafe_chunk", sample((5, 3), args=(2, 1))),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:  # noqa: A002
    """``input`` padded with ``value`` (``pad`` as :func:`lucid.nn.functional.pad`'s: last dim
    first; negative entries crop), as ``torch.constant_pad_nd``."""
    return _pad(input, pad, "constant", value)


_pad = pad  # the parameter above shadows the op's name


class Fill(Function):
    """Every element set to ``value``: no gradient to ``input``; a tensor ``value`` gets the sum."""

    @staticmethod
    def forward(ctx: Any, a: Any, value: Any) -> Any:
        return ctx.xp.full(a.shape, value, dtype=a.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return zeros_like(g), (g.sum() if ctx.needs_input_grad[1] else None)


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A tensor like ``input`` with every element ``value`` (a number or a 0-d tensor), as
    ``torch.fill`` (the out-of-place ``Tensor.fill_``)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(
            "fill only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    return Fill.apply(input, value.to(input.dtype) if isinstance(value, Tensor) else value)


@composite
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """The first ``size`` rows of ``nonzero(input)``, padded with ``fill_value`` rows up to
    ``size``: an ``(size, input.ndim)`` int64 tensor whatever the data
    (``torch.nonzero_static``)."""
    n = None if isinstance(size, bool) else index_int(size)
    if n is None or n < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be a non-negative int, got {size!r}")
    size = n
    found: Tensor = nonzero(input)[:size]
    missing = size - found.shape[0]
    if missing == 0:
        return found
    filler = found.new_full((missing, found.shape[1]), fill_value)
    return cat([found, filler])


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """Pieces of ``input`` along ``dim`` of the listed sizes, which must sum to its size there
    (``torch.split_with_sizes``)."""
    return split(input, [int(s) for s in split_sizes], dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``lucid.split`` with an int size (``torch.unsafe_split``)."""
    return split(input, split_size, dim)


def unsafe_split_with_sizes(
    input: Tensor,  # noqa: A002
    split_sizes: Sequence[int],
    dim: int = 0,
) -> tuple[Tensor, ...]:
    """:func:`split_with_sizes` (``torch.unsafe_split_with_sizes``)."""
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``lucid.chunk`` (``torch.unsafe_chunk``)."""
    return chunk(input, chunks, dim)
