"""``gradient``: derivatives estimated by finite differences (``torch.gradient``, numpy's
``gradient``): second-order central differences inside, first- or second-order one-sided ones
at the edges, on uniform spacing or on given coordinates. Composed of lucid ops, so it is
differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lucid._tensor import Tensor
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import ints_of, normalize_dim, to_float
from lucid.ops.join import cat

OPS = OpTable(
    op("gradient", sample((5,)), sample((4, 5), spacing=2.0, edge_order=2, tag="edge2"),
       sample((3, 4, 5), spacing=[2.0, 0.5], dim=(0, 2), tag="dims"), method=False),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _part(f: Tensor, d: int, start: int, stop: int | None) -> Tensor:
    return f[(slice(None),) * d + (slice(start, stop),)]


def _along(c: Tensor, d: int, ndim: int) -> Tensor:
    """Coefficients of dim ``d``, shaped to broadcast against the input."""
    return c.reshape([-1 if k == d else 1 for k in range(ndim)])


def _uniform(f: Tensor, d: int, h: float, edge_order: int) -> Tensor:
    inner = (_part(f, d, 2, None) - _part(f, d, 0, -2)) / (2 * h)
    f0, f1, f2 = (_part(f, d, k, k + 1) for k in range(3))
    g1, g2, g3 = (_part(f, d, f.shape[d] - k, f.shape[d] - k + 1 or None) for k in (1, 2, 3))
    if edge_order == 1:
        first, last = (f1 - f0) / h, (g1 - g2) / h
    else:
        first = (-1.5 * f0 + 2 * f1 - 0.5 * f2) / h
        last = (0.5 * g3 - 2 * g2 + 1.5 * g1) / h
    return cat([first, inner, last], d)


def _coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    """numpy.gradient's second-order differences on the coordinates ``x`` of dim ``d``."""
    x = x.to(f.dtype)
    hd, hs = x[1:-1] - x[:-2], x[2:] - x[1:-1]
    a, b, c = -hs / (hd * (hd + hs)), (hs - hd) / (hd * hs), hd / (hs * (hd + hs))
    n = f.ndim
    inner = (
        _along(a, d, n) * _part(f, d, 0, -2)
        + _along(b, d, n) * _part(f, d, 1, -1)
        + _along(c, d, n) * _part(f, d, 2, None)
    )
    f0, f1, f2 = (_part(f, d, k, k + 1) for k in range(3))
    m = f.shape[d]
    g3, g2, g1 = (_part(f, d, m - k, m - k + 1 or None) for k in (3, 2, 1))
    if edge_order == 1:
        first = (f1 - f0) / (x[1] - x[0])
        last = (g1 - g2) / (x[-1] - x[-2])
    else:
        dx1, dx2 = x[1] - x[0], x[2] - x[1]
        first = (
            -(2 * dx1 + dx2) / (dx1 * (dx1 + dx2)) * f0
            + (dx1 + dx2) / (dx1 * dx2) * f1
            - dx1 / (dx2 * (dx1 + dx2)) * f2
        )
        dx1, dx2 = x[-2] - x[-3], x[-1] - x[-2]
        last = (
            dx2 / (dx1 * (dx1 + dx2)) * g3
            - (dx2 + dx1) / (dx1 * dx2) * g2
            + (2 * dx2 + dx1) / (dx2 * (dx1 + dx2)) * g1
        )
    return cat([first, inner, last], d)


def gradient(
    input: Tensor,  # noqa: A002
    *,
    spacing: Any = 1,
    dim: int | Sequence[int] | None = None,
    edge_order: int = 1,
) -> tuple[Tensor, ...]:
    """The derivative of ``input`` along each of ``dim`` (every dim by default), one tensor per
    dim (``torch.gradient``). ``spacing`` is one number (the step of every dim), one number
    per dim, or one 1-D tensor of coordinates per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError(
            f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}"
        )
    f = to_float(input)
    dims = list(range(f.ndim)) if dim is None else list(ints_of(dim))
    dims = [normalize_dim(d, f.ndim) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    spacing = 1 if spacing is None else spacing
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(steps) != len(dims) and dim is not None:
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{len(steps)} and a dim argument of length {len(dims)}."
        )
    if len(steps) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {f.ndim}', since dim argument was not given, but got a list "
            f"of length {len(steps)}"
        )
    out = []
    for d, h in zip(dims, steps):
        if f.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
        if isinstance(h, Tensor):
            out.append(_coordinates(f, d, h, edge_order))
        else:
            out.append(_uniform(f, d, float(h), edge_order))
    return tuple(out)
