"""Upsample/interpolate, PixelShuffle, Fold/Unfold vs PyTorch (float32)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-6


@pytest.mark.parametrize(
    "layer,args,kwargs,x_shape",
    [
        ("Upsample", (), dict(scale_factor=2), (2, 3, 4, 5)),
        ("Upsample", (), dict(size=(7, 3)), (2, 3, 4, 5)),
        ("Upsample", (), dict(scale_factor=2, mode="bilinear"), (2, 3, 4, 5)),
        ("Upsample", (), dict(scale_factor=1.7, mode="bilinear"), (2, 3, 4, 5)),
        ("Upsample", (), dict(size=(9, 11), mode="bilinear", align_corners=True), (2, 3, 4, 5)),
        ("Upsample", (), dict(size=(3, 2), mode="bilinear"), (2, 3, 4, 5)),
        ("Upsample", (), dict(scale_factor=3, mode="linear"), (2, 3, 5)),
        ("Upsample", (), dict(scale_factor=(1, 2, 2), mode="trilinear"), (1, 2, 3, 4, 4)),
        ("Upsample", (), dict(size=(3, 4), mode="area"), (2, 3, 7, 9)),
        ("Upsample", (), dict(scale_factor=2, mode="bicubic"), (2, 3, 4, 5)),
        ("Upsample", (), dict(size=(3, 7), mode="bicubic", align_corners=True), (2, 3, 5, 4)),
        ("UpsamplingBilinear2d", (), dict(scale_factor=2), (1, 2, 3, 4)),
        ("UpsamplingNearest2d", (), dict(size=(5, 7)), (1, 2, 3, 4)),
        ("PixelShuffle", (2,), {}, (2, 8, 3, 4)),
        ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
        ("Unfold", ((2, 3),), dict(dilation=(1, 2), padding=1, stride=2), (2, 3, 7, 8)),
        ("Fold", ((5, 6), 3), dict(padding=1, stride=2), (2, 18, 9)),
    ],
)
def test_vision_layer_parity(layer, args, kwargs, x_shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    lx = lucid.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    ly = getattr(nn, layer)(*args, **kwargs)(lx)
    ty = getattr(torch.nn, layer)(*args, **kwargs)(tx)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
    g = rng.standard_normal(ly.shape).astype(np.float32)
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
