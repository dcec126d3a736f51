"""grid_sample and affine_grid: known values, float64 gradchecks (input, grid, theta), errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)


def _t(*shape: int, scale: float = 1.0) -> lucid.Tensor:
    values = RNG.standard_normal(shape) * scale
    return lucid.tensor(values, dtype=lucid.float64, requires_grad=True)


def _identity(n: int, nd: int) -> lucid.Tensor:
    eye = np.eye(nd, nd + 1)
    return lucid.tensor(np.broadcast_to(eye, (n, nd, nd + 1)).copy(), dtype=lucid.float64)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_grid_reproduces_the_input(mode, align_corners):
    x = _t(2, 3, 4, 5)
    grid = F.affine_grid(_identity(2, 2), [2, 3, 4, 5], align_corners=align_corners)
    y = F.grid_sample(x, grid, mode, align_corners=align_corners)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_identity_grid_reproduces_a_volume():
    x = _t(1, 2, 3, 4, 5)
    grid = F.affine_grid(_identity(1, 3), [1, 2, 3, 4, 5], align_corners=False)
    assert grid.shape == (1, 3, 4, 5, 3)
    y = F.grid_sample(x, grid, align_corners=False)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_bilinear_value_between_pixels_and_padding_modes():
    x = lucid.arange(4.0).reshape(1, 1, 2, 2)  # [[0, 1], [2, 3]]
    centre = lucid.zeros(1, 1, 1, 2)
    middle = F.grid_sample(x, centre, align_corners=True)
    assert middle.item() == pytest.approx(1.5, rel=1e-7, abs=1e-7)
    far_right = lucid.tensor([[[[3.0, -1.0]]]])  # x beyond the right edge, top row
    assert F.grid_sample(x, far_right, padding_mode="zeros", align_corners=True).item() == 0.0
    border = F.grid_sample(x, far_right, padding_mode="border", align_corners=True)
    assert border.item() == pytest.approx(1.0, rel=1e-7, abs=1e-7)
    # reflection about x = 1 (align_corners): 3 -> -1, the left column
    reflected = F.grid_sample(x, far_right, padding_mode="reflection", align_corners=True)
    assert reflected.item() == pytest.approx(0.0, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_gradcheck_input_and_grid(mode, padding_mode, align_corners):
    x, grid = _t(1, 2, 3, 4), _t(1, 2, 3, 2, scale=0.8)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, mode, padding_mode, align_corners),
                     (x, grid))  # fmt: skip


@pytest.mark.parametrize("padding_mode", ["zeros", "reflection"])
def test_grid_sample_5d_gradcheck(padding_mode):
    x, grid = _t(1, 2, 2, 3, 3), _t(1, 2, 2, 1, 3, scale=0.8)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, "bilinear", padding_mode, False), (x, grid))


def test_grid_sample_nearest_gradient_reaches_the_input_only():
    x, grid = _t(1, 2, 3, 4), _t(1, 2, 2, 2, scale=0.8)
    assert gradcheck(lambda a: F.grid_sample(a, grid.detach(), "nearest", align_corners=False),
                     (x,))  # fmt: skip


def test_grid_sample_double_backward():
    x, grid = _t(1, 1, 3, 3), _t(1, 2, 2, 2, scale=0.8)
    assert gradgradcheck(lambda a, g: F.grid_sample(a, g, align_corners=False), (x, grid))


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 3, 2, 4]])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_gradcheck(size, align_corners):
    nd = len(size) - 2
    theta = _t(2, nd, nd + 1)
    assert gradcheck(lambda t: F.affine_grid(t, size, align_corners=align_corners), (theta,))


def test_affine_grid_values_without_align_corners():
    grid = F.affine_grid(_identity(1, 2), [1, 1, 1, 2], align_corners=False)
    np.testing.assert_allclose(grid.numpy(), [[[[-0.5, 0.0], [0.5, 0.0]]]], rtol=0, atol=1e-12)


def test_align_corners_none_warns_as_torch():
    x, grid = lucid.ones(1, 1, 2, 2), lucid.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="changed to align_corners=False since 1.3.0"):
        F.grid_sample(x, grid)
    with pytest.warns(UserWarning, match="changed to align_corners=False since 1.3.0"):
        F.affine_grid(lucid.zeros(1, 2, 3), [1, 1, 2, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(x, grid, align_corners=False)


@pytest.mark.parametrize(
    "x_shape,g_shape,kw,error,message",
    [
        ((1, 1, 2, 2), (1, 1, 1, 2), dict(mode="area"), ValueError, "expected mode to be"),
        ((1, 1, 2, 2), (1, 1, 1, 2), dict(padding_mode="wrap"), ValueError, "padding_mode"),
        ((1, 1, 2), (1, 1, 2), {}, RuntimeError, "expected 4D or 5D input"),
        ((2, 1, 2, 2), (1, 1, 1, 2), {}, RuntimeError, "same batch size"),
        ((1, 1, 2, 2), (1, 1, 1, 3), {}, RuntimeError, "size 2 in last dimension"),
        ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), dict(mode="bicubic"), RuntimeError, "only supports 4D"),
    ],
)
def test_grid_sample_errors(x_shape, g_shape, kw, error, message):
    with pytest.raises(error, match=message):
        F.grid_sample(lucid.ones(*x_shape), lucid.zeros(*g_shape), align_corners=False, **kw)


def test_grid_sample_dtype_mismatch():
    with pytest.raises(RuntimeError, match="input has float32 and grid has float64"):
        F.grid_sample(lucid.ones(1, 1, 2, 2), lucid.zeros(1, 1, 1, 2, dtype=lucid.float64),
                      align_corners=False)  # fmt: skip


@pytest.mark.parametrize(
    "theta_shape,size,error,message",
    [
        ((1, 3, 4), [1, 1, 2, 2], ValueError, "Nx2x3 for size"),
        ((1, 2, 3), [1, 1, 2, 2, 2], ValueError, "Nx3x4 for size"),
        ((1, 2, 3), [1, 1, 2], NotImplementedError, "only supports 4D and 5D sizes"),
        ((1, 2, 3), [1, 1, 0, 2], ValueError, "non-zero, positive output size"),
    ],
)
def test_affine_grid_errors(theta_shape, size, error, message):
    with pytest.raises(error, match=message):
        F.affine_grid(lucid.zeros(*theta_shape), size, align_corners=False)
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(lucid.zeros(1, 2, 3, dtype=lucid.int64), [1, 1, 2, 2], align_corners=False)
