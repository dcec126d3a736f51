"""Statistics built from other ops: NaN-skipping sums and means, aminmax, quantiles, mode,
covariance and correlation, differences, trapezoid integration and histograms.

Each is written with differentiable ops (``where``, ``gather``, ``sort``, ``matmul``), so its
gradient and double gradient come from theirs; index choices (the mode, a quantile's
neighbours) are computed without a graph and their values gathered.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, NamedTuple

from lucid import dtypes
from lucid._creation import arange, from_data, linspace
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import composite
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import normalize_dim, scalar_type_name, to_float
from lucid.ops.elementwise import where
from lucid.ops.join import cat
from lucid.ops.reduction import (
    ValuesIndices,
    _exact_out,
    _float_out,
    _out_arg,
    _run_dtype,
    _values_indices_out,
    _write_reduced,
    amax,
    amin,
)
from lucid.ops.sorting import searchsorted

_INDEX = "integer (index) result"
OPS = OpTable(
    op("nansum", sample((3, 4), gg=True), sample((3, 4), dim=1, keepdim=True, tag="dim")),
    op("nanmean", sample((3, 4), dim=0, gg=True), sample((2, 3, 2), dim=(0, 2), tag="dims")),
    op("aminmax", sample((3, 4), domain="away"), sample((3, 4), domain="away", dim=1,
       keepdim=True, tag="dim")),
    op("quantile", sample((3, 5), domain="away", args=(0.3,), dim=1, tag="scalar"),
       sample((4, 3), domain="away", args=(0.6,), tag="flat"),
       sample((4, 3), domain="away", args=(0.25,), dim=0, keepdim=True,
              interpolation="midpoint", tag="midpoint"),
       sample((6,), domain="away", args=(0.7,), interpolation="nearest", tag="nearest"),
       sample((3, 5), domain="away", args=(0.45,), dim=-1, interpolation="lower", tag="lower"),
       sample((3, 5), domain="away", args=(0.45,), dim=-1, interpolation="higher",
              tag="higher")),
    op("nanquantile", sample((3, 5), domain="away", args=(0.3,), dim=1)),
    op("mode", sample((3, 5), domain="away", dim=0)),
    op("cov", sample((3, 6), gg=True), sample((3, 6), correction=0, tag="correction0"),
       sample((5,), tag="1d")),
    op("corrcoef", sample((3, 6), gg=True)),
    op("diff", sample((3, 5), gg=True), sample((3, 5), dim=0, n=2, tag="n2")),
    op("trapezoid", sample((3, 5), gg=True), sample((3, 5), dx=0.5, dim=0, tag="dx"),
       sample((3, 5), (3, 5), tag="x"), method=False),
    op("trapz", alias="trapezoid", method=False),
    op("cumulative_trapezoid", sample((3, 5), gg=True), sample((3, 5), (5,), tag="x"),
       method=False),
    op("histogram", sample((20,), args=(4,), tag="bins"),
       sample((20,), args=(5,), range=(-1.0, 1.0), density=True, tag="range"),
       nograd="counts"),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class MinMax(NamedTuple):
    """``(min, max)``, what ``aminmax`` returns (torch.return_types.aminmax)."""

    min: Tensor
    max: Tensor


class Histogram(NamedTuple):
    """``(hist, bin_edges)``, what ``histogram`` returns (torch.return_types.histogram)."""

    hist: Tensor
    bin_edges: Tensor


def _zero_nan(a: Tensor) -> Tensor:
    if not a.dtype.is_floating_point:
        return a
    out: Tensor = where(a.isnan(), a.new_zeros(()), a)
    return out


def nansum(
    input: Tensor,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Sum over ``dim`` treating NaN as zero (integer and bool inputs sum as int64; with
    ``out=``, in its dtype)."""
    dtype = _run_dtype("nansum", dtype, out)
    return _write_reduced("nansum", _zero_nan(input).sum(dim, keepdim, dtype=dtype), out)  # type: ignore[no-any-return]


def nanmean(
    input: Tensor,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Mean over ``dim`` of the non-NaN entries (NaN where a slice has none); floats only."""
    if out is not None:
        (o,) = _out_arg("nanmean", out)
        if dtype is None and o.dtype.category >= dtypes.FLOAT:
            dtype = o.dtype
        result = nanmean(input, dim, keepdim, dtype=dtype)
        return _float_out("nanmean", result, out)  # type: ignore[no-any-return]
    a = input if dtype is None else input.to(dtype)
    if not a.dtype.is_floating_point:
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got "
            f"{a.dtype.name.capitalize()}"
        )
    count = (~a.isnan()).sum(dim, keepdim)
    return nansum(a, dim, keepdim) / count


def _aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:  # noqa: A002
    """``(amin, amax)`` over ``dim`` (all elements without one); ties share the gradient."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity."
            )
        lo, hi = amin(input), amax(input)
        if keepdim:
            lo, hi = lo.reshape((1,) * input.ndim), hi.reshape((1,) * input.ndim)
        return MinMax(lo, hi)
    return MinMax(amin(input, dim, keepdim), amax(input, dim, keepdim))


def aminmax(
    input: Tensor, *, dim: int | None = None, keepdim: bool = False, out: Any = None
) -> MinMax:  # noqa: A002
    """``(amin, amax)`` over ``dim`` (all elements without one); ties share the gradient.
    ``out=`` takes ``(min, max)``, with torch's rules."""
    result: MinMax = _exact_out("aminmax", _aminmax(input, dim=dim, keepdim=keepdim), out)
    return result


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(
    name: str, a: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str, skip: bool
) -> Tensor:
    if a.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if a.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"{name}() interpolation must be one of {', '.join(_INTERPOLATIONS)}. "
            f"Got '{interpolation}'"
        )
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not a.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qt = q.detach()
    else:
        qt = from_data(float(q), dtype=a.dtype, device=a.device)
    if bool(((qt < 0) | (qt > 1)).any()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x, d = a.reshape(-1), 0
        kept: tuple[int, ...] = (1,) * a.ndim
    else:
        d = normalize_dim(dim, a.ndim)
        x = a if a.ndim else a.reshape(1)
        kept = tuple(1 if k == d else s for k, s in enumerate(a.shape))
    x = x.movedim(d, -1)
    values = x.sort(-1).values  # NaN sorts last
    n = x.shape[-1]
    qs = qt.reshape(-1)
    with grad_mode.no_grad():
        nan = x.isnan()
        if skip:  # the ranks among the non-NaN entries (all NaN: rank 0, a NaN)
            last = ((~nan).sum(-1, keepdim=True) - 1).clamp(min=0).to(a.dtype)
            rank = qs * last
        else:  # any NaN makes the result NaN: point at the last entry, a NaN
            rank = where(nan.any(-1, keepdim=True), x.new_full((), n - 1.0), qs * (n - 1))
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()
        lo_i = rank.floor().long()
        hi_i = rank.ceil().long()
        weight = rank - lo_i.to(a.dtype)
    lo = values.gather(-1, lo_i.expand(values.shape[:-1] + lo_i.shape[-1:]))
    hi = values.gather(-1, hi_i.expand(values.shape[:-1] + hi_i.shape[-1:]))
    if interpolation == "midpoint":
        out = lo + (hi - lo) * 0.5
    elif interpolation == "linear":
        out = lo + (hi - lo) * weight
    else:
        out = lo
    out = out.movedim(-1, 0)  # (len(q), ...reduced shape)
    out = out.reshape((qs.shape[0],) + (kept if keepdim else _drop(kept, d, dim, a.ndim)))
    return out if isinstance(q, Tensor) and q.ndim == 1 else out.squeeze(0)


def _drop(kept: tuple[int, ...], d: int, dim: int | None, ndim: int) -> tuple[int, ...]:
    if dim is None:
        return ()
    return kept[:d] + kept[d + 1 :] if ndim else ()


@composite
def quantile(
    input: Tensor,  # noqa: A002
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Any = None,
) -> Tensor:
    """The ``q``-th quantiles (a float or a 1-D tensor, in [0, 1]) over ``dim`` (all
    elements without one); ``interpolation`` between neighbours: linear, lower, higher,
    midpoint or nearest. A NaN in a slice makes its quantiles NaN. A 1-D ``q`` adds a leading
    dim of its length."""
    result = _quantile("quantile", input, q, dim, keepdim, interpolation, skip=False)
    return _exact_out("quantile", result, out)  # type: ignore[no-any-return]


@composite
def nanquantile(
    input: Tensor,  # noqa: A002
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Any = None,
) -> Tensor:
    """:func:`quantile` of the non-NaN entries (NaN only where a slice is all NaN)."""
    result = _quantile("nanquantile", input, q, dim, keepdim, interpolation, skip=True)
    return _exact_out("nanquantile", result, out)  # type: ignore[no-any-return]


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None  # noqa: A002
         ) -> ValuesIndices:  # fmt: skip
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of equally
    frequent ones) and the last index where it occurs; the gradient goes to that entry."""
    if out is not None:
        return _values_indices_out("mode", mode(input, dim, keepdim), out, input)  # type: ignore[no-any-return]
    d = normalize_dim(dim, input.ndim)
    x = input if input.ndim else input.reshape(1)
    if x.shape[d] == 0:
        raise IndexError(
            f"mode(): Expected reduction dim {d} to have non-zero size (input shape "
            f"{list(input.shape)})."
        )
    with grad_mode.no_grad():
        m = x.detach().movedim(d, -1)
        n = m.shape[-1]
        same = m.unsqueeze(-1) == m.unsqueeze(-2)
        counts = same.sum(-1)
        best = counts == counts.amax(-1, keepdim=True)
        # the smallest value among the most frequent: rank each entry by sorted position
        order = m.argsort(-1)
        rank = order.argsort(-1)
        first = where(best, rank, rank.new_full((), n)).argmin(-1, keepdim=True)
        value = m.gather(-1, first)
        position = arange(n, device=x.device)
        idx = where(m == value, position, position.new_full((), -1)).amax(-1, keepdim=True)
        idx = idx.movedim(-1, d)
    values = x.gather(d, idx)
    if not keepdim or input.ndim == 0:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return ValuesIndices(values, idx)


def _check_cov_weights(name: str, weights: Tensor, n: int) -> None:
    """torch's checks of ``cov``'s ``fweights`` (integral) or ``aweights`` (floating), in its
    order and words."""
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {weights.ndim} dimensions")  # fmt: skip
    integral = name == "fweights"
    ok = weights.dtype.category == dtypes.INT if integral else weights.dtype.is_floating_point
    if not ok:
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{scalar_type_name(weights.dtype)} dtype")  # fmt: skip
    count = weights.numel()
    if count != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {count} != {n}")  # fmt: skip
    if weights.numel() and bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(
    input: Tensor,  # noqa: A002
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (observations in columns); a
    1-D input is one variable (a 0-d result). ``fweights``: integer frequency weights per
    observation; ``aweights``: observation weights; ``correction``: 1 for Bessel's."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.ndim} dimensions")  # fmt: skip
    x = to_float(input)
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        _check_cov_weights("fweights", fweights, n)
        w = fweights.reshape(-1).to(x.dtype)
    if aweights is not None:
        _check_cov_weights("aweights", aweights, n)
        aw = aweights.reshape(-1).to(x.dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = x.mean(1, keepdim=True)
        norm: Any = n - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        if aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
    if isinstance(norm, Tensor):
        norm = where(norm <= 0, norm.new_zeros(()), norm)
    elif norm <= 0:
        norm = 0
    xm = x - avg
    c: Tensor = ((xm if w is None else xm * w) @ xm.mT) / norm
    return c.reshape(()) if c.shape[0] == 1 else c  # one variable: a 0-d result, as torch


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the variables in ``input``'s rows (clipped to
    [-1, 1]); a 1-D input gives ``cov / cov`` (1, or NaN for a constant)."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1)


def diff(
    input: Tensor,  # noqa: A002
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``xor`` for bool), after joining
    ``prepend`` and ``append`` to ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim)
    if n == 0:  # torch returns the input itself, without prepend and append
        return input
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        k = x.shape[d]
        if k == 0:
            break
        hi, lo = x.narrow(d, 1, k - 1), x.narrow(d, 0, k - 1)
        x = hi.logical_xor(lo) if x.dtype is dtypes.bool_ else hi - lo
    return x


def _spacing(y: Tensor, x: Tensor | None, dx: Any, d: int, name: str) -> Tensor | float:
    if x is None:
        return 1.0 if dx is None else dx
    if dx is not None:
        raise TypeError(f"{name}(): pass either x or dx, not both")
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(
                f"{name}: There must be one `x` value for each sample point (x has "
                f"{x.shape[0]} values, y has {y.shape[d]} along dim {d})"
            )
        shape = [1] * y.ndim
        shape[d] = x.shape[0]
        x = x.reshape(tuple(shape))
    dxs: Tensor = diff(x, dim=d if x.ndim == y.ndim else -1)
    return dxs


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``: sample points ``x`` (1-D or shaped like ``y``) or a
    constant spacing ``dx`` (default 1)."""
    d = normalize_dim(dim, y.ndim)
    spacing = _spacing(y, x, dx, d, "trapezoid")
    k = y.shape[d]
    if k == 0:
        empty: Tensor = to_float(y).sum(d)
        return empty
    mids = (y.narrow(d, 1, k - 1) + y.narrow(d, 0, k - 1)) / 2
    total: Tensor = (mids * spacing).sum(d)
    return total


trapz = trapezoid


def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """The running trapezoid rule along ``dim`` (one entry fewer than ``y`` along it)."""
    d = normalize_dim(dim, y.ndim)
    spacing = _spacing(y, x, dx, d, "cumulative_trapezoid")
    k = y.shape[d]
    if k == 0:
        same: Tensor = to_float(y)
        return same
    mids = (y.narrow(d, 1, k - 1) + y.narrow(d, 0, k - 1)) / 2
    running: Tensor = (mids * spacing).cumsum(d)
    return running


def histogram(
    input: Tensor,  # noqa: A002
    bins: Any = 100,
    *,
    range: Any = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> Histogram:
    """``(hist, bin_edges)``: counts (or summed ``weight``) of ``input`` in ``bins`` equal bins
    over ``range`` (the data's range by default), or between the edges of a 1-D ``bins``
    tensor; the last bin includes its right edge. ``density`` divides by the total times
    the bin width."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same "
                           f"dtype, but got input {input.dtype}")  # fmt: skip
    data = input.detach().reshape(-1)
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.dtype is not input.dtype:
            raise RuntimeError(
                f"torch.histogram: bins tensor should have one dimension and the input's dtype "
                f"({input.dtype}), but got {bins.ndim} dimensions of {bins.dtype}"
            )
        edges = bins.detach()
    else:
        if int(bins) <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for bins")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif data.numel():
            lo, hi = float(data.min()), float(data.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(
                f"torch.histogram(): max must be larger than min, got min={lo}, max={hi}"
            )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # numpy's and torch's empty-range widening
        edges = linspace(lo, hi, int(bins) + 1, dtype=input.dtype, device=input.device)
    nb = edges.shape[0] - 1
    with grad_mode.no_grad():
        inside = (data >= edges[0]) & (data <= edges[-1])
        pos = searchsorted(edges, data, right=True) - 1
        pos = pos.clamp(0, builtins.max(nb - 1, 0))
        w = inside.to(input.dtype)
        if weight is not None:
            w = w * weight.detach().reshape(-1).to(input.dtype)
        hist = input.new_zeros((nb,)).index_add(0, pos, w)
        if density:
            widths = edges[1:] - edges[:-1]
            hist = hist / (hist.sum() * widths)
    return Histogram(hist, edges)
