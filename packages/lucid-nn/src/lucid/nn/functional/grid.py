"""Sampling at arbitrary points: ``grid_sample`` and ``affine_grid`` (spatial transformers).

``grid_sample`` reads ``input`` at the normalised ``(x, y[, z])`` points of ``grid`` (-1 and 1
are the edges; ``align_corners`` says whether they are the corner pixels' centres or outer
edges), with PyTorch's padding rules. It is composed of lucid ops: the source coordinates and
the interpolation weights are arithmetic on ``grid``, the values are one ``gather`` per tap
(2^d for bilinear, 16 for bicubic), so gradients flow to both ``input`` and ``grid`` and double
backward works.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import lucid
from lucid import Tensor
from lucid.nn.functional.vision import cubic_weights

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _align_corners(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False "
            "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            stacklevel=3,
        )
        return False
    return bool(align_corners)


# -- coordinates ----------------------------------------------------------------------------------
def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] -> pixel coordinates (corner centres, or outer edges of the corner pixels)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflect about ``low`` and ``high`` (given doubled, so half-pixel bounds are integers)."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    flips = (coord / span).floor()
    extra = coord - flips * span
    out: Tensor = lucid.where(flips % 2 == 0, extra + low, span - extra + low)
    return out


def _pad_coordinates(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Where an out-of-range coordinate reads: itself ("zeros"), clipped, or reflected."""
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord = _reflect(coord, *bounds)
    return coord.clamp(0, size - 1)


# -- reading values -------------------------------------------------------------------------------
def _read(flat: Tensor, sizes: Sequence[int], where: Sequence[Tensor]) -> Tensor:
    """``input`` at integer-valued coordinates (one float tensor per spatial dim, each
    ``(N, *out)``), zero where any is outside; ``flat`` is the input as ``(N, C, prod(sizes))``."""
    n, c = flat.shape[:2]
    inside: Tensor | None = None
    index: Tensor | None = None
    for coord, size in zip(where, sizes):
        ok = (coord >= 0) & (coord <= size - 1)
        inside = ok if inside is None else inside & ok
        part = coord.clamp(0, size - 1).detach().long()
        index = part if index is None else index * size + part
    assert index is not None and inside is not None
    out_shape = index.shape[1:]
    picked = flat.gather(2, index.reshape(n, 1, -1).expand(n, c, index[0].numel()))
    values: Tensor = picked.reshape(n, c, *out_shape) * inside.unsqueeze(1).to(flat.dtype)
    return values


def _product(factors: list[Tensor]) -> Tensor:
    out = factors[0]
    for f in factors[1:]:
        out = out * f
    return out


def _bilinear(flat: Tensor, sizes: Sequence[int], coords: list[Tensor]) -> Tensor:
    lows = [c.floor().detach() for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    out: Tensor | None = None
    for corner in itertools.product((0, 1), repeat=len(sizes)):
        weight = _product([f if bit else 1 - f for f, bit in zip(fracs, corner)])
        value = _read(flat, sizes, [lo + bit for lo, bit in zip(lows, corner)])
        term = value * weight.unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out


def _bicubic(flat: Tensor, sizes: Sequence[int], coords: list[Tensor], padding_mode: str,
             align_corners: bool) -> Tensor:  # fmt: skip
    """4x4 taps with Keys' cubic weights (PyTorch's A = -0.75); each tap's integer coordinate
    is padded on its own, as torch does."""
    lows = [c.floor().detach() for c in coords]
    weights = [cubic_weights(c - lo) for c, lo in zip(coords, lows)]
    out: Tensor | None = None
    for taps in itertools.product(range(4), repeat=len(sizes)):
        where = [
            _pad_coordinates(lo + (k - 1), size, padding_mode, align_corners)
            for lo, k, size in zip(lows, taps, sizes)
        ]
        weight = _product([w[k] for w, k in zip(weights, taps)])
        term = _read(flat, sizes, where) * weight.unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out


def _check_grid_sample(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")  # fmt: skip
    if padding_mode not in _PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")  # fmt: skip
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got {sizes}")  # fmt: skip
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")  # fmt: skip
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")  # fmt: skip
    if input.dtype != grid.dtype or not input.dtype.is_floating_point:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same floating "
                           f"point dtype, but input has {input.dtype.name} and grid has "
                           f"{grid.dtype.name}")  # fmt: skip
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def grid_sample(
    input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
    align_corners: bool | None = None
) -> Tensor:  # fmt: skip
    """Sample ``input`` ``(N, C, [D,] H, W)`` at ``grid`` ``(N, [D_o,] H_o, W_o, 2 or 3)``.

    ``grid[..., 0]`` is x (along W), ``grid[..., 1]`` y (along H), ``grid[..., 2]`` z (along
    D). Modes "bilinear" (trilinear on 5-D input), "nearest", "bicubic" (4-D); padding
    "zeros", "border", "reflection". As torch's, ``align_corners=None`` warns and means False.

    >>> grid = lucid.zeros(1, 1, 1, 2)  # the centre
    >>> grid_sample(lucid.arange(4.0).reshape(1, 1, 2, 2), grid, align_corners=False).item()
    1.5
    """
    _check_grid_sample(input, grid, mode, padding_mode)
    corners = _align_corners(align_corners)
    sizes = input.shape[2:]
    nd = len(sizes)
    flat = input.reshape(*input.shape[:2], -1)
    # grid's last dim runs x, y, z: the reverse of the input's spatial dims
    coords = [_unnormalize(grid[..., nd - 1 - a], sizes[a], corners) for a in range(nd)]
    if mode == "bicubic":
        return _bicubic(flat, sizes, coords, padding_mode, corners)
    coords = [_pad_coordinates(c, s, padding_mode, corners) for c, s in zip(coords, sizes)]
    if mode == "nearest":
        return _read(flat, sizes, [c.round() for c in coords])
    return _bilinear(flat, sizes, coords)


# -- affine grids ---------------------------------------------------------------------------------
def _base_coordinates(n: int, align_corners: bool, like: Tensor) -> Tensor:
    """torch's linspace_from_neg_one: n points over [-1, 1], pulled in by half a pixel unless
    ``align_corners``."""
    points: Tensor
    if n <= 1:
        points = lucid.zeros(n, dtype=like.dtype, device=like.device)
        return points
    points = lucid.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    if not align_corners:
        points = points * ((n - 1) / n)
    return points


def _check_affine(theta: Tensor, size: Sequence[int], align_corners: bool) -> None:
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")  # fmt: skip
    nd = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        what = f"{nd}D affine matrices of shape Nx{nd}x{nd + 1}"
        raise ValueError(f"Expected a batch of {what} for size {list(size)}. Got "
                         f"{tuple(theta.shape)}.")  # fmt: skip
    if align_corners and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=3,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid ``(N, [D,] H, W, 2 or 3)`` of the affine maps ``theta``
    (``(N, 2, 3)`` for a 4-D ``size``, ``(N, 3, 4)`` for 5-D), for :func:`grid_sample`.

    >>> identity = lucid.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> affine_grid(identity, [1, 1, 2, 2], align_corners=True)[0, 0].tolist()
    [[-1.0, -1.0], [1.0, -1.0]]
    """
    corners = _align_corners(align_corners)
    size = [int(s) for s in size]
    _check_affine(theta, size, corners)
    spatial = size[2:]
    nd = len(spatial)
    columns = []
    for k in range(nd):  # x runs along the last spatial dim, y the one before, ...
        dim = nd - 1 - k
        shape = [1] * nd
        shape[dim] = spatial[dim]
        axis = _base_coordinates(spatial[dim], corners, theta).reshape(shape)
        columns.append(axis.expand(tuple(spatial)))
    columns.append(lucid.ones(*spatial, dtype=theta.dtype, device=theta.device))
    base = lucid.stack(columns, -1).reshape(1, -1, nd + 1)
    grid: Tensor = (base @ theta.transpose(1, 2)).reshape(size[0], *spatial, nd)
    return grid
