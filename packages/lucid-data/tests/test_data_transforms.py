"""Transforms on numpy HWC uint8 images, CHW float arrays and lucid tensors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data import transforms as T
from lucid.data.transforms import functional as F


def hwc(h: int = 4, w: int = 5, c: int = 3) -> np.ndarray:
    return np.arange(h * w * c, dtype=np.uint8).reshape(h, w, c)


def test_to_tensor_hwc_uint8_to_chw_float_in_unit_range() -> None:
    img = hwc()
    t = T.ToTensor()(img)
    assert isinstance(t, lucid.Tensor) and t.dtype == lucid.float32 and t.shape == (3, 4, 5)
    np.testing.assert_allclose(t.numpy(), img.transpose(2, 0, 1) / 255, rtol=1e-6, atol=1e-6)
    assert t.numpy().flags.c_contiguous


def test_to_tensor_grayscale_gets_a_channel_and_batches_work() -> None:
    assert T.ToTensor()(np.zeros((28, 28), np.uint8)).shape == (1, 28, 28)
    assert T.ToTensor().batch(np.zeros((5, 28, 28), np.uint8)).shape == (5, 1, 28, 28)
    assert T.ToTensor().batch(np.zeros((5, 8, 8, 3), np.uint8)).shape == (5, 3, 8, 8)


def test_to_tensor_rejects_tensors() -> None:
    with pytest.raises(TypeError, match="pic should be a numpy array or a PIL image, got Tensor"):
        T.ToTensor()(lucid.zeros(3, 2, 2))


def test_normalize_per_channel_keeps_type_and_dtype() -> None:
    x = np.ones((2, 2, 2), np.float32)
    x[1] *= 3
    out = T.Normalize((1.0, 1.0), (0.5, 2.0))(lucid.tensor(x))
    assert isinstance(out, lucid.Tensor) and out.dtype == lucid.float32
    np.testing.assert_allclose(out.numpy()[:, 0, 0], [0.0, 1.0], rtol=1e-7, atol=1e-7)
    arr_out = T.Normalize((1.0, 1.0), (0.5, 2.0))(x)
    assert isinstance(arr_out, np.ndarray) and arr_out.dtype == np.float32


def test_normalize_errors() -> None:
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got uint8"):
        T.Normalize((0.5,), (0.5,))(np.zeros((1, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="std evaluated to zero"):
        T.Normalize((0.5,), (0.0,))(np.zeros((1, 2, 2), np.float32))
    with pytest.raises(ValueError, match="mean has 2 values but the image has 3 channels"):
        T.Normalize((0.5, 0.5), (1.0,))(np.zeros((3, 2, 2), np.float32))


def test_normalize_inplace_writes_into_the_input() -> None:
    x = np.ones((1, 2, 2), np.float32)
    T.Normalize((1.0,), (1.0,), inplace=True)(x)
    assert not x.any()


def test_compose_and_lambda() -> None:
    t = T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2)])
    assert t(np.full((1, 1), 255, np.uint8)).numpy().item() == 2.0
    assert "ToTensor()" in repr(t)
    assert not t.supports_batch
    with pytest.raises(TypeError, match="lambd should be callable"):
        T.Lambda(3)  # type: ignore[arg-type]


def test_center_crop_and_crop_with_zero_padding() -> None:
    img = hwc(5, 5, 1)
    np.testing.assert_array_equal(T.CenterCrop(3)(img), img[1:4, 1:4])
    big = T.CenterCrop(7)(img)
    assert big.shape == (7, 7, 1) and big[0].sum() == 0
    np.testing.assert_array_equal(big[1:6, 1:6], img)
    t = lucid.tensor(np.arange(25, dtype=np.float32).reshape(1, 5, 5))
    np.testing.assert_array_equal(T.CenterCrop((1, 3))(t).numpy(), [[[11, 12, 13]]])


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("constant", [9, 9, 1, 2, 3, 9, 9]),
        ("edge", [1, 1, 1, 2, 3, 3, 3]),
        ("reflect", [3, 2, 1, 2, 3, 2, 1]),
        ("symmetric", [2, 1, 1, 2, 3, 3, 2]),
    ],
)
def test_pad_modes(mode: str, expected: list[int]) -> None:
    row = np.array([[[1.0, 2.0, 3.0]]], np.float32)  # C x H x W = 1 x 1 x 3
    out = T.Pad((2, 0), fill=9, padding_mode=mode)(row)
    np.testing.assert_array_equal(out[0, 0], expected)


def test_pad_forms_left_top_right_bottom() -> None:
    out = F.pad(np.zeros((2, 3), np.uint8), (1, 2, 3, 4), fill=1)
    assert out.shape == (2 + 2 + 4, 3 + 1 + 3)
    assert out[2:4, 1:4].sum() == 0 and out.sum() == out.size - 6
    with pytest.raises(ValueError, match="Padding mode should be either"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="1, 2, or 4 element"):
        T.Pad((1, 2, 3))


def test_random_crop_with_padding_finds_a_window_of_the_padded_image() -> None:
    img = hwc(6, 6, 1)
    padded = np.pad(img, ((2, 2), (2, 2), (0, 0)))
    lucid.manual_seed(0)
    out = T.RandomCrop(6, padding=2)(img)
    windows = [padded[i : i + 6, j : j + 6] for i in range(5) for j in range(5)]
    assert any(np.array_equal(out, w) for w in windows)


def test_random_crop_reproducible_and_varied() -> None:
    img = hwc(8, 8, 3)
    lucid.manual_seed(1)
    a = [T.RandomCrop(4)(img) for _ in range(6)]
    lucid.manual_seed(1)
    b = [T.RandomCrop(4)(img) for _ in range(6)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert len({x.tobytes() for x in a}) > 1


def test_random_crop_too_big_and_pad_if_needed() -> None:
    with pytest.raises(
        ValueError, match=r"Required crop size \(5, 5\) is larger than input image size \(4, 5\)"
    ):
        T.RandomCrop(5)(hwc(4, 5))
    assert T.RandomCrop(6, pad_if_needed=True)(hwc(4, 5)).shape == (6, 6, 3)


def test_random_crop_batch_crops_each_image_from_its_own_padded_copy() -> None:
    imgs = np.stack([hwc(5, 5, 1) + i for i in range(4)])
    lucid.manual_seed(2)
    out = T.RandomCrop(5, padding=1, padding_mode="edge").batch(imgs)
    assert out.shape == (4, 5, 5, 1)
    for i in range(4):
        padded = np.pad(imgs[i], ((1, 1), (1, 1), (0, 0)), mode="edge")
        windows = [padded[a : a + 5, b : b + 5] for a in range(3) for b in range(3)]
        assert any(np.array_equal(out[i], w) for w in windows)


def test_flips() -> None:
    img = hwc(2, 3, 1)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(img), img[:, ::-1])
    np.testing.assert_array_equal(T.RandomVerticalFlip(p=1.0)(img), img[::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=0.0)(img), img)
    t = lucid.tensor(np.arange(6, dtype=np.float32).reshape(1, 2, 3))
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(t).numpy(), [[[2, 1, 0], [5, 4, 3]]])


def test_flip_batch_flips_about_half() -> None:
    imgs = np.stack([hwc(2, 3, 1)] * 200)
    lucid.manual_seed(0)
    out = T.RandomHorizontalFlip().batch(imgs)
    flipped = np.array([np.array_equal(o, imgs[0][:, ::-1]) for o in out])
    assert all(np.array_equal(o, imgs[0]) for o in out[~flipped])
    assert 60 < flipped.sum() < 140
    chw = lucid.tensor(np.stack([np.arange(6, dtype=np.float32).reshape(1, 2, 3)] * 4))
    out_t = T.RandomVerticalFlip(p=1.0).batch(chw)
    np.testing.assert_array_equal(out_t.numpy()[:, 0, 0], [[3, 4, 5]] * 4)


def test_resize_nearest_and_bilinear_known_values() -> None:
    x = np.array([[[0.0, 1.0], [2.0, 3.0]]], np.float32)
    near = T.Resize((4, 4), interpolation="nearest")(x)
    np.testing.assert_array_equal(near[0, 0], [0, 0, 1, 1])
    bil = T.Resize((4, 4))(x)[0]
    np.testing.assert_allclose(
        bil[0], [0.0, 0.25, 0.75, 1.0], rtol=1e-7, atol=1e-7
    )  # half-pixel centres
    np.testing.assert_allclose(bil[:, 0], [0.0, 0.5, 1.5, 2.0], rtol=1e-7, atol=1e-7)


def test_resize_int_sets_the_shorter_edge_and_keeps_uint8() -> None:
    out = T.Resize(8)(hwc(4, 6, 3))
    assert out.shape == (8, 12, 3) and out.dtype == np.uint8
    assert T.Resize(2).batch(np.zeros((3, 4, 8, 3), np.uint8)).shape == (3, 2, 4, 3)
    with pytest.raises(ValueError, match="interpolation should be one of"):
        T.Resize(3, interpolation="cubic")


def test_random_rotation_by_90_degrees_is_exact() -> None:
    img = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    rot = F.rotate(img, 90)
    np.testing.assert_array_equal(rot[0], np.rot90(img[0]))
    out = T.RandomRotation((90, 90))(lucid.tensor(img))
    np.testing.assert_array_equal(out.numpy()[0], np.rot90(img[0]))
    partial = F.rotate(img, 45, interpolation="bilinear", fill=0)
    assert partial[0, 1, 1] == pytest.approx(4.0, rel=1e-6, abs=1e-12)
    with pytest.raises(ValueError, match="must be positive"):
        T.RandomRotation(-3)


def test_color_jitter_brightness_and_ranges() -> None:
    img = np.full((2, 2, 3), 100, np.uint8)
    lucid.manual_seed(0)
    out = T.ColorJitter(brightness=(2.0, 2.0))(img)
    assert out.dtype == np.uint8 and (out == 200).all()
    x = np.random.default_rng(0).random((3, 4, 4)).astype(np.float32)
    gray = T.ColorJitter(saturation=(0.0, 0.0))(x)
    np.testing.assert_allclose(gray[0], gray[1], atol=1e-6, rtol=1e-7)  # saturation 0: grey image
    same = T.ColorJitter(contrast=(1.0, 1.0))(x)
    np.testing.assert_allclose(same, x, rtol=1e-7, atol=1e-7)
    with pytest.raises(ValueError, match=r"hue values should be between \(-0.5, 0.5\)"):
        T.ColorJitter(hue=0.7)


def test_color_jitter_hue_rotates_the_colour_wheel() -> None:
    red = np.zeros((3, 2, 2), np.float32)
    red[0] = 1.0
    green = T.ColorJitter(hue=(1 / 3, 1 / 3))(red)
    np.testing.assert_allclose(green[:, 0, 0], [0.0, 1.0, 0.0], atol=1e-5, rtol=1e-7)
    x = np.random.default_rng(1).random((3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(T.ColorJitter(hue=(0.0, 0.0))(x), x, atol=1e-6, rtol=1e-7)
    full_turn = T.ColorJitter(hue=(0.5, 0.5))(T.ColorJitter(hue=(0.5, 0.5))(x))
    np.testing.assert_allclose(full_turn, x, atol=1e-5, rtol=1e-7)
    gray = np.full((1, 2, 2), 0.3, np.float32)
    np.testing.assert_array_equal(T.ColorJitter(hue=0.2)(gray), gray)


def test_tensors_on_cpu_stay_tensors_through_geometric_transforms() -> None:
    t = lucid.tensor(np.zeros((3, 8, 8), np.float32))
    for tr in (T.RandomCrop(4, padding=1), T.CenterCrop(4), T.Resize(4), T.Pad(1)):
        out = tr(t)
        assert isinstance(out, lucid.Tensor), type(tr).__name__
    assert T.Pad(1)(t).shape == (3, 10, 10)


def test_batch_transform_helper() -> None:
    assert T.batch_transform(T.ToTensor()) is not None
    assert T.batch_transform(T.Lambda(abs)) is None
    assert T.batch_transform(T.Compose([T.ToTensor(), T.Lambda(abs)])) is None
    with pytest.raises(TypeError, match="cannot transform a batch"):
        T.Compose([T.Lambda(abs)]).batch(np.zeros((1, 2, 2), np.uint8))
