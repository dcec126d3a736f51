"""grid_sample and affine_grid vs PyTorch: values and gradients (input, grid, theta), float32."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-5
TF = torch.nn.functional


def _close(mine, theirs):
    theirs = theirs.detach().numpy()
    mine = np.zeros_like(theirs) if mine is None else mine.detach().numpy()
    np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=ATOL)


def _pair(values: np.ndarray):
    return lucid.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)


@pytest.mark.parametrize(
    "nd,mode", [(2, "bilinear"), (2, "nearest"), (2, "bicubic"), (3, "bilinear"), (3, "nearest")]
)
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_parity(nd, mode, padding_mode, align_corners):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5, 6)[: nd + 2]).astype(np.float32)
    grid = (rng.standard_normal((2, 3, 4, 2)[: nd + 1] + (nd,)) * 0.9).astype(np.float32)
    (lx, tx), (lg, tg) = _pair(x), _pair(grid)
    ly = F.grid_sample(lx, lg, mode, padding_mode, align_corners)
    ty = TF.grid_sample(tx, tg, mode, padding_mode, align_corners)
    _close(ly, ty)
    w = rng.standard_normal(ty.shape).astype(np.float32)
    (ly * lucid.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(lx.grad, tx.grad)
    _close(lg.grad, tg.grad)  # nearest: torch's zeros, lucid's None (no path to the grid)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 3, 1, 5], [2, 1, 3, 4, 5]])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_parity(size, align_corners):
    nd = len(size) - 2
    theta = np.random.default_rng(1).standard_normal((2, nd, nd + 1)).astype(np.float32)
    lt, tt = _pair(theta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unit-size grid with align_corners: both warn
        tgrid = TF.affine_grid(tt, size, align_corners=align_corners)
        lgrid = F.affine_grid(lt, size, align_corners=align_corners)
    _close(lgrid, tgrid)
    (lgrid * lgrid).sum().backward()
    (tgrid * tgrid).sum().backward()
    _close(lt.grad, tt.grad)


def test_spatial_transformer_round_trip_parity():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    theta = (np.eye(2, 3) + rng.standard_normal((2, 2, 3)) * 0.2).astype(np.float32)
    (lx, tx), (lt, tt) = _pair(x), _pair(theta)
    ly = F.grid_sample(lx, F.affine_grid(lt, [2, 3, 8, 8], False), align_corners=False)
    ty = TF.grid_sample(tx, TF.affine_grid(tt, [2, 3, 8, 8], False), align_corners=False)
    _close(ly, ty)
    ly.square().mean().backward()
    ty.square().mean().backward()
    _close(lt.grad, tt.grad)
    _close(lx.grad, tx.grad)
