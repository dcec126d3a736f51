"""Transforms against PyTorch (resize, normalise, pad) on the same arrays."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.data import transforms as T

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def test_bilinear_resize_matches_interpolate_without_antialias() -> None:
    x = np.random.default_rng(0).random((2, 3, 7, 9)).astype(np.float32)
    ours = T.Resize((5, 13)).batch(x)
    theirs = torch.nn.functional.interpolate(
        torch.from_numpy(x), size=(5, 13), mode="bilinear", align_corners=False
    ).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=1e-7)


def test_nearest_resize_matches_interpolate() -> None:
    x = np.random.default_rng(1).random((1, 2, 6, 5)).astype(np.float32)
    ours = T.Resize((9, 4), interpolation="nearest").batch(x)
    theirs = torch.nn.functional.interpolate(torch.from_numpy(x), size=(9, 4), mode="nearest")
    np.testing.assert_array_equal(ours, theirs.numpy())


@pytest.mark.parametrize(("mode", "torch_mode"), [("reflect", "reflect"), ("edge", "replicate")])
def test_pad_matches_torch_pad(mode: str, torch_mode: str) -> None:
    x = np.random.default_rng(2).random((1, 3, 5, 6)).astype(np.float32)
    ours = T.Pad((1, 2, 3, 1), padding_mode=mode).batch(x)
    theirs = torch.nn.functional.pad(torch.from_numpy(x), (1, 3, 2, 1), mode=torch_mode)
    np.testing.assert_array_equal(ours, theirs.numpy())
