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


F = nn.functional


@pytest.mark.parametrize("pads", [(-1, 2), (2, -1), (-1, 4), (-2, 1, 1, -1), (1, -2, -1, 3)])
def test_circular_pad_parity(pads):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 5) if len(pads) == 2 else (1, 2, 4, 5)).astype(np.float32)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly = F.pad(lx, pads, mode="circular")
    ty = torch.nn.functional.pad(tx, pads, mode="circular")
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=0, atol=0)
    g = rng.standard_normal(ly.shape).astype(np.float32)
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("pads", [(6, 0), (0, 6), (-3, -3), (-6, 0)])
def test_circular_pad_errors_match_torch(pads):
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.pad(torch.ones(1, 1, 5), pads, mode="circular")
    with pytest.raises(RuntimeError, match=str(want.value)[:25]):
        F.pad(lucid.ones(1, 1, 5), pads, mode="circular")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("kw", [dict(size=(9, 4)), dict(scale_factor=1.5, align_corners=True)])
def test_uint8_interpolate_parity(mode, kw):
    x = np.random.default_rng(2).integers(0, 256, (2, 3, 6, 7)).astype(np.uint8)
    got = F.interpolate(lucid.tensor(x), mode=mode, **kw).numpy()
    want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kw).numpy()
    assert got.dtype == want.dtype == np.uint8
    # torch's uint8 kernels use fixed-point weights: at most one level apart
    diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
    assert diff.max() <= 1 and (diff == 0).mean() > 0.75


@pytest.mark.parametrize("p", [0, 1, 2, 3, float("inf")])
def test_normalize_parity(p):
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    x[0, 1] = 0.0
    if p != 3:  # an all-zero row (lucid.norm's general-p gradient there is nan; torch's is 0)
        x[2, :] = 0.0
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, ty = F.normalize(lx, p=p), torch.nn.functional.normalize(tx, p=p)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
    ly.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
