"""``InterpolationMode`` has torchvision's seven members (timm's ``timm.data.transforms`` maps
all of them at import: ``InterpolationMode.BOX`` raised AttributeError); ``resize`` does
``nearest-exact`` as torch's ``interpolate``; the PIL-only filters are refused in
torchvision's words for tensors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data import transforms as T
from lucid.data.transforms import InterpolationMode
from lucid.data.transforms import functional as F

# torchvision 0.2x's members, in its order
_TORCHVISION_MODES = {
    "NEAREST": "nearest",
    "NEAREST_EXACT": "nearest-exact",
    "BILINEAR": "bilinear",
    "BICUBIC": "bicubic",
    "BOX": "box",
    "HAMMING": "hamming",
    "LANCZOS": "lanczos",
}


def test_members_are_torchvisions() -> None:
    assert {m.name: m.value for m in InterpolationMode} == _TORCHVISION_MODES
    assert InterpolationMode("nearest-exact") is InterpolationMode.NEAREST_EXACT


@pytest.mark.parametrize("mode", ["box", "hamming", "lanczos"])
def test_pil_filters_are_refused_for_arrays(mode: str) -> None:
    x = np.zeros((3, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=f"Interpolation mode '{mode}' is unsupported"):
        F.resize(x, [2, 2], interpolation=InterpolationMode(mode))
    with pytest.raises(ValueError, match=f"Interpolation mode '{mode}' is unsupported"):
        F.rotate(x, 30.0, interpolation=InterpolationMode(mode))


def test_nearest_exact_is_refused_by_rotate() -> None:
    x = np.zeros((3, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="Interpolation mode 'nearest-exact' is unsupported"):
        F.rotate(x, 30.0, interpolation=InterpolationMode.NEAREST_EXACT)


@pytest.mark.parity
@pytest.mark.parametrize("size", [(9, 4), (3, 2), (6, 5), (13, 11)])
def test_nearest_exact_resize_matches_interpolate(size: tuple[int, int]) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).random((1, 2, 6, 5)).astype(np.float32)
    ours = T.Resize(size, interpolation=InterpolationMode.NEAREST_EXACT).batch(x)
    theirs = torch.nn.functional.interpolate(torch.from_numpy(x), size=size, mode="nearest-exact")
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=0)


def test_nearest_exact_uint8_tensor_keeps_dtype() -> None:
    x = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4)  # C, H, W
    out = F.resize(lucid.tensor(x), [2, 2], interpolation="nearest-exact")
    assert out.dtype == lucid.uint8
    np.testing.assert_array_equal(out.numpy(), x[:, 1::2, 1::2])
