"""interpolate, pixel_shuffle, unfold/fold: references, float64 gradchecks, errors, layers."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(2)


def _t(shape: tuple[int, ...]) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=True)


def ref_bilinear(x, oh, ow, align_corners):
    """Direct per-pixel bilinear sampling with PyTorch's coordinate rules."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))

    def src(i, out_len, in_len):
        if align_corners:
            return i * (in_len - 1) / (out_len - 1) if out_len > 1 else 0.0
        return max((i + 0.5) * in_len / out_len - 0.5, 0.0)

    for i in range(oh):
        for j in range(ow):
            sy, sx = src(i, oh, h), src(j, ow, w)
            y0, x0 = min(int(sy), h - 1), min(int(sx), w - 1)
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            ly, lx = sy - y0, sx - x0
            out[:, :, i, j] = (
                x[:, :, y0, x0] * (1 - ly) * (1 - lx) + x[:, :, y0, x1] * (1 - ly) * lx
                + x[:, :, y1, x0] * ly * (1 - lx) + x[:, :, y1, x1] * ly * lx
            )  # fmt: skip
    return out


@pytest.mark.parametrize("size,align", [((8, 12), False), ((8, 12), True), ((3, 5), False),
                                        ((7, 5), True), ((1, 1), True)])  # fmt: skip
def test_bilinear_matches_reference(size, align):
    x = RNG.standard_normal((2, 3, 4, 6))
    y = F.interpolate(lucid.tensor(x), size=size, mode="bilinear", align_corners=align)
    np.testing.assert_allclose(y.numpy(), ref_bilinear(x, *size, align), rtol=1e-12, atol=1e-12)


def test_nearest_scale_factor_repeats_pixels():
    x = RNG.standard_normal((1, 2, 3, 4))
    y = F.interpolate(lucid.tensor(x), scale_factor=2)
    np.testing.assert_array_equal(y.numpy(), x.repeat(2, axis=2).repeat(2, axis=3))
    z = F.interpolate(lucid.tensor(x), size=(2, 2))  # floor(i * in / out)
    np.testing.assert_array_equal(z.numpy(), x[:, :, [0, 1]][:, :, :, [0, 2]])


@pytest.mark.parametrize(
    "kwargs",
    [dict(scale_factor=2), dict(size=(5, 3)), dict(scale_factor=1.5, mode="bilinear"),
     dict(size=(6, 7), mode="bilinear", align_corners=True), dict(size=(3, 2), mode="bilinear"),
     dict(size=(5, 5), mode="nearest-exact"), dict(size=(2, 3), mode="area"),
     dict(size=(5, 6), mode="bicubic"), dict(scale_factor=0.7, mode="bicubic", align_corners=True)],
)  # fmt: skip
def test_interpolate_gradcheck(kwargs):
    x = _t((1, 2, 3, 4))
    assert gradcheck(lambda x: F.interpolate(x, **kwargs), (x,))


def test_bicubic_keeps_constants_and_linear_ramps():
    const = F.interpolate(lucid.full((1, 1, 4, 5), 3.0, dtype=lucid.float64), size=(7, 9),
                          mode="bicubic")  # fmt: skip
    np.testing.assert_allclose(const.numpy(), 3.0, rtol=1e-12, atol=1e-12)
    ramp = lucid.tensor(np.arange(8.0).reshape(1, 1, 1, 8).repeat(3, axis=2))
    out = F.interpolate(ramp, size=(3, 15), mode="bicubic", align_corners=True).numpy()
    # Keys' cubic reproduces linear functions away from the replicated edges
    np.testing.assert_allclose(
        out[0, 0, 1, 2:-2], np.arange(15.0)[2:-2] / 2, rtol=1e-12, atol=1e-12
    )


def test_area_mode_is_adaptive_average_pooling():
    x = lucid.randn(2, 3, 7, 9)
    np.testing.assert_array_equal(F.interpolate(x, size=(3, 4), mode="area").numpy(),
                                  F.adaptive_avg_pool2d(x, (3, 4)).numpy())  # fmt: skip


def test_interpolate_linear_trilinear_gradcheck_and_double_backward():
    assert gradcheck(lambda x: F.interpolate(x, size=5, mode="linear"), (_t((1, 2, 3)),))
    x3 = _t((1, 1, 2, 3, 2))
    assert gradcheck(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"), (x3,))
    x = _t((1, 1, 2, 3))
    assert gradgradcheck(lambda x: F.interpolate(x, size=(3, 4), mode="bilinear") ** 2, (x,))


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda x: F.interpolate(x), "either size or scale_factor"),
        (lambda x: F.interpolate(x, size=4, scale_factor=2), "either size or scale_factor"),
        (lambda x: F.interpolate(x, size=4, mode="lanczos"), "Lanczos mode requires antialias"),
        (lambda x: F.interpolate(x, size=4, mode="sinc"), "not supported"),
        (lambda x: F.interpolate(x, size=4, mode="linear"), "needs 3D input"),
        (lambda x: F.interpolate(x, size=4, align_corners=True), "align_corners"),
        (lambda x: F.interpolate(x, size=(4, 4, 4)), "same number of spatial dimensions"),
    ],
)
def test_interpolate_errors(call, message):
    with pytest.raises((ValueError, NotImplementedError), match=message):
        call(lucid.randn(1, 1, 3, 3))


def test_pixel_shuffle_reference_roundtrip_and_gradcheck():
    x = RNG.standard_normal((2, 8, 3, 4))
    y = F.pixel_shuffle(lucid.tensor(x), 2)
    ref = x.reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    np.testing.assert_array_equal(y.numpy(), ref)
    np.testing.assert_array_equal(F.pixel_unshuffle(y, 2).numpy(), x)
    assert gradcheck(lambda t: F.pixel_shuffle(t, 2), (_t((1, 4, 2, 3)),))
    assert gradcheck(lambda t: F.pixel_unshuffle(t, 2), (_t((1, 1, 4, 2)),))
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(lucid.randn(1, 6, 2, 2), 2)


def ref_unfold(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[:, :, i * d[0] :: s[0], j * d[1] :: s[1]][:, :, :oh, :ow]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


@pytest.mark.parametrize("k,d,p,s", [((3, 3), (1, 1), (0, 0), (1, 1)),
                                     ((2, 3), (1, 2), (1, 1), (2, 1))])  # fmt: skip
def test_unfold_fold_reference_adjoint_and_gradcheck(k, d, p, s):
    x = RNG.standard_normal((2, 3, 6, 7))
    cols = F.unfold(lucid.tensor(x), k, d, p, s)
    np.testing.assert_array_equal(cols.numpy(), ref_unfold(x, k, d, p, s))
    c = RNG.standard_normal(cols.shape)
    back = F.fold(lucid.tensor(c), (6, 7), k, d, p, s)
    assert np.isclose(
        (cols.numpy() * c).sum(), (x * back.numpy()).sum(), rtol=1e-5, atol=1e-8
    )  # fold = unfold^T
    assert gradcheck(lambda t: F.unfold(t, k, d, p, s), (_t((1, 2, 4, 5)),))
    small = F.unfold(lucid.zeros(1, 2, 4, 5), k, d, p, s)
    assert gradcheck(lambda t: F.fold(t, (4, 5), k, d, p, s), (_t(small.shape),))


def test_fold_errors():
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(lucid.randn(1, 5, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match="match the calculated number of sliding blocks"):
        F.fold(lucid.randn(1, 4, 5), (3, 3), 2)


def test_vision_layers():
    x = lucid.randn(1, 8, 3, 3)
    assert nn.Upsample(scale_factor=2, mode="bilinear")(x).shape == (1, 8, 6, 6)
    assert nn.Upsample(size=(4, 5))(x).shape == (1, 8, 4, 5)
    assert nn.UpsamplingBilinear2d(scale_factor=2)(x).shape == (1, 8, 6, 6)
    assert nn.UpsamplingNearest2d(size=5)(x).shape == (1, 8, 5, 5)
    assert nn.PixelShuffle(2)(x).shape == (1, 2, 6, 6)
    assert nn.PixelUnshuffle(3)(x).shape == (1, 72, 1, 1)
    assert nn.Unfold(2)(x).shape == (1, 32, 4)
    assert nn.Fold(3, 2)(nn.Unfold(2)(x)).shape == (1, 8, 3, 3)
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"


# -- circular pad with negative and large pads (torch's rules) --------------------------------
@pytest.mark.parametrize(
    "pads,expect",
    [
        ((-1, 2), [1, 2, 3, 4, 1, 2]),  # crop first, then wrap the cropped row
        ((2, -1), [2, 3, 0, 1, 2, 3]),
        ((-3, 3), [3, 4, 3, 4, 3]),
        ((5, 5), [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4]),
        ((-2, -2), [2]),
        ((-3, -2), []),
    ],
)
def test_circular_pad_values(pads, expect):
    x = lucid.arange(5.0).reshape(1, 1, 5)
    np.testing.assert_allclose(F.pad(x, pads, mode="circular").numpy()[0, 0], expect,
                               rtol=0, atol=0)  # fmt: skip


def test_circular_pad_negative_gradcheck():
    x = _t((1, 2, 4, 5))
    assert gradcheck(lambda a: F.pad(a, (-1, 3, 2, -1), mode="circular"), (x,))


@pytest.mark.parametrize(
    "pads,message",
    [((6, 0), "wrapping around more than once"), ((0, 6), "wrapping around more than once"),
     ((-3, -3), "resulting in an empty dimension"), ((-5, 1), "leaves nothing to wrap")],
)  # fmt: skip
def test_circular_pad_errors(pads, message):
    with pytest.raises(RuntimeError, match=message):
        F.pad(lucid.ones(1, 1, 5), pads, mode="circular")


# -- uint8 resampling -------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_interpolate_computes_in_float_and_rounds(mode):
    """One pass per dim, width first, each rounded and clamped back to uint8 (torch's)."""
    x = RNG.integers(0, 256, (1, 2, 5, 7)).astype(np.uint8)
    y = F.interpolate(lucid.tensor(x), size=(9, 4), mode=mode, align_corners=False)
    ref = lucid.tensor(x.astype(np.float64))
    for size in ((5, 4), (9, 4)):
        ref = F.interpolate(ref, size=size, mode=mode).round().clamp(0, 255)
    assert y.dtype == lucid.uint8
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=0, atol=0)
    nearest = F.interpolate(lucid.tensor(x), size=(9, 4), mode="nearest").numpy()
    assert (y.numpy() != nearest).any()


@pytest.mark.parametrize(
    "dtype,mode,shape",
    [(lucid.int64, "bilinear", (1, 1, 3, 3)), (lucid.uint8, "linear", (1, 1, 3))],
)
def test_integer_interpolate_outside_uint8_images_raises(dtype, mode, shape):
    with pytest.raises(NotImplementedError, match="not implemented for"):
        F.interpolate(lucid.zeros(*shape, dtype=dtype), scale_factor=2, mode=mode)


# -- normalize --------------------------------------------------------------------------------
def test_normalize_p0_divides_by_the_nonzero_count():
    x = lucid.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(F.normalize(x, p=0).numpy(), [[0.5, 0, 1], [0, 0, 0]],
                               rtol=1e-7, atol=0)  # fmt: skip


def test_normalize_p_inf_divides_by_the_largest_magnitude():
    x = lucid.tensor([[1.0, -4.0, 2.0]])
    np.testing.assert_allclose(F.normalize(x, p=float("inf")).numpy(), [[0.25, -1, 0.5]],
                               rtol=1e-7, atol=0)  # fmt: skip
