"""The new transforms against PyTorch: affine maps and rotation against ``affine_grid`` +
``grid_sample`` (torchvision's tensor recipe, its fill mask included), Gaussian blur against
``conv2d`` on a reflect-padded image, grey levels and dtype conversion against torch's ops."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.data.transforms import functional as F

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _torch_inverse_matrix(center, angle, translate, scale, shear):  # type: ignore[no-untyped-def]
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [x / scale for x in [d, -b, 0.0, -c, a, 0.0]]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return m


def _torch_affine(img, matrix, mode, fill):  # type: ignore[no-untyped-def]
    """torchvision's _functional_tensor.affine: a normalised grid, grid_sample, fill mask."""
    n, c, h, w = img.shape
    theta = torch.tensor(matrix, dtype=torch.float64).reshape(1, 2, 3)
    base = torch.empty(1, h, w, 3, dtype=torch.float64)
    base[..., 0].copy_(torch.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, w, dtype=torch.float64))
    base[..., 1].copy_(
        torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, h, dtype=torch.float64).unsqueeze(-1)
    )
    base[..., 2].fill_(1)
    rescaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=torch.float64)
    grid = base.view(1, h * w, 3).bmm(rescaled).view(1, h, w, 2)
    x = torch.cat([img, torch.ones(n, 1, h, w, dtype=img.dtype)], dim=1)
    out = torch.nn.functional.grid_sample(
        x, grid.expand(n, h, w, 2), mode=mode, padding_mode="zeros", align_corners=False
    )
    mask = out[:, -1:].expand(n, c, h, w)
    out = out[:, :c]
    fill_img = torch.tensor(fill, dtype=out.dtype).view(1, -1, 1, 1).expand_as(out)
    if mode == "nearest":
        return torch.where(mask < 0.5, fill_img, out)
    return out * mask + (1.0 - mask) * fill_img


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize(
    ("angle", "translate", "scale", "shear", "center"),
    [
        (30.0, (2, -1), 1.2, (10.0, 0.0), None),
        (-75.0, (0, 3), 0.8, (-5.0, 12.0), (2, 4)),
        (90.0, (0, 0), 1.0, (0.0, 0.0), None),
    ],
)
def test_affine_matches_grid_sample(mode, angle, translate, scale, shear, center) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(0).random((3, 9, 11))
    fill = [0.25, 0.5, 0.75]
    ours = F.affine(lucid.tensor(x), angle, translate, scale, shear, mode, fill, center).numpy()
    h, w = x.shape[-2:]
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, (w, h))]
    matrix = _torch_inverse_matrix(center_f, angle, translate, scale, shear)
    theirs = _torch_affine(torch.from_numpy(x)[None], matrix, mode, fill)[0].numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)


def test_rotate_matches_grid_sample_with_negated_angle() -> None:
    x = np.random.default_rng(1).random((1, 8, 8))
    ours = F.rotate(lucid.tensor(x), 33.0, "bilinear", fill=[0.0]).numpy()
    matrix = _torch_inverse_matrix([0.0, 0.0], -33.0, [0.0, 0.0], 1.0, [0.0, 0.0])
    theirs = _torch_affine(torch.from_numpy(x)[None], matrix, "bilinear", [0.0])[0].numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("ks", "sigma"), [((5, 3), (1.3, 0.7)), ((3, 3), None)])
def test_gaussian_blur_matches_reflect_padded_conv(ks, sigma) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(2).random((3, 10, 12)).astype(np.float32)
    ours = F.gaussian_blur(lucid.tensor(x), list(ks), None if sigma is None else list(sigma))
    sig = [k * 0.15 + 0.35 for k in ks] if sigma is None else sigma

    def k1(k: int, s: float):  # type: ignore[no-untyped-def]
        t = torch.linspace(-(k - 1) * 0.5, (k - 1) * 0.5, k)
        p = torch.exp(-0.5 * (t / s) ** 2)
        return p / p.sum()

    kernel = torch.mm(k1(ks[1], sig[1])[:, None], k1(ks[0], sig[0])[None, :])
    kernel = kernel.expand(3, 1, ks[1], ks[0])
    pad = [ks[0] // 2, ks[0] // 2, ks[1] // 2, ks[1] // 2]
    padded = torch.nn.functional.pad(torch.from_numpy(x)[None], pad, mode="reflect")
    theirs = torch.nn.functional.conv2d(padded, kernel, groups=3)[0].numpy()
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-6)


def test_grayscale_and_uint8_conversion_match_torch() -> None:
    x = np.random.default_rng(3).random((3, 4, 5)).astype(np.float32)
    t = torch.from_numpy(x)
    theirs = (0.2989 * t[0] + 0.587 * t[1] + 0.114 * t[2]).unsqueeze(0)
    np.testing.assert_allclose(
        F.rgb_to_grayscale(lucid.tensor(x)).numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6
    )
    as_u8 = F.convert_image_dtype(lucid.tensor(x), lucid.uint8).numpy()
    np.testing.assert_array_equal(as_u8, t.mul(255 + 1.0 - 1e-3).to(torch.uint8).numpy())


def test_sharpness_autocontrast_equalize_match_torchvisions_tensor_code() -> None:
    x = np.random.default_rng(4).integers(20, 200, (3, 9, 10), dtype=np.uint8)
    t = torch.from_numpy(x)
    # adjust_sharpness: 3x3 smoothing of the inner pixels, rounded, then blended (truncated)
    kernel = torch.ones(3, 3)
    kernel[1, 1] = 5.0
    kernel = (kernel / kernel.sum()).expand(3, 1, 3, 3)
    inner = torch.nn.functional.conv2d(t[None].float(), kernel, groups=3)[0].round().to(t.dtype)
    blurred = t.clone()
    blurred[..., 1:-1, 1:-1] = inner
    sharp = (1.7 * t + (1.0 - 1.7) * blurred).clamp(0, 255).to(t.dtype)
    np.testing.assert_array_equal(F.adjust_sharpness(lucid.tensor(x), 1.7).numpy(), sharp)
    # autocontrast
    lo = t.amin(dim=(-2, -1), keepdim=True).float()
    hi = t.amax(dim=(-2, -1), keepdim=True).float()
    auto = ((t - lo) * (255 / (hi - lo))).clamp(0, 255).to(t.dtype)
    np.testing.assert_array_equal(F.autocontrast(lucid.tensor(x)).numpy(), auto.numpy())

    # equalize
    def scale_channel(chan):  # type: ignore[no-untyped-def]
        hist = torch.bincount(chan.reshape(-1), minlength=256)
        nonzero = hist[hist != 0]
        step = torch.div(nonzero[:-1].sum(), 255, rounding_mode="floor")
        if step == 0:
            return chan
        lut = torch.div(
            torch.cumsum(hist, 0) + torch.div(step, 2, rounding_mode="floor"),
            step,
            rounding_mode="floor",
        )
        lut = torch.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)
        return lut[chan.to(torch.int64)].to(torch.uint8)

    eq = torch.stack([scale_channel(t[c]) for c in range(3)])
    np.testing.assert_array_equal(F.equalize(lucid.tensor(x)).numpy(), eq.numpy())


def test_perspective_matches_torchvisions_grid() -> None:
    x = np.random.default_rng(5).random((2, 9, 12))
    start = [[0, 0], [11, 0], [11, 8], [0, 8]]
    end = [[2, 1], [10, 0], [9, 7], [1, 8]]
    ours = F.perspective(lucid.tensor(x), start, end, "bilinear", [0.3, 0.6]).numpy()
    a = torch.zeros(8, 8, dtype=torch.float64)
    for i, (p1, p2) in enumerate(zip(end, start)):
        a[2 * i] = torch.tensor([p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]])
        a[2 * i + 1] = torch.tensor([0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]])
    b = torch.tensor(start, dtype=torch.float64).view(8)
    c = torch.linalg.lstsq(a, b, driver="gels").solution.to(torch.float32).tolist()
    h, w = x.shape[-2:]
    theta1 = torch.tensor([[[c[0], c[1], c[2]], [c[3], c[4], c[5]]]], dtype=torch.float64)
    theta2 = torch.tensor([[[c[6], c[7], 1.0], [c[6], c[7], 1.0]]], dtype=torch.float64)
    base = torch.empty(1, h, w, 3, dtype=torch.float64)
    base[..., 0].copy_(torch.linspace(0.5, w - 0.5, w, dtype=torch.float64))
    base[..., 1].copy_(torch.linspace(0.5, h - 0.5, h, dtype=torch.float64).unsqueeze(-1))
    base[..., 2].fill_(1)
    g1 = base.view(1, h * w, 3).bmm(
        theta1.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=torch.float64)
    )
    g2 = base.view(1, h * w, 3).bmm(theta2.transpose(1, 2))
    grid = (g1 / g2 - 1.0).view(1, h, w, 2)
    xt = torch.cat([torch.from_numpy(x), torch.ones(1, h, w, dtype=torch.float64)])[None]
    out = torch.nn.functional.grid_sample(xt, grid, "bilinear", "zeros", align_corners=False)[0]
    mask = out[-1:].expand(2, h, w)
    fill = torch.tensor([0.3, 0.6], dtype=torch.float64).view(-1, 1, 1)
    theirs = (out[:2] * mask + (1 - mask) * fill).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
