"""The numeric arrays of a MATLAB level-5 ``.mat`` file (what ``scipy.io.loadmat`` gives for
them), read with the standard library and NumPy when SciPy is not installed.

Only what SVHN's files use is read: real numeric matrices, compressed or not; cells,
structs, sparse and complex arrays are skipped. MATLAB 7.3 files (HDF5) are refused.
"""

from __future__ import annotations

import importlib
import os
import struct
import zlib
from typing import Any

import numpy as np

__all__ = ["load_mat"]

_MI_TYPES: dict[int, str] = {
    1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8", 12: "i8", 13: "u8"
}  # fmt: skip
_MX_CLASSES: dict[int, str] = {
    6: "f8", 7: "f4", 8: "i1", 9: "u1", 10: "i2", 11: "u2", 12: "i4", 13: "u4", 14: "i8", 15: "u8"
}  # fmt: skip
_MI_MATRIX, _MI_COMPRESSED = 14, 15


def load_mat(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The named numeric arrays of the level-5 MAT file at ``path``, shaped as MATLAB's."""
    try:
        scipy_io = importlib.import_module("scipy.io")
    except ImportError:
        pass
    else:
        loaded: dict[str, Any] = scipy_io.loadmat(os.fspath(path))
        return {k: v for k, v in loaded.items() if not k.startswith("__")}
    with open(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"\x89HDF") or raw[512:516] == b"\x89HDF" or raw[124:126] == b"\x00\x02":
        raise RuntimeError(
            f"{path}: a MATLAB 7.3 (HDF5) file; reading it needs h5py or scipy, not installed"
        )
    if len(raw) < 128 or raw[126:128] not in (b"IM", b"MI"):
        raise RuntimeError(f"{path}: not a MATLAB level-5 .mat file (no 'MI' endian mark)")
    order = "<" if raw[126:128] == b"IM" else ">"
    arrays: dict[str, np.ndarray] = {}
    _read_elements(raw, 128, order, arrays, str(path))
    return arrays


def _tag(raw: bytes, pos: int, order: str) -> tuple[int, int, int, int]:
    """(type, nbytes, data start, next element) of the element at ``pos``."""
    (first,) = struct.unpack_from(f"{order}I", raw, pos)
    if first >> 16:  # small data element: type and size in one word, data in the next
        return first & 0xFFFF, first >> 16, pos + 4, pos + 8
    mtype, nbytes = struct.unpack_from(f"{order}II", raw, pos)
    end = pos + 8 + nbytes
    return mtype, nbytes, pos + 8, end if mtype == _MI_COMPRESSED else end + (-end % 8)


def _read_elements(
    raw: bytes, pos: int, order: str, out: dict[str, np.ndarray], where: str
) -> None:
    while pos + 8 <= len(raw):
        mtype, nbytes, start, pos = _tag(raw, pos, order)
        body = raw[start : start + nbytes]
        if mtype == _MI_COMPRESSED:
            try:
                _read_elements(zlib.decompress(body), 0, order, out, where)
            except zlib.error as e:
                raise RuntimeError(f"{where}: corrupt compressed element ({e})") from None
        elif mtype == _MI_MATRIX:
            named = _read_matrix(body, order)
            if named is not None:
                out[named[0]] = named[1]


def _read_matrix(body: bytes, order: str) -> tuple[str, np.ndarray] | None:
    parts: list[tuple[int, bytes]] = []
    pos = 0
    while pos + 8 <= len(body):
        mtype, nbytes, start, pos = _tag(body, pos, order)
        parts.append((mtype, body[start : start + nbytes]))
    if len(parts) < 4:
        return None
    flags = struct.unpack_from(f"{order}I", parts[0][1])[0]
    mx_class, is_complex = flags & 0xFF, bool(flags & 0x800)
    if mx_class not in _MX_CLASSES or is_complex or parts[3][0] not in _MI_TYPES:
        return None  # cells, structs, chars, sparse or complex: not read
    dims = np.frombuffer(parts[1][1], dtype=f"{order}i4").tolist()
    name = parts[2][1].decode("ascii")
    data = np.frombuffer(parts[3][1], dtype=f"{order}{_MI_TYPES[parts[3][0]]}")
    values = data.astype(np.dtype(_MX_CLASSES[mx_class]).newbyteorder("="))
    return name, values.reshape(dims, order="F")
