"""lucid.data.io: images read, decoded and encoded as torchvision.io's uint8 CHW tensors,
on real PNG/JPEG/GIF files that Pillow writes in the test."""

from __future__ import annotations

import io as _io
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data import io

Image = pytest.importorskip("PIL.Image")


def _rgb(height: int = 6, width: int = 5) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)


def _save(arr: np.ndarray, fmt: str, **kwargs: object) -> bytes:
    buf = _io.BytesIO()
    Image.fromarray(arr).save(buf, format=fmt, **kwargs)
    return buf.getvalue()


def test_read_and_write_file_round_trip_bytes(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)))
    data = io.read_file(path)
    assert data.dtype == lucid.uint8 and tuple(data.shape) == (256,)
    io.write_file(str(tmp_path / "copy.bin"), data)
    assert (tmp_path / "copy.bin").read_bytes() == bytes(range(256))


def test_write_file_refuses_a_non_uint8_tensor(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="uint8"):
        io.write_file(tmp_path / "x", lucid.zeros(3))


def test_read_image_png_rgb_is_uint8_chw(tmp_path: Path) -> None:
    arr = _rgb()
    path = tmp_path / "a.png"
    path.write_bytes(_save(arr, "PNG"))
    img = io.read_image(str(path))
    assert img.dtype == lucid.uint8 and tuple(img.shape) == (3, 6, 5)
    np.testing.assert_array_equal(img.numpy(), arr.transpose(2, 0, 1))


def test_modes_gray_rgb_alpha_unchanged(tmp_path: Path) -> None:
    arr = _rgb()
    rgba = np.concatenate([arr, np.full((6, 5, 1), 200, np.uint8)], axis=2)
    data = io.read_file(_write(tmp_path / "a.png", _save(rgba, "PNG")))
    assert tuple(io.decode_png(data).shape) == (4, 6, 5)
    assert tuple(io.decode_png(data, io.ImageReadMode.RGB).shape) == (3, 6, 5)
    assert tuple(io.decode_image(data, "gray").shape) == (1, 6, 5)
    rgb_alpha = io.decode_image(data, io.ImageReadMode.RGB_ALPHA).numpy()
    np.testing.assert_array_equal(rgb_alpha, rgba.transpose(2, 0, 1))
    assert io.ImageReadMode["RGBA"] is io.ImageReadMode.RGB_ALPHA
    gray = io.decode_image(data, io.ImageReadMode.GRAY).numpy()[0].astype(np.float64)
    luma = arr @ np.array([0.299, 0.587, 0.114])
    np.testing.assert_allclose(gray, luma, rtol=0, atol=1.0)


def test_gray_png_unchanged_has_one_channel(tmp_path: Path) -> None:
    gray = _rgb()[:, :, 0]
    img = io.decode_image(str(_write(tmp_path / "g.png", _save(gray, "PNG"))))
    assert tuple(img.shape) == (1, 6, 5)
    np.testing.assert_array_equal(img.numpy()[0], gray)
    assert tuple(io.decode_image(tmp_path / "g.png", io.ImageReadMode.RGB).shape) == (3, 6, 5)


def test_jpeg_decodes_close_to_the_source(tmp_path: Path) -> None:
    arr = np.tile(np.linspace(0, 255, 16, dtype=np.uint8)[None, :, None], (16, 1, 3))
    data = io.read_file(_write(tmp_path / "a.jpg", _save(arr, "JPEG", quality=95)))
    img = io.decode_jpeg(data)
    assert isinstance(img, lucid.Tensor) and img.dtype == lucid.uint8
    assert tuple(img.shape) == (3, 16, 16)
    np.testing.assert_allclose(
        img.numpy().astype(np.float64), arr.transpose(2, 0, 1), rtol=0, atol=8.0
    )
    both = io.decode_jpeg([data, data], mode=io.ImageReadMode.GRAY)
    assert isinstance(both, list) and [tuple(t.shape) for t in both] == [(1, 16, 16)] * 2
    with pytest.raises(RuntimeError, match="JPEG"):
        io.decode_jpeg(io.encode_png(img))


def test_encode_png_round_trips_and_write_png(tmp_path: Path) -> None:
    chw = lucid.from_numpy(np.ascontiguousarray(_rgb().transpose(2, 0, 1)))
    encoded = io.encode_png(chw, compression_level=9)
    assert encoded.dtype == lucid.uint8 and encoded.ndim == 1
    assert bytes(encoded.numpy()[:8]) == b"\x89PNG\r\n\x1a\n"
    np.testing.assert_array_equal(io.decode_png(encoded).numpy(), chw.numpy())
    io.write_png(chw[:1], tmp_path / "g.png")
    with Image.open(tmp_path / "g.png") as img:
        assert img.mode == "L" and img.size == (5, 6)
    with pytest.raises(ValueError, match="Compression level"):
        io.encode_png(chw, compression_level=10)
    with pytest.raises(ValueError, match="uint8"):
        io.encode_png(chw.float())


def test_encode_and_write_jpeg(tmp_path: Path) -> None:
    chw = lucid.from_numpy(np.full((3, 8, 8), 120, np.uint8))
    encoded = io.encode_jpeg(chw, quality=90)
    assert isinstance(encoded, lucid.Tensor)
    assert bytes(encoded.numpy()[:2]) == b"\xff\xd8"
    io.write_jpeg(chw, str(tmp_path / "a.jpg"))
    back = io.read_image(tmp_path / "a.jpg").numpy().astype(np.int64)
    np.testing.assert_allclose(back, 120, rtol=0, atol=2)
    with pytest.raises(ValueError, match="between 1 and 100"):
        io.encode_jpeg(chw, quality=0)
    assert len(io.encode_jpeg([chw, chw])) == 2


def test_decode_gif_frames(tmp_path: Path) -> None:
    frames = [Image.fromarray(np.full((4, 3, 3), v, np.uint8)) for v in (0, 255)]
    buf = _io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    out = io.decode_gif(lucid.from_numpy(np.frombuffer(buf.getvalue(), np.uint8).copy()))
    assert tuple(out.shape) == (2, 3, 4, 3)
    assert out.numpy()[0].max() == 0 and out.numpy()[1].min() == 255


def test_unknown_mode_and_garbage_bytes_raise() -> None:
    with pytest.raises(ValueError, match="read mode"):
        io.decode_image(lucid.from_numpy(np.zeros(4, np.uint8)), "cmyk")
    with pytest.raises(RuntimeError, match="decode_image"):
        io.decode_image(lucid.from_numpy(np.zeros(4, np.uint8)))


def test_video_readers_say_what_is_missing() -> None:
    with pytest.raises(NotImplementedError, match="read_video: lucid has no video decoder"):
        io.read_video("clip.mp4")
    with pytest.raises(NotImplementedError, match="VideoReader"):
        io.VideoReader("clip.mp4")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
