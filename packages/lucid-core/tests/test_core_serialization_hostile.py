"""Hostile torch.save files: lucid.load (weights_only=True, the default) refuses each one with
SerializationError, before anything in it runs and without writing a file.

Every payload here would create ``pwned`` in the test's folder if it ran; one test loads a
payload with ``weights_only=False`` to show that the corpus is live."""

from __future__ import annotations

import builtins
import io
import os
import pickle
import struct
import subprocess
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.serialization import SerializationError, UnpicklingError

MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."


class _Reduce:
    """Pickles as ``func(*args)``: what a hostile checkpoint hides in data.pkl."""

    def __init__(self, func: Any, *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> Any:
        return (self.func, self.args)


def _zip(pkl: bytes, records: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        for name, data in (records or {}).items():
            z.writestr(f"archive/{name}", data)
    return out.getvalue()


def _payloads(marker: Path) -> dict[str, Any]:
    touch = f"touch {marker}"
    return {
        "os.system": _Reduce(os.system, touch),
        "eval": _Reduce(builtins.eval, f"open({str(marker)!r}, 'w').close()"),
        "exec": _Reduce(builtins.exec, f"open({str(marker)!r}, 'w').close()"),
        "subprocess": _Reduce(subprocess.check_call, ["touch", str(marker)]),
        "open": _Reduce(builtins.open, str(marker), "w"),
        "mkdir": _Reduce(os.mkdir, str(marker)),
        "nested in a state dict": OrderedDict(w=[1, {"x": _Reduce(os.system, touch)}]),
        "getattr": _Reduce(builtins.getattr, _Reduce(builtins.__import__, "os"), "system"),
        "numpy global": np.ones(2),  # numpy.core.multiarray._reconstruct: not allowlisted
        "lucid function": _Reduce(lucid.save, {}, str(marker)),
    }


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _storage_pid(key: bytes, numel: int, cls: str = "FloatStorage") -> bytes:
    """``("storage", torch.<cls>, key, "cpu", numel)`` then BINPERSID, as torch writes it."""
    return (b"(X\x07\x00\x00\x00storage" + _global("torch", cls) + b"X" +
            struct.pack("<I", len(key)) + key + b"X\x03\x00\x00\x00cpu" + b"\x8a\x08" +
            struct.pack("<q", numel) + b"tQ")  # fmt: skip


def _tensor(pid: bytes, offset: int, size: tuple[int, ...], stride: tuple[int, ...]) -> bytes:
    def tup(values: tuple[int, ...]) -> bytes:
        return b"(" + b"".join(b"\x8a\x08" + struct.pack("<q", v) for v in values) + b"t"

    return (_global("torch._utils", "_rebuild_tensor_v2") + b"(" + pid + b"\x8a\x08" +
            struct.pack("<q", offset) + tup(size) + tup(stride) + b"\x89" +
            _global("collections", "OrderedDict") + b")RtR")  # fmt: skip


P = b"\x80\x02"
FOUR_FLOATS = {"data/0": np.arange(4, dtype="<f4").tobytes()}

# (data.pkl, extra records, what the error says)
CRAFTED: dict[str, tuple[bytes, dict[str, bytes], str]] = {
    "BUILD on a set": (P + b"\x8f(K\x01\x90}X\x01\x00\x00\x00aK\x01sb.", {}, "Can only build"),
    "BUILD on an OrderedDict, non-str keys": (
        P + _global("collections", "OrderedDict") + b")R}K\x01K\x02sb.",
        {},
        "attribute names",
    ),
    "BUILD on a tensor": (
        P + _tensor(_storage_pid(b"0", 4), 0, (4,), (1,)) + b"}X\x01\x00\x00\x00aK\x01sb.",
        FOUR_FLOATS,
        "Can only build",
    ),
    "NEWOBJ of a function": (P + _global("torch", "Size") + b")\x81.", {}, "new object"),
    "APPEND to a dict": (P + b"}K\x01a.", {}, "Can only append to lists"),
    "SETITEM on a list": (P + b"]K\x01K\x02s.", {}, "Can only SETITEM for dict"),
    "REDUCE of a string": (P + b"X\x01\x00\x00\x00a)R.", {}, "unrecognized function"),
    "STACK_GLOBAL os.system": (
        P + b"X\x02\x00\x00\x00osX\x06\x00\x00\x00system\x93.",
        {},
        "GLOBAL os.system was not an allowed global",
    ),  # fmt: skip
    "unknown opcode (INST)": (P + b"ios\nsystem\n(X\x01\x00\x00\x00xt.", {}, "Unsupported"),
    "memo miss": (P + b"h\x05.", {}, "Memo value not found"),
    "stack underflow": (P + b"t.", {}, "could not find MARK"),
    "truncated pickle": (P + b"X\xff\x00\x00\x00abc", {}, "truncated"),
    "non-storage persistent id": (P + b"(X\x06\x00\x00\x00moduletQ.", {}, "persistent_load"),
    "storage key outside the archive": (
        P + _tensor(_storage_pid(b"../../etc/passwd", 4), 0, (4,), (1,)) + b".",
        FOUR_FLOATS,
        "storage key must be",
    ),
    "storage record missing": (
        P + _tensor(_storage_pid(b"7", 4), 0, (4,), (1,)) + b".",
        FOUR_FLOATS,
        "not in the archive",
    ),  # fmt: skip
    "huge declared numel": (
        P + _tensor(_storage_pid(b"0", 1 << 60), 0, (4,), (1,)) + b".",
        FOUR_FLOATS,
        "declares",
    ),  # fmt: skip
    "view past the storage": (
        P + _tensor(_storage_pid(b"0", 4), 2, (4,), (1,)) + b".",
        FOUR_FLOATS,
        "reaches element",
    ),  # fmt: skip
    "huge expanded view": (
        P + _tensor(_storage_pid(b"0", 4), 0, (1 << 40,), (0,)) + b".",
        FOUR_FLOATS,
        "refusing to expand",
    ),  # fmt: skip
    "storage class not a storage": (
        P + _tensor(_storage_pid(b"0", 4, "float32"), 0, (4,), (1,)) + b".",
        FOUR_FLOATS,
        "not a storage class",
    ),
}


def _assert_untouched(folder: Path, files: set[str]) -> None:
    assert {p.name for p in folder.iterdir()} == files, "loading wrote a file"


@pytest.mark.parametrize("name", list(_payloads(Path("x"))))
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_hostile_globals_are_refused_and_never_run(tmp_path: Path, name: str, legacy: bool
                                                   ) -> None:  # fmt: skip
    marker = tmp_path / "pwned"
    pkl = pickle.dumps(_payloads(marker)[name], protocol=2)
    path = tmp_path / "model.pt"
    path.write_bytes(MAGIC + pickle.dumps(1001, 2) + pickle.dumps({}, 2) + pkl if legacy
                     else _zip(pkl))  # fmt: skip
    with pytest.raises(UnpicklingError, match="was not an allowed global by default") as info:
        lucid.load(path)
    assert isinstance(info.value, pickle.UnpicklingError)
    assert isinstance(info.value, SerializationError)
    assert "weights_only` set to `False`" in str(info.value)
    _assert_untouched(tmp_path, {"model.pt"})


def test_the_refusal_names_the_global_as_torch_does(tmp_path: Path) -> None:
    (tmp_path / "m.pt").write_bytes(_zip(pickle.dumps(_Reduce(builtins.eval, "1"), 2)))
    with pytest.raises(UnpicklingError, match=r"GLOBAL eval was not an allowed global") as info:
        lucid.load(tmp_path / "m.pt")
    assert "lucid.serialization.add_safe_globals([eval])" in str(info.value)


def test_the_corpus_is_live_under_weights_only_false(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    (tmp_path / "m.pt").write_bytes(_zip(pickle.dumps(_payloads(marker)["open"], 2)))
    lucid.load(tmp_path / "m.pt", weights_only=False).close()
    assert marker.exists()


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_pickles_are_refused(tmp_path: Path, name: str) -> None:
    pkl, records, message = CRAFTED[name]
    (tmp_path / "m.pt").write_bytes(_zip(pkl, records))
    with pytest.raises(SerializationError, match=message):
        lucid.load(tmp_path / "m.pt")
    _assert_untouched(tmp_path, {"m.pt"})


def _good_file() -> bytes:
    out = io.BytesIO()
    lucid.save({"w": lucid.arange(64.0), "b": lucid.ones(3)}, out, format="torch")
    return out.getvalue()


@pytest.mark.parametrize("cut", [10, 100, 0.5, -30, -1])
def test_truncated_archives_are_refused(tmp_path: Path, cut: float) -> None:
    data = _good_file()
    end = int(len(data) * cut) if isinstance(cut, float) else cut
    (tmp_path / "m.pt").write_bytes(data[:end])
    with pytest.raises(SerializationError):
        lucid.load(tmp_path / "m.pt")


def test_an_oversized_declared_pickle_is_refused_before_reading(tmp_path: Path) -> None:
    data = bytearray(_good_file())
    first = data.index(b"PK\x01\x02")  # the central directory entry of data.pkl (written first)
    struct.pack_into("<I", data, first + 24, 0xFFFFFFF0)  # its uncompressed size
    (tmp_path / "m.pt").write_bytes(bytes(data))
    with pytest.raises(SerializationError, match="limit|declares|size"):
        lucid.load(tmp_path / "m.pt")


def test_a_storage_record_shorter_than_declared_is_refused(tmp_path: Path) -> None:
    pkl = P + _tensor(_storage_pid(b"0", 8), 0, (8,), (1,)) + b"."
    (tmp_path / "m.pt").write_bytes(_zip(pkl, FOUR_FLOATS))
    with pytest.raises(SerializationError, match="record holds 16 bytes"):
        lucid.load(tmp_path / "m.pt")


def test_a_crafted_tensor_loads_when_it_is_well_formed(tmp_path: Path) -> None:
    pkl = P + _tensor(_storage_pid(b"0", 4), 1, (2,), (2,)) + b"."
    (tmp_path / "m.pt").write_bytes(_zip(pkl, FOUR_FLOATS))
    assert lucid.load(tmp_path / "m.pt").tolist() == [1.0, 3.0]


def test_safe_globals_let_a_registered_class_through(tmp_path: Path) -> None:
    (tmp_path / "m.pt").write_bytes(_zip(pickle.dumps(_Point(1, 2), 2)))
    with pytest.raises(UnpicklingError, match="_Point was not an allowed global"):
        lucid.load(tmp_path / "m.pt")
    with lucid.serialization.safe_globals([_Point]):
        p = lucid.load(tmp_path / "m.pt")
    assert isinstance(p, _Point) and (p.x, p.y) == (1, 2)


class _Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y
