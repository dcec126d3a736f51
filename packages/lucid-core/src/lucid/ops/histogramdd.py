"""``histogramdd``: the D-dimensional histogram of N points (``torch.histogramdd``)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, NamedTuple

from lucid import dtypes
from lucid._creation import linspace, zeros
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.ops._registry import OpTable, op
from lucid.ops.sorting import searchsorted

OPS = OpTable(
    op("histogramdd", method=False,
       untested="returns a list of edge tensors: test_core_toplevel_names.py and the MLX list"),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class HistogramDD(NamedTuple):
    """``(hist, bin_edges)``: the counts and one tensor of edges per dimension."""

    hist: Tensor
    bin_edges: list[Tensor]


def _edges(column: Tensor, bins: Any, bounds: tuple[float, float] | None) -> Tensor:
    if isinstance(bins, Tensor):
        return bins.detach().to(column.dtype)
    if int(bins) <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins}")
    if bounds is not None:
        lo, hi = bounds
    elif column.numel():
        lo, hi = float(column.min()), float(column.max())
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(
            f"torch.histogramdd(): max must be larger than min, got min={lo}, max={hi}"
        )
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5  # numpy's and torch's empty-range widening
    return linspace(lo, hi, int(bins) + 1, dtype=column.dtype, device=column.device)


def histogramdd(
    input: Tensor,  # noqa: A002
    bins: Any = 10,
    range: Any = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> HistogramDD:
    """Counts (or summed ``weight``) of the points ``input[..., :]`` (the last dim the
    coordinates) in a grid of bins: ``bins`` is one count, a count per dimension, or a 1-D
    tensor of edges per dimension; ``range`` is ``[min_0, max_0, min_1, max_1, ...]``. The last
    bin of each dimension includes its right edge; ``density`` divides by the total times the
    bin volume."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogramdd: input should be floating point, got {input.dtype}")
    d = input.shape[-1] if input.ndim else 0
    points = input.detach().reshape(-1, d)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(per_dim) != d:
        if all(isinstance(b, int) for b in per_dim):  # torch's wording for bin counts
            raise RuntimeError(
                "histogramdd: The size of bins must be equal to the innermost dimension of the "
                "input."
            )
        raise RuntimeError(
            f"torch.histogramdd: expected {d} sequences of bin edges for a {d}-dimensional "
            f"histogram but got {len(per_dim)}"
        )
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(
            f"torch.histogramdd: range should have {2 * d} elements, but got {len(range)}"
        )
    bounds = [None if range is None else (float(range[2 * k]), float(range[2 * k + 1]))
              for k in builtins.range(d)]  # fmt: skip
    with grad_mode.no_grad():
        edges = [_edges(points[:, k], per_dim[k], bounds[k]) for k in builtins.range(d)]
        counts = [e.shape[0] - 1 for e in edges]
        inside = points.new_ones((points.shape[0],), dtype=dtypes.bool_)
        flat = zeros(points.shape[0], dtype=dtypes.int64, device=input.device)
        for k, e in enumerate(edges):
            x = points[:, k]
            inside = inside & (x >= e[0]) & (x <= e[-1])
            pos = (searchsorted(e, x, right=True) - 1).clamp(0, builtins.max(counts[k] - 1, 0))
            flat = flat * counts[k] + pos
        w = inside.to(input.dtype)
        if weight is not None:
            w = w * weight.detach().reshape(-1).to(input.dtype)
        size = 1
        for c in counts:
            size *= c
        hist = input.new_zeros((size,)).index_add(0, flat, w).reshape(counts)
        if density:
            volume = hist.new_ones(counts)
            for k, e in enumerate(edges):
                shape = [1] * d
                shape[k] = counts[k]
                volume = volume * (e[1:] - e[:-1]).reshape(shape)
            hist = hist / (hist.sum() * volume)
    return HistogramDD(hist, edges)
