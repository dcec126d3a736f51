"""The arrays of a MATLAB level-5 ``.mat`` file as ``scipy.io.loadmat`` gives them (its
defaults), read with the standard library and NumPy when SciPy is not installed.

Read: real numeric and logical matrices, char arrays (strings, the last axis joined), cell
arrays (object arrays), struct arrays (record arrays of object fields), compressed or not.
Sparse matrices are read dense (SciPy gives a ``csc_matrix``; both have ``toarray()`` in
lucid's datasets' use, see ``dense``). Complex arrays and function handles are skipped.
MATLAB 7.3 files (HDF5) are refused.
"""

from __future__ import annotations

import importlib
import os
import struct
import zlib
from typing import Any

import numpy as np

__all__ = ["dense", "load_mat"]

_MI_TYPES: dict[int, str] = {
    1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8", 12: "i8", 13: "u8"
}  # fmt: skip
_MX_CLASSES: dict[int, str] = {
    6: "f8", 7: "f4", 8: "i1", 9: "u1", 10: "i2", 11: "u2", 12: "i4", 13: "u4", 14: "i8", 15: "u8"
}  # fmt: skip
_MI_MATRIX, _MI_COMPRESSED = 14, 15
_MX_CELL, _MX_STRUCT, _MX_CHAR, _MX_SPARSE = 1, 2, 4, 5
_MI_UTF8, _MI_UTF16 = 16, 17


def dense(value: Any) -> np.ndarray:
    """A sparse matrix from ``load_mat`` as a dense array (SciPy's ``csc_matrix`` or lucid's
    reader's array, which is dense already)."""
    return np.asarray(value.toarray() if hasattr(value, "toarray") else value)


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


def _read_matrix(body: bytes, order: str) -> tuple[str, Any] | None:
    """(name, value) of one miMATRIX element's body; None for what is not read."""
    parts: list[tuple[int, bytes]] = []
    pos = 0
    while pos + 8 <= len(body):
        mtype, nbytes, start, pos = _tag(body, pos, order)
        parts.append((mtype, body[start : start + nbytes]))
    if len(parts) < 3:
        return None
    flags = struct.unpack_from(f"{order}I", parts[0][1])[0]
    mx_class, is_complex = flags & 0xFF, bool(flags & 0x800)
    dims = [int(d) for d in np.frombuffer(parts[1][1], dtype=f"{order}i4")]
    name = parts[2][1].decode("ascii")
    rest = parts[3:]
    value: Any
    if mx_class == _MX_CELL:
        value = _objects([_sub_matrix(data, order) for _, data in rest], dims)
    elif mx_class == _MX_STRUCT:
        length = int(np.frombuffer(rest[0][1], dtype=f"{order}i4")[0])
        raw_names = rest[1][1]
        fields = [
            raw_names[i : i + length].split(b"\0", 1)[0].decode("ascii")
            for i in range(0, len(raw_names), length)
        ]
        value = np.empty(dims, dtype=[(f, object) for f in fields])
        items = [_sub_matrix(data, order) for _, data in rest[2:]]
        for k, field in enumerate(fields):
            value[field] = _objects(items[k :: len(fields)], dims)
    elif mx_class == _MX_CHAR:
        value = _chars(rest[0] if rest else (_MI_UTF8, b""), dims, order)
    elif mx_class == _MX_SPARSE:
        if len(rest) < 3 or is_complex:
            return None
        rows = np.frombuffer(rest[0][1], dtype=f"{order}i4")
        cols = np.frombuffer(rest[1][1], dtype=f"{order}i4")
        data = np.frombuffer(rest[2][1], dtype=f"{order}{_MI_TYPES[rest[2][0]]}")
        value = np.zeros(dims, dtype=np.float64)
        for c in range(dims[1]):
            for k in range(int(cols[c]), int(cols[c + 1])):
                value[int(rows[k]), c] = data[k]
    elif mx_class in _MX_CLASSES and not is_complex and rest and rest[0][0] in _MI_TYPES:
        data = np.frombuffer(rest[0][1], dtype=f"{order}{_MI_TYPES[rest[0][0]]}")
        value = data.astype(np.dtype(_MX_CLASSES[mx_class]).newbyteorder("="))
        value = value.reshape(dims, order="F")
    else:
        return None  # complex, function handles, objects: not read
    return name, value


def _objects(items: list[Any], dims: list[int]) -> np.ndarray:
    """An object array of shape ``dims`` holding ``items`` in MATLAB's (column-major) order."""
    flat = np.empty(int(np.prod(dims)), dtype=object)
    for i, item in enumerate(items[: flat.size]):
        flat[i] = item  # one element at a time: an array item is stored, not broadcast
    return flat.reshape(dims, order="F")


def _sub_matrix(body: bytes, order: str) -> Any:
    """The value of a cell's or struct field's miMATRIX element (an empty array if unread)."""
    named = _read_matrix(body, order)
    return np.empty((0, 0)) if named is None else named[1]


def _chars(part: tuple[int, bytes], dims: list[int], order: str) -> np.ndarray:
    """A char array as SciPy gives it: strings along the last axis."""
    mtype, data = part
    if mtype == _MI_UTF8 or mtype in (1, 2):
        codes = np.frombuffer(data, dtype=np.uint8) if mtype != _MI_UTF8 else None
        text = data.decode("utf-8") if codes is None else bytes(codes).decode("latin-1")
        chars = np.array(list(text), dtype="<U1")
    else:
        width = "u2" if mtype in (4, _MI_UTF16) else "u4"
        codes = np.frombuffer(data, dtype=f"{order}{width}")
        chars = np.array([chr(c) for c in codes], dtype="<U1")
    if chars.size == 0 or 0 in dims:
        return np.array([], dtype="<U1").reshape(dims[:-1] if dims and dims[-1] else [0])
    grid = chars.reshape(dims, order="F")
    strings = np.apply_along_axis(lambda row: "".join(row), -1, grid)
    return np.asarray(strings, dtype=f"<U{max(1, dims[-1])}")
