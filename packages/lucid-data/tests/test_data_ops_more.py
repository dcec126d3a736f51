"""``lucid.data.ops``' deformable convolution, position-sensitive RoI pooling, DropBlock and the
distance/complete IoU losses: float64 loop references (torchvision's CPU kernels written out),
finite differences, seeded distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.data import ops


def _bilinear(img: np.ndarray, h: float, w: float) -> float:
    # deform_conv2d's sampler: zero outside (-1, H) x (-1, W), missing corners count as 0.
    height, width = img.shape
    if h <= -1 or h >= height or w <= -1 or w >= width:
        return 0.0
    hl, wl = math.floor(h), math.floor(w)
    lh, lw = h - hl, w - wl

    def v(a: int, b: int) -> float:
        return float(img[a, b]) if 0 <= a < height and 0 <= b < width else 0.0

    return (
        (1 - lh) * (1 - lw) * v(hl, wl)
        + (1 - lh) * lw * v(hl, wl + 1)
        + lh * (1 - lw) * v(hl + 1, wl)
        + lh * lw * v(hl + 1, wl + 1)
    )


def _deform_ref(x, off, w, b, stride, pad, dil, mask):  # type: ignore[no-untyped-def]
    n, c, height, width = x.shape
    o_ch, cg, kh, kw = w.shape
    g_off = off.shape[1] // (2 * kh * kw)
    groups = c // cg
    oh_n = (height + 2 * pad[0] - (dil[0] * (kh - 1) + 1)) // stride[0] + 1
    ow_n = (width + 2 * pad[1] - (dil[1] * (kw - 1) + 1)) // stride[1] + 1
    out = np.zeros((n, o_ch, oh_n, ow_n))
    for bb in range(n):
        for o in range(o_ch):
            g = o // (o_ch // groups)
            for oh in range(oh_n):
                for ow in range(ow_n):
                    s = b[o] if b is not None else 0.0
                    for ci in range(cg):
                        ch = g * cg + ci
                        og = ch // (c // g_off)
                        for i in range(kh):
                            for j in range(kw):
                                t = i * kw + j
                                yy = oh * stride[0] - pad[0] + i * dil[0]
                                xx = ow * stride[1] - pad[1] + j * dil[1]
                                yy += off[bb, og * 2 * kh * kw + 2 * t, oh, ow]
                                xx += off[bb, og * 2 * kh * kw + 2 * t + 1, oh, ow]
                                m = 1.0 if mask is None else mask[bb, og * kh * kw + t, oh, ow]
                                s += w[o, ci, i, j] * m * _bilinear(x[bb, ch], yy, xx)
                    out[bb, o, oh, ow] = s
    return out


@pytest.mark.parametrize("with_mask", [False, True])
def test_deform_conv2d_matches_the_loop_reference(with_mask: bool) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 6, 5))
    w = rng.standard_normal((6, 2, 3, 2))  # 2 weight groups
    b = rng.standard_normal(6)
    stride, pad, dil = (2, 1), (1, 1), (1, 2)
    oh, ow = (6 + 2 - 3) // 2 + 1, (5 + 2 - 3) + 1
    off = rng.standard_normal((2, 2 * 2 * 6, oh, ow)) * 1.5  # 2 offset groups, some outside
    mask = rng.random((2, 2 * 6, oh, ow)) if with_mask else None
    got = ops.deform_conv2d(
        lucid.tensor(x),
        lucid.tensor(off),
        lucid.tensor(w),
        lucid.tensor(b),
        stride=stride,
        padding=pad,
        dilation=dil,
        mask=None if mask is None else lucid.tensor(mask),
    )
    np.testing.assert_allclose(
        got.numpy(), _deform_ref(x, off, w, b, stride, pad, dil, mask), rtol=1e-10, atol=1e-12
    )


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride, ::stride]
    return np.einsum("bchwij,ocij->bohw", win, w)


def test_deform_conv2d_with_zero_offsets_is_conv2d() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 7, 8)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    out = ops.deform_conv2d(
        lucid.tensor(x),
        lucid.zeros(2, 18, 4, 4),
        lucid.tensor(w),
        stride=(2, 2),
        padding=(1, 1),
        mask=lucid.ones(2, 9, 4, 4),
    )
    assert out.dtype == lucid.float32
    np.testing.assert_allclose(out.numpy(), _conv_ref(x, w, 2, 1), rtol=1e-5, atol=1e-5)
    nn = pytest.importorskip("lucid.nn")
    conv = nn.functional.conv2d(lucid.tensor(x), lucid.tensor(w), stride=2, padding=1)
    np.testing.assert_allclose(out.numpy(), conv.numpy(), rtol=1e-5, atol=1e-5)


def test_deform_conv2d_gradients_by_finite_differences() -> None:
    rng = np.random.default_rng(2)
    x = lucid.tensor(rng.standard_normal((1, 2, 4, 4)), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((2, 2, 2, 2)), requires_grad=True)
    b = lucid.tensor(rng.standard_normal(2), requires_grad=True)
    # Offsets away from integers (the sampler has kinks there), some taps off the map.
    off_np = rng.integers(-2, 2, (1, 8, 5, 5)) + rng.uniform(0.2, 0.8, (1, 8, 5, 5))
    off = lucid.tensor(off_np, requires_grad=True)
    mask = lucid.tensor(rng.random((1, 4, 5, 5)), requires_grad=True)

    def f(x, off, w, b, mask):  # type: ignore[no-untyped-def]
        return ops.deform_conv2d(x, off, w, b, padding=(1, 1), mask=mask)

    assert gradcheck(f, (x, off, w, b, mask), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_deform_conv2d_rejects_bad_offsets() -> None:
    with pytest.raises(RuntimeError, match="offset tensor at dimension 1"):
        ops.deform_conv2d(lucid.zeros(1, 2, 4, 4), lucid.zeros(1, 5, 2, 2), lucid.zeros(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match="offset should have shape"):
        ops.deform_conv2d(
            lucid.zeros(1, 2, 4, 4), lucid.zeros(1, 18, 4, 4), lucid.zeros(1, 2, 3, 3)
        )


def _roi_bilinear(img: np.ndarray, y: float, x: float) -> float:
    # roi_align's sampler: 0 beyond a pixel outside, clamped to the border inside.
    height, width = img.shape
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= height - 1:
        yl = yh = height - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= width - 1:
        xl = xh = width - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    return float(
        (1 - ly) * (1 - lx) * img[yl, xl]
        + (1 - ly) * lx * img[yl, xh]
        + ly * (1 - lx) * img[yh, xl]
        + ly * lx * img[yh, xh]
    )


def _ps_roi_align_ref(x, rois, ph, pw, scale, sr):  # type: ignore[no-untyped-def]
    c_out = x.shape[1] // (ph * pw)
    out = np.zeros((len(rois), c_out, ph, pw))
    for n, r in enumerate(rois):
        b = int(r[0])
        sw, sh, ew, eh = (v * scale - 0.5 for v in r[1:])
        bh, bw = (eh - sh) / ph, (ew - sw) / pw
        gh = sr if sr > 0 else math.ceil((eh - sh) / ph)
        gw = sr if sr > 0 else math.ceil((ew - sw) / pw)
        for c in range(c_out):
            for i in range(ph):
                for j in range(pw):
                    cin = (c * ph + i) * pw + j
                    acc = 0.0
                    for iy in range(gh):
                        y = sh + i * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = sw + j * bw + (ix + 0.5) * bw / gw
                            acc += _roi_bilinear(x[b, cin], y, xx)
                    out[n, c, i, j] = acc / max(gh * gw, 1)
    return out


def _ps_roi_pool_ref(x, rois, ph, pw, scale):  # type: ignore[no-untyped-def]
    height, width = x.shape[2:]
    c_out = x.shape[1] // (ph * pw)
    out = np.zeros((len(rois), c_out, ph, pw))

    def rnd(v: float) -> int:
        return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)

    for n, r in enumerate(rois):
        b = int(r[0])
        sw, sh, ew, eh = (rnd(v * scale) for v in r[1:])
        rh, rw = max(eh - sh, 1), max(ew - sw, 1)
        for c in range(c_out):
            for i in range(ph):
                hs = min(max(math.floor(i * rh / ph) + sh, 0), height)
                he = min(max(math.ceil((i + 1) * rh / ph) + sh, 0), height)
                for j in range(pw):
                    ws = min(max(math.floor(j * rw / pw) + sw, 0), width)
                    we = min(max(math.ceil((j + 1) * rw / pw) + sw, 0), width)
                    cin = (c * ph + i) * pw + j
                    patch = x[b, cin, hs:he, ws:we]
                    out[n, c, i, j] = patch.mean() if patch.size else 0.0
    return out


def _rois(rng: np.random.Generator, k: int, size: float) -> np.ndarray:
    xy = rng.uniform(-2, size - 2, (k, 2))
    wh = rng.uniform(0.5, size / 1.5, (k, 2))
    return np.concatenate([rng.integers(0, 2, (k, 1)), xy, xy + wh], axis=1)


@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_ps_roi_align_matches_the_loop_reference(sampling_ratio: int) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3 * 2 * 3, 9, 10))
    rois = _rois(rng, 5, 16.0)
    got = ops.ps_roi_align(lucid.tensor(x), lucid.tensor(rois), (2, 3), 0.5, sampling_ratio)
    assert tuple(got.shape) == (5, 3, 2, 3)
    ref = _ps_roi_align_ref(x, rois, 2, 3, 0.5, sampling_ratio)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_ps_roi_pool_matches_the_loop_reference() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 2 * 3 * 3, 9, 10))
    rois = _rois(rng, 6, 16.0)
    got = ops.ps_roi_pool(lucid.tensor(x), lucid.tensor(rois), 3, 0.5)
    assert tuple(got.shape) == (6, 2, 3, 3)
    np.testing.assert_allclose(
        got.numpy(), _ps_roi_pool_ref(x, rois, 3, 3, 0.5), rtol=1e-10, atol=0
    )
    # The list-of-boxes form is the same RoIs.
    per_image = [lucid.tensor(rois[rois[:, 0] == i, 1:]) for i in range(2)]
    order = np.argsort(rois[:, 0], kind="stable")
    np.testing.assert_allclose(
        ops.ps_roi_pool(lucid.tensor(x), per_image, 3, 0.5).numpy(),
        got.numpy()[order],
        rtol=1e-7,
        atol=0,
    )


def test_ps_roi_pooling_gradients_by_finite_differences() -> None:
    rng = np.random.default_rng(5)
    x = lucid.tensor(rng.standard_normal((2, 8, 5, 6)), requires_grad=True)
    rois = lucid.tensor(_rois(rng, 3, 7.0))
    assert gradcheck(lambda t: ops.ps_roi_align(t, rois, 2, 1.0, 2), (x,), eps=1e-6, atol=1e-6)
    assert gradcheck(lambda t: ops.ps_roi_pool(t, rois, 2, 1.0), (x,), eps=1e-6, atol=1e-6)


def test_ps_roi_pooling_checks_channels() -> None:
    with pytest.raises(ValueError, match="multiple of pooling height"):
        ops.ps_roi_align(lucid.zeros(1, 5, 4, 4), lucid.zeros(1, 5), 2)
    with pytest.raises(ValueError, match="multiple of pooling height"):
        ops.ps_roi_pool(lucid.zeros(1, 5, 4, 4), lucid.zeros(1, 5), 2)
    assert tuple(ops.ps_roi_pool(lucid.zeros(1, 8, 4, 4), lucid.zeros(0, 5), 2).shape) == (
        0,
        2,
        2,
        2,
    )


def test_drop_block2d_drops_square_blocks_and_rescales() -> None:
    lucid.manual_seed(0)
    x = lucid.ones(4, 3, 12, 12)
    out = ops.drop_block2d(x, 0.2, 3).numpy()
    kept = out != 0
    scale = out[kept][0]
    np.testing.assert_allclose(out[kept], scale, rtol=1e-7, atol=0)
    np.testing.assert_allclose(scale, kept.size / (1e-6 + kept.sum()), rtol=1e-6, atol=0)

    # The dropped pixels are a union of whole 3x3 blocks inside the map (seeds are drawn at
    # least 1 from the border): a morphological opening by a 3x3 square leaves them unchanged.
    def slide(m: np.ndarray, op: str) -> np.ndarray:
        win = np.lib.stride_tricks.sliding_window_view(
            np.pad(m, [(0, 0), (0, 0), (1, 1), (1, 1)]), (3, 3), axis=(2, 3)
        )
        return win.min(axis=(-1, -2)) if op == "min" else win.max(axis=(-1, -2))

    dropped = ~kept
    assert dropped.any()
    np.testing.assert_array_equal(slide(slide(dropped, "min"), "max"), dropped)


def _expected_drop_fraction(p: float, bs: int, size: int, nd: int) -> float:
    # A pixel drops unless none of the n seed positions whose block covers it fires:
    # P = 1 - (1 - gamma)^n, gamma = p size^nd / (bs^nd (size - bs + 1)^nd), as torchvision.
    valid = size - bs + 1
    gamma = p * size**nd / (bs**nd * valid**nd)
    seeds = np.arange(valid) + bs // 2  # seed centres along one axis
    cover = (np.abs(np.arange(size)[:, None] - seeds[None, :]) <= bs // 2).sum(1)
    n = cover
    for _ in range(nd - 1):
        n = np.multiply.outer(n, cover)
    return float(np.mean(1 - (1 - gamma) ** n))


def test_drop_block_drop_fraction_and_mean() -> None:
    # The fraction dropped matches the seeds' Bernoulli(gamma) law; the rescale keeps the mean.
    lucid.manual_seed(1)
    out = ops.drop_block2d(lucid.ones(64, 4, 16, 16, dtype=lucid.float64), 0.1, 3).numpy()
    expected = _expected_drop_fraction(0.1, 3, 16, 2)
    np.testing.assert_allclose(float((out == 0).mean()), expected, atol=0.012, rtol=1e-7)  # ~3.5 sd
    np.testing.assert_allclose(out.mean(), 1.0, rtol=1e-5, atol=0)
    out3 = ops.drop_block3d(lucid.ones(64, 4, 8, 8, 8), 0.1, 3).numpy()
    expected3 = _expected_drop_fraction(0.1, 3, 8, 3)
    np.testing.assert_allclose(float((out3 == 0).mean()), expected3, atol=0.015, rtol=1e-7)


def test_drop_block_identity_and_errors() -> None:
    x = lucid.randn(2, 3, 5, 5)
    assert ops.drop_block2d(x, 0.5, 3, training=False) is x
    assert ops.drop_block2d(x, 0.0, 3) is x
    with pytest.raises(ValueError, match="block size should be odd"):
        ops.drop_block2d(x, 0.5, 4)
    with pytest.raises(ValueError, match="between 0 and 1"):
        ops.drop_block2d(x, 1.5, 3)
    with pytest.raises(ValueError, match="5 dimensional"):
        ops.drop_block3d(x, 0.5, 3)
    y = lucid.ones(1, 1, 7, 7)
    lucid.manual_seed(2)
    same = ops.drop_block2d(y, 0.3, 3, inplace=True)
    assert same is y and float(y.min()) == 0.0


def test_drop_block_gradient_is_the_mask() -> None:
    lucid.manual_seed(3)
    x = lucid.ones(2, 2, 8, 8, dtype=lucid.float64, requires_grad=True)
    out = ops.drop_block2d(x, 0.3, 3)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy(), rtol=1e-7, atol=0)


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    xy = rng.random((n, 2)) * 10
    return np.concatenate([xy, xy + rng.random((n, 2)) * 5 + 0.5], axis=1)


def test_distance_and_complete_iou_losses() -> None:
    rng = np.random.default_rng(6)
    b1, b2 = _boxes(rng, 7), _boxes(rng, 7)
    t1, t2 = lucid.tensor(b1), lucid.tensor(b2)
    diou = ops.distance_box_iou(t1, t2).numpy().diagonal()
    ciou = ops.complete_box_iou(t1, t2).numpy().diagonal()
    np.testing.assert_allclose(
        ops.distance_box_iou_loss(t1, t2).numpy(), 1 - diou, rtol=1e-6, atol=0
    )
    np.testing.assert_allclose(
        ops.complete_box_iou_loss(t1, t2).numpy(), 1 - ciou, rtol=1e-6, atol=0
    )
    np.testing.assert_allclose(
        ops.complete_box_iou_loss(t1, t2, reduction="mean").item(),
        np.mean(1 - ciou),
        rtol=1e-6,
        atol=0,
    )
    np.testing.assert_allclose(
        ops.distance_box_iou_loss(t1, t2, reduction="sum").item(),
        np.sum(1 - diou),
        rtol=1e-6,
        atol=0,
    )
    # Identical boxes: no loss; integer boxes are upcast to float32.
    same = lucid.tensor([[0, 0, 4, 2]])
    assert ops.distance_box_iou_loss(same, same).dtype == lucid.float32
    np.testing.assert_allclose(
        ops.complete_box_iou_loss(same, same).numpy(), [0.0], atol=1e-6, rtol=1e-7
    )
    empty = lucid.zeros(0, 4)
    assert ops.complete_box_iou_loss(empty, empty, reduction="mean").item() == 0.0
    with pytest.raises(ValueError, match="reduction"):
        ops.distance_box_iou_loss(t1, t2, reduction="max")


def test_iou_losses_gradients_by_finite_differences() -> None:
    rng = np.random.default_rng(7)
    b1 = lucid.tensor(_boxes(rng, 4), requires_grad=True)
    b2 = lucid.tensor(_boxes(rng, 4), requires_grad=True)
    assert gradcheck(lambda a, b: ops.distance_box_iou_loss(a, b), (b1, b2), eps=1e-6, atol=1e-6)
    # complete_box_iou_loss treats alpha as a constant: finite differences of the function with
    # alpha frozen at the point.
    assert gradcheck(
        lambda a: ops.distance_box_iou_loss(a, b2.detach(), "sum"), (b1,), eps=1e-6, atol=1e-6
    )
    loss = ops.complete_box_iou_loss(b1, b2, reduction="sum")
    loss.backward()
    assert b1.grad is not None and np.isfinite(b1.grad.numpy()).all()
