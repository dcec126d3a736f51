"""torch's ``*_copy`` ops: each view op's result as a new tensor with its own storage.

torch keeps them for code that must not alias (functionalization, export). Each is the view
followed by a row-major copy, so gradients are the view's. The sparse ones (``indices_copy``,
``values_copy``, ``crow_indices_copy``, ...) need a sparse layout, which lucid does not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lucid._memory_format import contiguous_format
from lucid._tensor import Tensor
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import normalize_dim
from lucid.ops.arrange import select
from lucid.ops.complex import view_as_complex, view_as_real
from lucid.ops.join import split, unbind
from lucid.ops.movement import diagonal
from lucid.ops.shape import (
    expand,
    narrow,
    permute,
    squeeze,
    t,
    to_memory_format,
    transpose,
    unfold,
    unsqueeze,
    view,
)

_T = "complex values: test_core_ops_copies.py"
OPS = OpTable(
    op("alias_copy", sample((2, 3)), method=False),
    op("detach_copy", sample((2, 3)), method=False, nograd="detached"),
    op("diagonal_copy", sample((3, 4)), sample((2, 3, 3), args=(-1, 1, 2), tag="offset"),
       method=False),
    op("expand_copy", sample((3, 1), args=((2, 3, 4),)), sample((2, 1), args=([-1, 3],), tag="neg"),
       method=False),
    op("narrow_copy", sample((2, 4), args=(1, 1, 2)), method=False),
    op("permute_copy", sample((2, 3, 4), args=((2, 0, 1),)), method=False),
    op("select_copy", sample((2, 3, 4), args=(1, -1)), method=False),
    op("slice_copy", sample((5, 3), args=(0, 1, 5, 2)),
       sample((2, 6), dim=1, start=-4, tag="kw"), method=False),
    op("split_copy", sample((5, 3), args=(2,)), method=False),
    op("split_with_sizes_copy", sample((5, 3), args=([2, 3],)), method=False),
    op("squeeze_copy", sample((3, 1, 2), args=(1,)), sample((1, 3, 1), tag="all"), method=False),
    op("t_copy", sample((2, 3)), method=False),
    op("transpose_copy", sample((2, 3, 4), args=(0, 2)), method=False),
    op("unbind_copy", sample((2, 3), args=(1,)), method=False),
    op("unfold_copy", sample((2, 7), args=(1, 3, 2)), method=False),
    op("unsqueeze_copy", sample((3, 2), args=(-1,)), method=False),
    op("view_copy", sample((3, 4), args=((2, 6),)), method=False),
    op("view_as_real_copy", method=False, untested=_T),
    op("view_as_complex_copy", method=False, untested=_T),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _fresh(x: Tensor) -> Tensor:
    """A row-major copy of ``t``: torch's ``*_copy`` ops return contiguous tensors (a clone
    keeps a transposed or expanded view's layout, so ``permute_copy``'s array was not
    row-major while lucid reported it contiguous: its ``view`` then copied instead of
    sharing storage)."""
    return to_memory_format(x, contiguous_format)


def alias_copy(input: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` (``torch.alias_copy``: the copy form of ``torch.alias``)."""
    return _fresh(input)


def detach_copy(input: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` cut from the graph (``torch.detach_copy``)."""
    return _fresh(input.detach())


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """``diagonal(...)`` as a new tensor (``torch.diagonal_copy``)."""
    return _fresh(diagonal(input, offset, dim1, dim2))


def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:  # noqa: A002
    """``expand(size)`` as a new tensor (``torch.expand_copy``; ``implicit`` is for tracing and
    changes nothing)."""
    return _fresh(expand(input, *size))


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """``narrow(...)`` as a new tensor (``torch.narrow_copy``; a bad ``dim`` is torch's
    RuntimeError here for a dim past the last)."""
    if dim >= max(input.ndim, 1):  # torch checks this bound apart (a negative dim: IndexError)
        raise RuntimeError(
            "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false. "
            f"(narrow_copy(): dim {dim} is out of range for a {input.ndim}-dimensional tensor)"
        )
    if input.ndim and length < 0:  # torch's narrow_copy checks start + length in one message
        n = input.shape[normalize_dim(dim, input.ndim)]
        st = int(start)
        if not -n <= st <= n:
            raise IndexError(
                f"start out of range (expected to be in range of [{-n}, {n}], but got {st})"
            )
        st = st + n if st < 0 else st
        raise RuntimeError(f"start ({st}) + length ({length}) exceeds dimension size ({n}).")
    return _fresh(narrow(input, dim, start, length))


def permute_copy(input: Tensor, dims: Sequence[int]) -> Tensor:  # noqa: A002
    """``permute(dims)`` as a new tensor (``torch.permute_copy``)."""
    return _fresh(permute(input, *dims))


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """``select(dim, index)`` as a new tensor (``torch.select_copy``)."""
    return _fresh(select(input, dim, index))


def slice_copy(
    input: Tensor,  # noqa: A002
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    """``input[..., start:end:step, ...]`` along ``dim`` as a new tensor (``torch.slice_copy``)."""
    if step <= 0:
        raise RuntimeError(f"slice step must be positive, got {step}")
    d = normalize_dim(dim, input.ndim)
    return _fresh(input[(slice(None),) * d + (slice(start, end, step),)])


def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``split(split_size, dim)``, each piece a new tensor (``torch.split_copy``)."""
    return tuple(_fresh(p) for p in split(input, split_size, dim))


def split_with_sizes_copy(
    input: Tensor,  # noqa: A002
    split_sizes: Sequence[int],
    dim: int = 0,
) -> tuple[Tensor, ...]:
    """``split_with_sizes(...)``, each piece a new tensor (``torch.split_with_sizes_copy``)."""
    return tuple(_fresh(p) for p in split(input, [int(s) for s in split_sizes], dim))


def squeeze_copy(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """``squeeze(dim)`` as a new tensor (``torch.squeeze_copy``)."""
    return _fresh(squeeze(input, dim))


def t_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``t()`` as a new tensor (``torch.t_copy``)."""
    return _fresh(t(input))


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """``transpose(dim0, dim1)`` as a new tensor (``torch.transpose_copy``)."""
    return _fresh(transpose(input, dim0, dim1))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``unbind(dim)``, each slice a new tensor (``torch.unbind_copy``)."""
    return tuple(_fresh(p) for p in unbind(input, dim))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """``unfold(dimension, size, step)`` as a new tensor (``torch.unfold_copy``)."""
    return _fresh(unfold(input, dimension, size, step))


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """``unsqueeze(dim)`` as a new tensor (``torch.unsqueeze_copy``)."""
    return _fresh(unsqueeze(input, dim))


def view_copy(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    """``view(size)`` (a shape or a dtype) as a new tensor (``torch.view_copy``)."""
    return _fresh(view(input, size))


def view_as_real_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``view_as_real(input)`` as a new tensor (``torch.view_as_real_copy``)."""
    return _fresh(view_as_real(input))


def view_as_complex_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``view_as_complex(input)`` as a new tensor (``torch.view_as_complex_copy``)."""
    return _fresh(view_as_complex(input))
