"""The transforms added for torchvision's names: values on small images, both layouts."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data import transforms as T
from lucid.data.transforms import functional as F


def _hwc(seed: int = 0, shape: tuple[int, ...] = (6, 8, 3)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_random_apply_choice_order() -> None:
    img = _hwc()
    flip = T.RandomHorizontalFlip(p=1.0)
    np.testing.assert_array_equal(T.RandomApply([flip], p=1.0)(img), img[:, ::-1])
    assert T.RandomApply([flip], p=0.0)(img) is img
    lucid.manual_seed(0)
    picks = {T.RandomChoice([lambda x: 1, lambda x: 2], p=[0.0, 1.0])(img) for _ in range(5)}
    assert picks == {2}
    with pytest.raises(ValueError, match="Length of p"):
        T.RandomChoice([flip], p=[0.5, 0.5])
    order = T.RandomOrder([lambda x: x + [1], lambda x: x + [2]])
    results = {tuple(order([])) for _ in range(30)}
    assert results == {(1, 2), (2, 1)}


def test_random_resized_crop_shapes_and_fallback() -> None:
    lucid.manual_seed(1)
    img = _hwc(1, (20, 30, 3))
    out = T.RandomResizedCrop(8)(img)
    assert out.shape == (8, 8, 3) and out.dtype == np.uint8
    t = T.RandomResizedCrop((5, 7))(lucid.tensor(np.random.default_rng(1).random((3, 20, 30))))
    assert tuple(t.shape) == (3, 5, 7)
    for _ in range(20):
        i, j, h, w = T.RandomResizedCrop.get_params(img, (0.08, 1.0), (0.75, 4 / 3))
        assert 0 <= i <= 20 - h and 0 <= j <= 30 - w and h > 0 and w > 0
    # no crop of 10x the area fits: the centre crop of the largest allowed aspect
    assert T.RandomResizedCrop.get_params(img, (10.0, 10.0), (1.0, 1.0)) == (0, 5, 20, 20)


def test_five_and_ten_crop() -> None:
    img = _hwc(2, (5, 6, 3))
    tl, tr, bl, br, c = T.FiveCrop(3)(img)
    np.testing.assert_array_equal(tl, img[:3, :3])
    np.testing.assert_array_equal(tr, img[:3, 3:])
    np.testing.assert_array_equal(bl, img[2:, :3])
    np.testing.assert_array_equal(br, img[2:, 3:])
    np.testing.assert_array_equal(c, img[1:4, 2:4] if False else F.center_crop(img, 3))
    ten = T.TenCrop(3)(img)
    assert len(ten) == 10
    np.testing.assert_array_equal(ten[5], img[:, ::-1][:3, :3])
    with pytest.raises(ValueError, match="bigger than input size"):
        T.FiveCrop(7)(img)


def test_affine_identity_rotation_and_translation_on_hwc() -> None:
    img = _hwc(3)
    np.testing.assert_array_equal(F.affine(img, 0.0, [0, 0], 1.0, 0.0), img)
    moved = F.affine(img, 0.0, [2, 1], 1.0, 0.0)  # right 2, down 1; fill 0 where uncovered
    np.testing.assert_array_equal(moved[1:, 2:], img[:-1, :-2])
    assert (moved[0] == 0).all() and (moved[:, :2] == 0).all()
    sq = _hwc(4, (6, 6))
    np.testing.assert_array_equal(F.rotate(sq, 90), np.rot90(sq))
    lucid.manual_seed(2)
    out = T.RandomAffine(20, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5)(img)
    assert out.shape == img.shape and out.dtype == np.uint8
    angle, (tx, ty), s, (sx, sy) = T.RandomAffine.get_params(
        [-10, 10], [0.5, 0.5], [0.5, 2.0], [-3, 3, 4, 6], [8, 6]
    )
    assert -10 <= angle <= 10 and abs(tx) <= 4 and abs(ty) <= 3 and 0.5 <= s <= 2.0
    assert -3 <= sx <= 3 and 4 <= sy <= 6
    with pytest.raises(ValueError, match="translate values should be between 0 and 1"):
        T.RandomAffine(0, translate=(2.0, 0.0))
    with pytest.raises(NotImplementedError, match="expand"):
        F.rotate(img, 10, expand=True)


def test_grayscale_both_layouts() -> None:
    img = _hwc(5)
    gray = T.Grayscale()(img)
    expected = np.rint(img.astype(np.float64) @ np.array([0.2989, 0.587, 0.114]))
    assert gray.shape == (6, 8) and gray.dtype == np.uint8
    np.testing.assert_array_equal(gray, expected.astype(np.uint8))
    three = T.Grayscale(num_output_channels=3)(img)
    assert three.shape == (6, 8, 3) and (three[..., 0] == three[..., 2]).all()
    t = lucid.tensor(np.random.default_rng(5).random((3, 4, 4)).astype(np.float32))
    assert tuple(T.RandomGrayscale(p=1.0)(t).shape) == (3, 4, 4)
    with pytest.raises(ValueError, match="num_output_channels"):
        T.Grayscale(2)(img)


def test_random_erasing_sets_a_rectangle() -> None:
    lucid.manual_seed(3)
    x = lucid.ones(3, 10, 10)
    out = T.RandomErasing(p=1.0, value=(0.1, 0.2, 0.3))(x).numpy()
    erased = out[0] != 1
    assert erased.any() and not erased.all()
    rows, cols = np.nonzero(erased)
    assert erased[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1].all()
    np.testing.assert_allclose(out[2][erased], 0.3, rtol=1e-6, atol=1e-7)
    assert (x.numpy() == 1).all()  # not in place
    noisy = T.RandomErasing(p=1.0, value="random")(x).numpy()
    assert (noisy != 1).any()
    assert T.RandomErasing(p=0.0)(x) is x
    with pytest.raises(ValueError, match="should be 'random'"):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match="number of input channels"):
        T.RandomErasing(p=1.0, value=(1.0, 2.0))(x)


def test_gaussian_blur_keeps_constants_and_smooths() -> None:
    const = np.full((7, 7, 3), 100, np.uint8)
    np.testing.assert_array_equal(T.GaussianBlur(3)(const), const)
    spike = np.zeros((1, 7, 7), np.float32)
    spike[0, 3, 3] = 1
    out = F.gaussian_blur(lucid.tensor(spike), 5, 1.0).numpy()
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[0], out[0].T, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="odd and positive"):
        T.GaussianBlur(4)


def test_pixel_value_transforms() -> None:
    img = np.array([[0, 100, 200, 255]], np.uint8)
    np.testing.assert_array_equal(T.RandomInvert(p=1.0)(img), 255 - img)
    np.testing.assert_array_equal(
        T.RandomPosterize(2, p=1.0)(img), np.array([[0, 64, 192, 192]], np.uint8)
    )
    np.testing.assert_array_equal(
        T.RandomSolarize(150, p=1.0)(img), np.array([[0, 100, 55, 0]], np.uint8)
    )
    t = lucid.tensor(np.array([[[0.0, 0.25, 1.0]]], np.float32))
    np.testing.assert_allclose(F.invert(t).numpy(), [[[1.0, 0.75, 0.0]]], rtol=0, atol=1e-7)
    with pytest.raises(TypeError, match="Only torch.uint8"):
        F.posterize(t, 2)
    as_tensor = T.PILToTensor()(_hwc(6, (2, 3, 3)))
    assert as_tensor.dtype == lucid.uint8 and tuple(as_tensor.shape) == (3, 2, 3)
    back = T.ConvertImageDtype(lucid.float32)(as_tensor)
    np.testing.assert_allclose(back.numpy(), as_tensor.numpy() / 255.0, rtol=1e-6, atol=1e-7)
    bright = F.adjust_brightness(img, 2.0)
    np.testing.assert_array_equal(bright, np.array([[0, 200, 255, 255]], np.uint8))
    assert F.get_image_size(_hwc()) == [8, 6] and F.get_dimensions(_hwc()) == [3, 6, 8]


def test_v2_path_and_its_own_transforms() -> None:
    from lucid.data.transforms import v2

    assert v2.RandomResizedCrop is T.RandomResizedCrop and v2.functional is F
    img = _hwc(7, (4, 5, 3))
    pipeline = v2.Compose([v2.ToImage(), v2.ToDtype(lucid.float32, scale=True), v2.Identity()])
    out = pipeline(img)
    assert out.dtype == lucid.float32 and tuple(out.shape) == (3, 4, 5)
    np.testing.assert_allclose(out.numpy(), np.moveaxis(img, -1, 0) / 255.0, rtol=1e-6, atol=1e-7)
    assert v2.ToDtype(lucid.float32)(v2.ToImage()(img)).numpy().max() > 1  # no scaling
    lucid.manual_seed(4)
    noisy = v2.GaussianNoise(sigma=0.5)(out).numpy()
    assert noisy.min() >= 0 and noisy.max() <= 1 and not np.allclose(noisy, out.numpy())
    with pytest.raises(ValueError, match="float dtype"):
        v2.GaussianNoise()(v2.ToImage()(img))


def test_sharpness_autocontrast_equalize_on_hwc() -> None:
    img = np.array([[10, 20], [30, 40]], np.uint8)[..., None].repeat(3, axis=-1)
    auto = T.RandomAutocontrast(p=1.0)(img)
    np.testing.assert_array_equal(auto[..., 0], [[0, 85], [170, 255]])
    flat = np.full((3, 3, 3), 7, np.uint8)
    np.testing.assert_array_equal(F.autocontrast(flat), flat)  # constant channel kept
    assert T.RandomAdjustSharpness(2.0, p=1.0)(img) is img  # (2 x 2: nothing inside)
    big = _hwc(8, (6, 6, 3))
    np.testing.assert_array_equal(F.adjust_sharpness(big, 1.0), big)
    eq = T.RandomEqualize(p=1.0)(big)
    assert eq.shape == big.shape and eq.dtype == np.uint8
    with pytest.raises(TypeError, match="Only torch.uint8"):
        F.equalize(lucid.ones(3, 4, 4))
    with pytest.raises(ValueError, match="Gamma"):
        F.adjust_gamma(big, -1)
    np.testing.assert_array_equal(F.adjust_gamma(big, 1.0), big)


def test_linear_transformation() -> None:
    rng = np.random.default_rng(9)
    x = rng.random((2, 2, 3)).astype(np.float32)
    m = rng.random((12, 12)).astype(np.float32)
    mean = rng.random(12).astype(np.float32)
    out = T.LinearTransformation(lucid.tensor(m), lucid.tensor(mean))(lucid.tensor(x))
    expected = ((x.reshape(1, 12) - mean) @ m).reshape(2, 2, 3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="should be square"):
        T.LinearTransformation(lucid.ones(3, 4), lucid.ones(3))
    with pytest.raises(ValueError, match="incompatible shape"):
        T.LinearTransformation(lucid.ones(4, 4), lucid.ones(4))(lucid.tensor(x))


def test_random_perspective() -> None:
    img = _hwc(10, (8, 10, 3))
    start = [[0, 0], [9, 0], [9, 7], [0, 7]]
    np.testing.assert_array_equal(F.perspective(img, start, start, "nearest"), img)
    lucid.manual_seed(5)
    start2, end = T.RandomPerspective.get_params(10, 8, 0.5)
    assert start2 == start
    assert 0 <= end[0][0] <= 2 and 0 <= end[0][1] <= 2 and 7 <= end[2][0] <= 9
    out = T.RandomPerspective(p=1.0)(img)
    assert out.shape == img.shape and out.dtype == np.uint8
    assert T.RandomPerspective(p=0.0)(img) is img


def test_elastic_transform() -> None:
    img = _hwc(11, (8, 10, 3))
    zero = lucid.zeros(1, 8, 10, 2)
    np.testing.assert_array_equal(F.elastic_transform(img, zero, "nearest"), img)
    shift = np.zeros((1, 8, 10, 2), np.float32)
    shift[..., 0] = 2 / 10  # one pixel right in the source: the image moves left
    moved = F.elastic_transform(img, lucid.tensor(shift), "nearest", fill=0)
    np.testing.assert_array_equal(moved[:, :-1], img[:, 1:])
    lucid.manual_seed(6)
    disp = T.ElasticTransform.get_params([50.0, 50.0], [5.0, 5.0], [8, 10])
    assert tuple(disp.shape) == (1, 8, 10, 2) and disp.dtype == lucid.float32
    out = T.ElasticTransform(alpha=20.0, sigma=2.0)(img)
    assert out.shape == img.shape and out.dtype == np.uint8
    with pytest.raises(ValueError, match="displacement shape"):
        F.elastic_transform(img, lucid.zeros(1, 3, 3, 2))


def test_v2_mixup_cutmix_rgb_channel_permutation() -> None:
    from lucid.data.transforms import v2

    rng = np.random.default_rng(12)
    images = lucid.tensor(rng.random((4, 3, 6, 8)).astype(np.float32))
    labels = lucid.tensor(np.array([0, 1, 2, 1]))
    lucid.manual_seed(7)
    mixed, soft = v2.MixUp(num_classes=3)(images, labels)
    assert tuple(mixed.shape) == (4, 3, 6, 8) and tuple(soft.shape) == (4, 3)
    np.testing.assert_allclose(soft.numpy().sum(1), 1.0, rtol=1e-6, atol=1e-6)
    lam = float(soft.numpy()[0, 0])  # image 0 (label 0) mixed with image 3 (label 1)
    expected = images.numpy()[0] * lam + images.numpy()[3] * (1 - lam)
    np.testing.assert_allclose(mixed.numpy()[0], expected, rtol=1e-5, atol=1e-6)
    cut, soft2 = v2.CutMix(num_classes=3)((images, labels))
    changed = (cut.numpy() != images.numpy()).any(axis=1)[0].mean()
    np.testing.assert_allclose(1 - soft2.numpy()[0, 0], changed, rtol=0, atol=0.2)
    with pytest.raises(ValueError, match="Alpha"):
        v2.MixUp(alpha=0)
    gray = np.zeros((4, 5), np.uint8)
    assert v2.RGB()(gray).shape == (4, 5, 3)
    img = _hwc(13, (4, 5, 3))
    perm = v2.RandomChannelPermutation()(img)
    assert sorted(perm[0, 0].tolist()) == sorted(img[0, 0].tolist())


@pytest.mark.parametrize("layout", ["hwc", "tensor"])
def test_randaugment_and_trivialaugment_run_every_op(layout: str) -> None:
    from lucid.data.transforms.autoaugment import _apply_op

    img: object = _hwc(14, (12, 10, 3))
    if layout == "tensor":
        img = lucid.tensor(np.moveaxis(_hwc(14, (12, 10, 3)), -1, 0).copy())
    ops = ["ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color"]
    ops += ["Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]
    ops += ["Invert", "Identity"]
    for op in ops:
        out = _apply_op(
            img, op, 4.0 if op == "Posterize" else 0.3, F.InterpolationMode.NEAREST, None
        )
        assert F.get_dimensions(out) == F.get_dimensions(img), op
    with pytest.raises(ValueError, match="not recognized"):
        _apply_op(img, "Blur", 0.0, F.InterpolationMode.NEAREST, None)
    lucid.manual_seed(8)
    for t in (
        T.RandAugment(),
        T.TrivialAugmentWide(fill=0),
        T.RandAugment(num_ops=4, fill=[1, 2, 3]),
    ):
        out = t(img)
        assert F.get_dimensions(out) == [3, 12, 10]
    ra = T.RandAugment()._augmentation_space(31, (12, 10))
    assert ra["Posterize"][0][0] == 8 and ra["Posterize"][0][-1] == 4
    np.testing.assert_allclose(ra["TranslateX"][0][-1], 150.0 / 331.0 * 10, rtol=1e-12, atol=0)
