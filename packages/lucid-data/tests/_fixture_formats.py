"""Writers of the real file formats the dataset tests build fixtures in: MATLAB level-5
``.mat`` (numeric, char, cell, struct, sparse), Middlebury ``.flo``, ``.pfm``, 16-bit KITTI
flow PNGs, images. Standard library, NumPy and Pillow only."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

_MI_INT8, _MI_UINT8, _MI_INT32, _MI_UINT32, _MI_DOUBLE, _MI_MATRIX, _MI_UINT16 = (
    1, 2, 5, 6, 9, 14, 4
)  # fmt: skip
_CLASS_OF = {
    np.dtype("f8"): (6, _MI_DOUBLE), np.dtype("u1"): (9, _MI_UINT8),
    np.dtype("i4"): (12, _MI_INT32), np.dtype("u4"): (13, _MI_UINT32),
    np.dtype("i1"): (8, _MI_INT8), np.dtype("u2"): (11, _MI_UINT16),
}  # fmt: skip


class Sparse:
    """A dense 2-D array to be written as a MATLAB sparse matrix."""

    def __init__(self, dense: np.ndarray) -> None:
        self.dense = np.asarray(dense, dtype=np.float64)


def _element(mtype: int, data: bytes) -> bytes:
    pad = -len(data) % 8
    return struct.pack("<II", mtype, len(data)) + data + b"\0" * pad


def _header(mx_class: int, dims: tuple[int, ...], name: str, flags: int = 0) -> bytes:
    dims = dims if len(dims) >= 2 else (1, *dims) if dims else (1, 1)
    return (
        _element(_MI_UINT32, struct.pack("<II", mx_class | flags, 0))
        + _element(_MI_INT32, struct.pack(f"<{len(dims)}i", *dims))
        + _element(_MI_INT8, name.encode("ascii"))
    )


def _matrix(value: Any, name: str = "") -> bytes:
    if isinstance(value, Sparse):
        d = value.dense
        rows, cols = np.nonzero(d.T)  # column-major order
        jc = np.searchsorted(rows, np.arange(d.shape[1] + 1)).astype("<i4")
        body = (
            _element(_MI_UINT32, struct.pack("<II", 5, max(1, len(cols))))
            + _element(_MI_INT32, struct.pack("<2i", *d.shape))
            + _element(_MI_INT8, name.encode("ascii"))
            + _element(_MI_INT32, cols.astype("<i4").tobytes())
            + _element(_MI_INT32, jc.tobytes())
            + _element(_MI_DOUBLE, d.T[rows, cols].astype("<f8").tobytes())
        )
        return _element(_MI_MATRIX, body)
    if isinstance(value, str):
        codes = np.array([ord(c) for c in value], dtype="<u2")
        body = _header(4, (1, len(value)), name) + _element(_MI_UINT16, codes.tobytes())
        return _element(_MI_MATRIX, body)
    if isinstance(value, dict):  # a 1 x 1 struct
        fields = list(value)
        length = max(len(f) for f in fields) + 1
        names = b"".join(f.encode("ascii").ljust(length, b"\0") for f in fields)
        body = (
            _header(2, (1, 1), name)
            + _element(_MI_INT32, struct.pack("<i", length))
            + _element(_MI_INT8, names)
            + b"".join(_matrix(value[f]) for f in fields)
        )
        return _element(_MI_MATRIX, body)
    if isinstance(value, list) and value and isinstance(value[0], dict):  # 1 x n struct array
        fields = list(value[0])
        length = max(len(f) for f in fields) + 1
        names = b"".join(f.encode("ascii").ljust(length, b"\0") for f in fields)
        body = (
            _header(2, (1, len(value)), name)
            + _element(_MI_INT32, struct.pack("<i", length))
            + _element(_MI_INT8, names)
            + b"".join(_matrix(item[f]) for item in value for f in fields)
        )
        return _element(_MI_MATRIX, body)
    if isinstance(value, list | tuple):  # a 1 x n (list) or n x 1 (tuple) cell array
        dims = (1, len(value)) if isinstance(value, list) else (len(value), 1)
        body = _header(1, dims, name) + b"".join(_matrix(v) for v in value)
        return _element(_MI_MATRIX, body)
    arr = np.asarray(value)
    if arr.dtype == np.int64:
        arr = arr.astype(np.float64)
    mx_class, mi_type = _CLASS_OF[arr.dtype]
    arr2 = arr if arr.ndim >= 2 else arr.reshape(1, -1) if arr.ndim == 1 else arr.reshape(1, 1)
    data = arr2.astype(arr2.dtype.newbyteorder("<")).tobytes(order="F")
    return _element(_MI_MATRIX, _header(mx_class, arr2.shape, name) + _element(mi_type, data))


def write_mat(path: Path, variables: dict[str, Any]) -> None:
    """A MATLAB level-5 file holding ``variables``: arrays (numeric), str (char), dict (a 1x1
    struct), list of dicts (a 1xn struct array), list (a 1xn cell), tuple (an nx1 cell),
    ``Sparse``."""
    header = b"MATLAB 5.0 MAT-file, written by lucid's tests".ljust(116, b" ")
    header += b"\0" * 8 + struct.pack("<H", 0x0100) + b"IM"
    path.write_bytes(header + b"".join(_matrix(v, k) for k, v in variables.items()))


def write_flo(path: Path, flow: np.ndarray) -> None:
    """Middlebury .flo: 'PIEH', width, height, then H x W x 2 float32."""
    h, w = flow.shape[1:]
    data = np.ascontiguousarray(flow.transpose(1, 2, 0), dtype="<f4")
    path.write_bytes(b"PIEH" + struct.pack("<ii", w, h) + data.tobytes())


def write_pfm(path: Path, data: np.ndarray) -> None:
    """A little-endian PFM (``Pf`` for H x W, ``PF`` for H x W x 3), rows bottom-up."""
    kind = b"PF" if data.ndim == 3 else b"Pf"
    h, w = data.shape[:2]
    body = np.ascontiguousarray(np.flipud(data), dtype="<f4").tobytes()
    path.write_bytes(kind + b"\n" + f"{w} {h}\n-1.0\n".encode() + body)


def write_image(path: Path, array: np.ndarray) -> None:
    """``array`` (H x W or H x W x C, uint8 or uint16) saved by Pillow, format by suffix."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    if array.dtype == np.uint16:
        Image.fromarray(array.astype(np.uint16)).save(path)  # 16-bit gray ("I;16")
    else:
        Image.fromarray(array).save(path)


def write_kitti_flow(path: Path, flow: np.ndarray, valid: np.ndarray) -> None:
    """KITTI's 16-bit RGB flow PNG: u, v as ``flow * 64 + 2**15``, then the valid mask."""
    import zlib

    h, w = valid.shape
    rgb = np.stack([*(flow * 64 + 2**15), valid], axis=-1).astype(">u2")
    raw = b"".join(b"\0" + rgb[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
