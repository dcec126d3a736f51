"""``lucid.data.tv_tensors`` and the detection transforms of ``transforms.v2``, AutoAugment,
AugMix and PIL images: geometry checked on the pixels (a box keeps framing the same pixels
through a zoom-out, a crop, a resize), random draws seeded and checked by their properties."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data import tv_tensors as tv
from lucid.data.io import decode_jpeg, encode_jpeg
from lucid.data.transforms import autoaugment as AA
from lucid.data.transforms import functional as F
from lucid.data.transforms import v2


def _sample(h: int = 24, w: int = 32) -> tuple[tv.Image, dict[str, object]]:
    # An image that is 0 except two boxes painted with their index: the geometry of each
    # transform is visible in which pixels the boxes frame.
    img = np.zeros((3, h, w), np.uint8)
    img[:, 4:12, 3:11] = 100
    img[:, 10:20, 18:30] = 200
    boxes = tv.BoundingBoxes(
        [[3, 4, 11, 12], [18, 10, 30, 20]], format="XYXY", canvas_size=(h, w), dtype=lucid.float32
    )
    masks = np.zeros((2, h, w), np.uint8)
    masks[0, 4:12, 3:11] = 1
    masks[1, 10:20, 18:30] = 1
    target = {"boxes": boxes, "masks": tv.Mask(masks), "labels": lucid.tensor([1, 2])}
    return tv.Image(img), target


def _framed(img: np.ndarray, box: np.ndarray) -> np.ndarray:
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    return img[:, y1:y2, x1:x2]


# -- tv_tensors ------------------------------------------------------------------------------------


def test_tv_tensors_construction_and_wrap() -> None:
    b = tv.BoundingBoxes([1, 2, 5, 6], format="cxcywh", canvas_size=(8, 9))
    assert tuple(b.shape) == (1, 4) and b.format is tv.BoundingBoxFormat.CXCYWH
    assert b.canvas_size == (8, 9) and b.clamping_mode == "soft"
    assert isinstance(b, lucid.Tensor) and type(b + 1) is lucid.Tensor  # ops give plain Tensors
    w = tv.wrap(b.as_tensor() * 2, like=b, canvas_size=(16, 18))
    assert isinstance(w, tv.BoundingBoxes) and w.canvas_size == (16, 18)
    assert w.format is b.format and w.tolist() == [[2, 4, 10, 12]]
    assert "format=BoundingBoxFormat.CXCYWH" in repr(b)
    assert tuple(tv.Image(lucid.zeros(4, 5)).shape) == (1, 4, 5)
    assert tv.KeyPoints([1.0, 2.0], canvas_size=(3, 3)).dtype == lucid.float32
    assert tv.is_rotated_bounding_format("XYWHR") and not tv.is_rotated_bounding_format("XYXY")
    with pytest.raises(ValueError, match="format should be a BoundingBoxFormat"):
        tv.BoundingBoxes([[0, 0, 1, 1]], format="yxyx", canvas_size=(2, 2))
    with pytest.raises(ValueError, match="Expected a 1D or 2D tensor"):
        tv.BoundingBoxes(lucid.zeros(1, 1, 4), format="XYXY", canvas_size=(2, 2))
    with pytest.raises(ValueError, match=r"shape \(..., 2\)"):
        tv.KeyPoints(lucid.zeros(3, 3), canvas_size=(2, 2))
    with pytest.raises(ValueError, match="at least 4 dimensions"):
        tv.Video(lucid.zeros(3, 4, 4))
    with pytest.raises(TypeError, match="like should be a TVTensor"):
        tv.wrap(lucid.zeros(2), like=lucid.zeros(2))


def test_sample_queries() -> None:
    img, target = _sample()
    flat = [img, target["boxes"], target["masks"]]
    assert v2.query_size(flat) == (24, 32) and v2.query_chw(flat) == (3, 24, 32)
    assert v2.get_bounding_boxes(flat) is target["boxes"]
    assert v2.has_any(flat, tv.Mask) and not v2.has_any(flat, tv.KeyPoints)
    assert v2.has_all(flat, tv.Mask, tv.Image) and not v2.has_all(flat, tv.Mask, tv.Video)
    assert v2.check_type(img, (lambda x: x is img,))
    with pytest.raises(ValueError, match="multiple HxW"):
        v2.query_size([img, tv.Mask(lucid.zeros(5, 5))])
    with pytest.raises(TypeError, match="No image"):
        v2.query_chw([target["boxes"]])
    with pytest.raises(ValueError, match="No keypoints"):
        v2.get_keypoints(flat)


def test_transform_base_walks_the_sample_and_picks_the_image() -> None:
    seen: list[object] = []

    class Tag(v2.Transform):
        def make_params(self, flat_inputs: list[object]) -> dict[str, object]:
            seen.extend(flat_inputs)
            return {"k": 1}

        def transform(self, inpt: object, params: dict[str, object]) -> object:
            return ("done", params["k"])

    a, b = lucid.zeros(3, 4, 4), lucid.zeros(2)
    out = Tag()([a, {"x": b, "y": 3}])
    # The first pure tensor is the image; the second one and the int pass through.
    assert out == [("done", 1), {"x": b, "y": 3}]
    img = tv.Image(lucid.zeros(3, 4, 4))
    seen.clear()
    out = Tag()(img, a)
    assert out[0] == ("done", 1) and out[1] is a and seen == [img]
    assert repr(v2.ClampBoundingBoxes()) == "ClampBoundingBoxes(clamping_mode=auto)"


# -- box metadata ----------------------------------------------------------------------------------


def test_convert_clamp_and_set_clamping_mode() -> None:
    boxes = tv.BoundingBoxes(
        [[-2.0, 3.0, 12.0, 7.0], [1.0, 1.0, 4.0, 9.0]], format="XYXY", canvas_size=(8, 10)
    )
    cxcy = v2.ConvertBoundingBoxFormat("CXCYWH")(boxes)
    assert cxcy.format is tv.BoundingBoxFormat.CXCYWH
    np.testing.assert_allclose(cxcy.numpy(), [[5, 5, 14, 4], [2.5, 5, 3, 8]], rtol=1e-7, atol=0)
    back = v2.ConvertBoundingBoxFormat(tv.BoundingBoxFormat.XYXY)(cxcy)
    np.testing.assert_allclose(back.numpy(), boxes.numpy(), rtol=1e-7, atol=0)
    clamped = v2.ClampBoundingBoxes()(cxcy)  # clamped as xyxy, given back in its format
    np.testing.assert_allclose(
        clamped.numpy(), [[5, 5, 10, 4], [2.5, 4.5, 3, 7]], rtol=1e-7, atol=0
    )
    assert v2.ClampBoundingBoxes(None)(boxes).tolist() == boxes.tolist()
    free = v2.SetClampingMode(None)(boxes)
    assert free.clamping_mode is None and v2.ClampBoundingBoxes()(free).tolist() == boxes.tolist()
    with pytest.raises(ValueError, match="clamping_mode must be soft, hard or None"):
        v2.SetClampingMode("auto")
    pts = tv.KeyPoints([[-1, 3], [12, 9]], canvas_size=(8, 10))
    assert v2.ClampKeyPoints()(pts).tolist() == [[0, 3], [9, 7]]
    with pytest.raises(NotImplementedError, match="axis-aligned"):
        v2.ConvertBoundingBoxFormat("XYWHR")(boxes)


def test_sanitize_bounding_boxes_and_keypoints() -> None:
    img, target = _sample()
    boxes = tv.BoundingBoxes(
        [[3, 4, 11, 12], [5, 5, 5.5, 9], [20, 10, 40, 20], [1, 1, 3, 3]],
        format="XYXY",
        canvas_size=(24, 32),
    )
    target = {
        "boxes": boxes,
        "labels": lucid.tensor([1, 2, 3, 4]),
        "masks": tv.Mask(lucid.zeros(4, 24, 32)),
    }
    out_img, out = v2.SanitizeBoundingBoxes()(img, target)
    assert out_img is img
    assert out["boxes"].tolist() == [[3, 4, 11, 12], [1, 1, 3, 3]]  # thin and outside dropped
    assert out["labels"].tolist() == [1, 4] and tuple(out["masks"].shape) == (2, 24, 32)
    assert isinstance(out["boxes"], tv.BoundingBoxes) and isinstance(out["masks"], tv.Mask)
    out = v2.SanitizeBoundingBoxes(min_size=3, labels_getter=None)(target)
    assert out["boxes"].tolist() == [[3, 4, 11, 12]] and out["labels"].tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="must match the number of labels"):
        v2.SanitizeBoundingBoxes()({"boxes": boxes, "labels": lucid.tensor([1])})
    with pytest.raises(ValueError, match="min_size must be >= 1"):
        v2.SanitizeBoundingBoxes(min_size=0.5)
    groups = tv.KeyPoints(
        [[[1, 1], [2, 2]], [[1, 1], [9, 2]], [[0, 0], [7, 3]]], canvas_size=(4, 8)
    )
    labels = lucid.tensor([5, 6, 7])
    kept, kept_labels = v2.SanitizeKeyPoints(labels_getter=lambda s: s[1])(groups, labels)
    assert kept.tolist() == [[[1, 1], [2, 2]], [[0, 0], [7, 3]]] and kept_labels.tolist() == [5, 7]


# -- geometry --------------------------------------------------------------------------------------


def test_random_zoom_out_keeps_the_boxes_on_their_pixels() -> None:
    lucid.manual_seed(0)
    img, target = _sample()
    for _ in range(5):
        out_img, out = v2.RandomZoomOut(fill={tv.Image: 7, tv.Mask: 0}, p=1.0)(img, target)
        big = out_img.numpy()
        h, w = big.shape[-2:]
        assert 24 <= h <= 96 and 32 <= w <= 128 and out["boxes"].canvas_size == (h, w)
        for box, value in zip(out["boxes"].numpy(), (100, 200), strict=True):
            assert (_framed(big, box) == value).all()
        assert (big == 7).sum() == 3 * (h * w - 24 * 32)  # the canvas around the image
        m = out["masks"].numpy()
        assert m.shape == (2, h, w) and m.sum() == target["masks"].numpy().sum()
    lucid.manual_seed(0)
    same = v2.RandomZoomOut(p=0.0)(img, target)
    assert same[0] is img and same[1] is target
    with pytest.raises(ValueError, match="Invalid side range"):
        v2.RandomZoomOut(side_range=(0.5, 2.0))


def test_random_iou_crop_properties() -> None:
    lucid.manual_seed(1)
    img, target = _sample()
    crops = 0
    for _ in range(20):
        out_img, out = v2.RandomIoUCrop()(img, target)
        boxes = out["boxes"].numpy()
        h, w = out_img.shape[-2:]
        assert out["boxes"].canvas_size == (h, w) and tuple(out["masks"].shape[-2:]) == (h, w)
        if (h, w) == (24, 32):
            continue
        crops += 1
        assert 0.3 * 24 - 1 <= h <= 24 and 0.5 <= w / h <= 2.0
        kept = boxes.any(axis=1)
        assert kept.any()  # at least one box's centre is inside the crop
        for box, value in zip(boxes[kept], np.array([100, 200])[kept], strict=True):
            assert (_framed(out_img.numpy(), box) == value).all()
        out = v2.SanitizeBoundingBoxes()(out)
        assert len(out["labels"]) == int(kept.sum())
    assert crops > 5
    unchanged = v2.RandomIoUCrop(sampler_options=[2.0])(img, target)
    assert unchanged[0] is img
    with pytest.raises(TypeError, match="requires input sample to contain"):
        v2.RandomIoUCrop()(img)


@pytest.mark.parametrize(
    "transform",
    [
        v2.ScaleJitter((64, 48), scale_range=(0.5, 1.5)),
        v2.RandomShortestSize([12, 36, 48], max_size=60),
        v2.RandomResize(12, 40),
    ],
)
def test_random_resizes_scale_boxes_masks_and_keypoints(transform: v2.Transform) -> None:
    lucid.manual_seed(2)
    img, target = _sample()
    target["points"] = tv.KeyPoints([[3.0, 4.0], [30.0, 20.0]], canvas_size=(24, 32))
    for _ in range(4):
        out_img, out = transform(img, target)
        h, w = out_img.shape[-2:]
        ry, rx = h / 24, w / 32
        np.testing.assert_allclose(
            out["boxes"].numpy(), target["boxes"].numpy() * [rx, ry, rx, ry], rtol=1e-6, atol=0
        )
        np.testing.assert_allclose(
            out["points"].numpy(), [[3 * rx, 4 * ry], [30 * rx, 20 * ry]], rtol=1e-7, atol=0
        )
        assert out["points"].canvas_size == (h, w) == out["boxes"].canvas_size
        assert set(np.unique(out["masks"].numpy())) <= {0, 1}  # nearest neighbour
        if isinstance(transform, v2.RandomShortestSize):
            assert min(h, w) in (12, 36, 48) or max(h, w) == 60
        if isinstance(transform, v2.RandomResize):
            assert 12 <= min(h, w) < 40


def test_photometric_distort_touches_images_only() -> None:
    lucid.manual_seed(3)
    img, target = _sample()
    out_img, out = v2.RandomPhotometricDistort(p=1.0)(img, target)
    assert isinstance(out_img, tv.Image) and out_img.dtype == lucid.uint8
    assert not np.array_equal(out_img.numpy(), img.numpy())
    assert out["boxes"] is target["boxes"] and out["masks"] is target["masks"]
    same = v2.RandomPhotometricDistort(p=0.0)(img)
    np.testing.assert_array_equal(same.numpy(), img.numpy())


def test_jpeg_and_temporal_subsample() -> None:
    pytest.importorskip("PIL")
    lucid.manual_seed(4)
    rng = np.random.default_rng(0)
    smooth = np.repeat(np.repeat(rng.integers(0, 255, (3, 4, 4)), 8, 1), 8, 2).astype(np.uint8)
    out = v2.JPEG(quality=(90, 90))(tv.Image(smooth))
    direct = decode_jpeg(encode_jpeg(lucid.tensor(smooth), quality=90))
    assert isinstance(out, tv.Image)
    np.testing.assert_array_equal(out.numpy(), direct.numpy())

    def err(q: int) -> float:
        return float(np.abs(v2.JPEG(q)(lucid.tensor(smooth)).numpy().astype(int) - smooth).mean())

    assert err(5) > err(50) > err(100)
    with pytest.raises(TypeError, match="can't be bool"):
        v2.JPEG(True)
    with pytest.raises(ValueError, match="from 1 to 100"):
        v2.JPEG((0, 50))
    video = tv.Video(lucid.arange(10).reshape(10, 1, 1, 1) * lucid.ones(10, 2, 3, 3))
    sub = v2.UniformTemporalSubsample(4)(video)
    assert isinstance(sub, tv.Video) and sub[:, 0, 0, 0].tolist() == [0, 3, 6, 9]
    more = v2.UniformTemporalSubsample(13)(
        lucid.arange(3).reshape(3, 1, 1, 1) * lucid.ones(3, 1, 2, 2)
    )
    assert more[:, 0, 0, 0].tolist() == [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2]


# -- AutoAugment and AugMix ------------------------------------------------------------------------


def _image(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (20, 24, 3)).astype(np.uint8)


def test_auto_augment_policies_and_draws() -> None:
    for policy in AA.AutoAugmentPolicy:
        aug = v2.AutoAugment(policy)
        assert len(aug.policies) == 25 and aug.policy is policy
        space = aug._augmentation_space(10, (20, 24))
        assert {op for sub in aug.policies for op, _, _ in sub} <= set(space)
    assert v2.AutoAugment is AA.AutoAugment and v2.AugMix is AA.AugMix
    lucid.manual_seed(5)
    ids = np.array([AA.AutoAugment.get_params(25)[0] for _ in range(2500)])
    counts = np.bincount(ids, minlength=25)
    assert counts.min() > 60 and counts.max() < 140  # uniform: 100 each, sd 10
    img = _image()
    outs = [AA.AutoAugment(AA.AutoAugmentPolicy.CIFAR10)(img) for _ in range(20)]
    assert all(o.shape == img.shape and o.dtype == np.uint8 for o in outs)
    assert any(not np.array_equal(o, img) for o in outs)
    t = AA.AutoAugment(AA.AutoAugmentPolicy.SVHN, fill=[1, 2, 3])(
        lucid.tensor(img).permute(2, 0, 1)
    )
    assert tuple(t.shape) == (3, 20, 24)
    with pytest.raises(ValueError, match="not recognized"):
        AA.AutoAugment("mnist")  # type: ignore[arg-type]


def test_aug_mix_is_a_convex_mix(monkeypatch: pytest.MonkeyPatch) -> None:
    lucid.manual_seed(6)
    img = _image(1)
    out = v2.AugMix()(img)
    assert out.shape == img.shape and out.dtype == np.uint8
    batch = lucid.tensor(np.stack([img, _image(2)])).permute(0, 3, 1, 2)
    assert tuple(v2.AugMix(chain_depth=2, all_ops=False)(batch).shape) == (2, 3, 20, 24)
    # With every operation the identity, the mix of the image with itself is the image (up to
    # the truncation of the weighted sum).
    monkeypatch.setattr(AA, "_apply_op", lambda img, *a, **k: img)
    same = v2.AugMix(mixture_width=4)(img)
    assert np.abs(same.astype(int) - img).max() <= 1
    with pytest.raises(ValueError, match="severity must be between"):
        v2.AugMix(severity=11)
    space = v2.AugMix(all_ops=False)._augmentation_space(10, (30, 60))
    assert "Brightness" not in space and space["TranslateX"][0][-1] == 20.0
    assert space["Posterize"][0].tolist() == [4, 4, 3, 3, 2, 2, 1, 1, 0, 0]


# -- PIL images ------------------------------------------------------------------------------------


def test_pil_images_in_and_out() -> None:
    pil = pytest.importorskip("PIL.Image")
    img = _image(3)
    p = F.to_pil_image(img)
    assert isinstance(p, pil.Image) and p.mode == "RGB" and p.size == (24, 20)
    np.testing.assert_array_equal(np.asarray(p), img)
    t = lucid.tensor(img).permute(2, 0, 1).float() / 255
    np.testing.assert_array_equal(
        np.asarray(v2.ToPILImage()(t)), (t.numpy() * 255).astype(np.uint8).transpose(1, 2, 0)
    )
    assert F.to_pil_image(lucid.rand(1, 4, 5), mode="F").mode == "F"
    assert F.to_pil_image(np.zeros((4, 5, 2), np.uint8)).mode == "LA"
    with pytest.raises(ValueError, match="Only modes"):
        F.to_pil_image(img, mode="RGBA")
    with pytest.raises(ValueError, match="> 4 channels"):
        F.to_pil_image(np.zeros((2, 2, 5), np.uint8))
    # lucid's transforms take a PIL image as they take its uint8 array, and give one back.
    for transform in (F.hflip, lambda x: F.resize(x, 10), lambda x: F.rotate(x, 30), F.equalize):
        out = transform(p)
        assert isinstance(out, pil.Image)
        np.testing.assert_array_equal(np.asarray(out), transform(img))
    gray = F.rgb_to_grayscale(p)
    assert gray.mode == "L"
    np.testing.assert_array_equal(np.asarray(gray), F.rgb_to_grayscale(img))
    np.testing.assert_array_equal(F.to_tensor(p).numpy(), F.to_tensor(img).numpy())
    assert tuple(tv.Image(p).shape) == (3, 20, 24)
    assert F.pil_modes_mapping[F.InterpolationMode.BILINEAR] == 2
    assert repr(v2.ToPILImage("RGB")) == "ToPILImage(mode=RGB)"


def test_sample_aware_v2_transforms() -> None:
    img, target = _sample()
    target["points"] = tv.KeyPoints([[3.0, 4.0], [31.0, 23.0]], canvas_size=(24, 32))
    flipped_img, flipped = v2.RandomHorizontalFlip(p=1.0)(img, target)
    for box, value in zip(flipped["boxes"].numpy(), (100, 200), strict=True):
        assert (_framed(flipped_img.numpy(), box) == value).all()
    assert flipped["points"].tolist() == [[28.0, 4.0], [0.0, 23.0]]
    np.testing.assert_array_equal(flipped["masks"].numpy(), target["masks"].numpy()[..., ::-1])
    v_img, v_t = v2.RandomVerticalFlip(p=1.0)(img, target)
    for box, value in zip(v_t["boxes"].numpy(), (100, 200), strict=True):
        assert (_framed(v_img.numpy(), box) == value).all()
    assert v_t["points"].tolist() == [[3.0, 19.0], [31.0, 0.0]]
    same_img, same = v2.RandomHorizontalFlip(p=0.0)(img, target)
    assert same_img is img and same["boxes"] is target["boxes"]
    padded_img, padded = v2.Pad([2, 3], fill=0)(img, target)
    assert padded["boxes"].canvas_size == (30, 36) == tuple(padded_img.shape[-2:])
    for box, value in zip(padded["boxes"].numpy(), (100, 200), strict=True):
        assert (_framed(padded_img.numpy(), box) == value).all()
    cropped_img, cropped = v2.CenterCrop(16)(img, target)
    assert cropped["boxes"].canvas_size == (16, 16) and tuple(cropped_img.shape) == (3, 16, 16)
    np.testing.assert_array_equal(cropped["boxes"].numpy()[0], [0, 0, 3, 8])  # clamped
    # One image still goes through v1's transform (its batch form too).
    arr = _image(4)
    np.testing.assert_array_equal(v2.RandomHorizontalFlip(p=1.0)(arr), arr[:, ::-1])
    assert isinstance(v2.Resize(10)(img), tv.Image)
    assert v2.Resize(10).batch(lucid.zeros(2, 3, 20, 20)).shape == (2, 3, 10, 10)
    # Compose passes several inputs on; ToImage, ToDtype (per type) and ToPureTensor.
    pipe = v2.Compose(
        [
            v2.ToImage(),
            v2.ToDtype({tv.Image: lucid.float32, "others": None}, scale=True),
            v2.ToPureTensor(),
        ]
    )
    out_img, out_t = pipe(img.numpy().transpose(1, 2, 0).copy(), target)
    assert type(out_img) is lucid.Tensor and out_img.dtype == lucid.float32
    assert float(out_img.max()) <= 1.0 and type(out_t["boxes"]) is lucid.Tensor
    assert out_t["labels"] is target["labels"]
    with pytest.raises(ValueError, match="No dtype was specified"):
        v2.ToDtype({tv.Image: lucid.float32})(img, target)
    with pytest.raises(ValueError, match="dtype must be a dict or a lucid.dtype"):
        v2.ToDtype("float32")
    assert isinstance(v2.ToImage()(_image(5)), tv.Image)
    with pytest.raises(TypeError, match="ToImage expects"):
        v2.ToImage()("x")
    with pytest.raises(NotImplementedError, match="plain Tensor"):
        tv.set_return_type("TVTensor")
    with tv.set_return_type("Tensor"):
        pass
    with pytest.raises(ValueError, match="return_type must be"):
        tv.set_return_type("numpy")
