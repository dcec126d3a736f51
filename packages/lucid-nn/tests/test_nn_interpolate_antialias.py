"""``F.interpolate(..., antialias=True)`` and the ``lanczos`` mode against torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

CASES = [
    ((8, 8), {"size": (4, 4)}),
    ((16, 12), {"size": (5, 7)}),
    ((10, 10), {"scale_factor": 0.3}),
    ((6, 6), {"size": (9, 13)}),
    ((9, 9), {"size": (4, 4), "align_corners": True}),
    ((12, 12), {"scale_factor": (0.5, 0.25), "recompute_scale_factor": True}),
    ((7, 11), {"scale_factor": 0.45}),
]


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("hw, kw", CASES)
def test_antialiased_values_and_gradients_match_torch(
    mode: str, hw: tuple[int, int], kw: dict[str, Any]
) -> None:
    torch = pytest.importorskip("torch")
    if mode == "lanczos" and "align_corners" in kw:
        pytest.skip("align_corners is for the interpolating modes only (as torch)")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, *hw)).astype(np.float32)
    t = torch.from_numpy(x).requires_grad_(True)
    lx = lucid.from_numpy(x).requires_grad_(True)
    yt = torch.nn.functional.interpolate(t, mode=mode, antialias=True, **kw)
    yl = F.interpolate(lx, mode=mode, antialias=True, **kw)
    assert tuple(yl.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yl.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.from_numpy(g))
    yl.backward(lucid.from_numpy(g))
    np.testing.assert_allclose(lx.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_antialiased_gradient_by_finite_differences() -> None:
    rng = np.random.default_rng(1)
    x = lucid.tensor(rng.standard_normal((1, 2, 9, 7)), dtype=lucid.float64, requires_grad=True)
    for mode in ("bilinear", "bicubic", "lanczos"):
        assert lucid.autograd.gradcheck(
            lambda a, m=mode: F.interpolate(a, size=(4, 3), mode=m, antialias=True), (x,)
        )


@pytest.mark.parity
def test_uint8_images_resize_within_one_level_of_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).integers(0, 256, (1, 3, 12, 12)).astype(np.uint8)
    want = torch.nn.functional.interpolate(
        torch.from_numpy(x), size=(5, 5), mode="bilinear", antialias=True
    ).numpy()
    got = F.interpolate(lucid.from_numpy(x), size=(5, 5), mode="bilinear", antialias=True)
    assert got.dtype == lucid.uint8
    assert np.abs(got.numpy().astype(int) - want.astype(int)).max() <= 1


def test_antialias_and_lanczos_refuse_as_torch() -> None:
    with pytest.raises(ValueError, match="restricted to bilinear, bicubic, and lanczos modes"):
        F.interpolate(lucid.ones(1, 1, 4, 4), size=(2, 2), mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="requires a 4-D tensor as input"):
        F.interpolate(lucid.ones(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(lucid.ones(1, 1, 4, 4), size=(2, 2), mode="lanczos")
