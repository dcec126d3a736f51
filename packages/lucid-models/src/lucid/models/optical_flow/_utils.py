"""RAFT's helpers (``torchvision.models.optical_flow._utils``): sampling at absolute pixel
coordinates, the coordinate grid and the convex upsampling of a flow field."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from lucid.nn import functional as F


def grid_sample(
    img: Any, absolute_grid: Any, mode: str = "bilinear", align_corners: bool | None = None
) -> Any:
    """``F.grid_sample`` at absolute pixel coordinates (``[..., (x, y)]``)."""
    h, w = img.shape[-2:]
    xgrid, ygrid = absolute_grid[..., :1], absolute_grid[..., 1:]
    xgrid = 2 * xgrid / (w - 1) - 1
    if h > 1:
        ygrid = 2 * ygrid / (h - 1) - 1
    grid = lucid.cat([xgrid, ygrid], dim=-1)
    return F.grid_sample(img, grid, mode=mode, align_corners=align_corners)


def make_coords_grid(batch_size: int, h: int, w: int) -> Any:
    """``(batch_size, 2, h, w)``: the x then y pixel coordinate of every position."""
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    coords = np.stack([xs, ys]).astype(np.float32)
    return lucid.tensor(np.ascontiguousarray(np.broadcast_to(coords, (batch_size, 2, h, w))))


def upsample_flow(flow: Any, up_mask: Any = None, factor: int = 8) -> Any:
    """The flow ``factor`` times larger: bilinear without ``up_mask``, else each new pixel a
    convex combination (softmax of ``up_mask``) of its 3x3 coarse neighbours."""
    b, c, h, w = flow.shape
    new_h, new_w = h * factor, w * factor
    if up_mask is None:
        return factor * F.interpolate(
            flow, size=(new_h, new_w), mode="bilinear", align_corners=True
        )
    up_mask = lucid.softmax(up_mask.reshape(b, 1, 9, factor, factor, h, w), dim=2)
    up = F.unfold(factor * flow, kernel_size=3, padding=1).reshape(b, c, 9, 1, 1, h, w)
    up = (up_mask * up).sum(dim=2)
    return up.permute(0, 1, 4, 2, 5, 3).reshape(b, c, new_h, new_w)
