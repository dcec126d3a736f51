"""lucid.data.utils: make_grid's tiling and save_image's PNG files, as torchvision's."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data.utils import make_grid, save_image


def read_png(data: bytes) -> np.ndarray:
    """Decode the PNGs save_image writes (8-bit, no interlace, filter 0 rows) to H x W x C."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, payload = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF, f"bad CRC in {kind!r}"
        chunks[kind] = chunks.get(kind, b"") + payload
        pos += 12 + length
    width, height, depth, color, *_ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    channels = {0: 1, 2: 3, 6: 4}[color]
    assert depth == 8 and b"IEND" in chunks
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, channels)


def test_make_grid_tiles_with_padding_and_three_channels() -> None:
    images = lucid.tensor(np.arange(5 * 4 * 3, dtype=np.float32).reshape(5, 1, 4, 3))
    grid = make_grid(images, nrow=3, padding=1, pad_value=-1.0).numpy()
    assert grid.shape == (3, 2 * 5 + 1, 3 * 4 + 1)
    first = np.repeat(images.numpy()[0], 3, 0)
    np.testing.assert_allclose(grid[:, 1:5, 1:4], first, rtol=0, atol=0)
    np.testing.assert_allclose(grid[0, 6:10, 5:8], images.numpy()[4, 0], rtol=0, atol=0)
    assert (grid[:, 0, :] == -1).all() and (grid[:, 6:10, 9:12] == -1).all()  # empty cell


def test_make_grid_single_image_and_list() -> None:
    assert make_grid(lucid.zeros(28, 28)).shape == (3, 28, 28)
    assert make_grid(lucid.zeros(1, 5, 5)).shape == (3, 5, 5)
    assert make_grid([lucid.zeros(3, 5, 5)] * 2, padding=0).shape == (3, 5, 10)
    with pytest.raises(ValueError, match=r"got a tensor of shape \(1, 1, 1, 1, 1\)"):
        make_grid(lucid.zeros(1, 1, 1, 1, 1))


def test_make_grid_normalize_over_all_or_each_image() -> None:
    images = lucid.tensor(np.array([[[[0.0, 2.0]]], [[[4.0, 8.0]]]], np.float32))
    whole = make_grid(images, normalize=True, padding=0).numpy()[0]
    np.testing.assert_allclose(whole, [[0.0, 0.25, 0.5, 1.0]], rtol=1e-6, atol=1e-7)
    each = make_grid(images, normalize=True, scale_each=True, padding=0).numpy()[0]
    np.testing.assert_allclose(each, [[0.0, 1.0, 0.0, 1.0]], rtol=1e-6, atol=1e-7)
    ranged = make_grid(images, normalize=True, value_range=(0, 4), padding=0).numpy()[0]
    np.testing.assert_allclose(ranged, [[0.0, 0.5, 1.0, 1.0]], rtol=1e-6, atol=1e-7)


def test_save_image_writes_the_grid_as_png(tmp_path: Path) -> None:
    images = lucid.rand(6, 1, 8, 7)
    save_image(images, tmp_path / "grid.png", nrow=4)
    pixels = read_png((tmp_path / "grid.png").read_bytes())
    grid = make_grid(images, nrow=4).numpy().transpose(1, 2, 0)
    expected = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(pixels, expected)


def test_save_image_to_a_file_object_and_rgba() -> None:
    buf = io.BytesIO()
    save_image(lucid.ones(4, 3, 2), buf, format="PNG")
    pixels = read_png(buf.getvalue())
    assert pixels.shape == (3, 2, 4) and (pixels == 255).all()


def test_save_image_refuses_other_formats_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"writes PNG files.*got '.*x\.jpg'"):
        save_image(lucid.zeros(1, 2, 2), tmp_path / "x.jpg")
    assert not (tmp_path / "x.jpg").exists()


def test_save_image_png_reads_back_with_pillow(tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")
    images = lucid.rand(3, 3, 5, 6)
    save_image(images, tmp_path / "rgb.png", padding=0)
    with image.open(tmp_path / "rgb.png") as img:
        read = np.asarray(img.convert("RGB"))
    np.testing.assert_array_equal(read, read_png((tmp_path / "rgb.png").read_bytes()))
