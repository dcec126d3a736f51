"""lucid.save / lucid.load under faults: killed saves, malformed files, torch.save files."""

from __future__ import annotations

import json
import pickle
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.serialization import SerializationError

# A child that starts lucid.save and stops before the rename (fsync never returns), as a
# process killed in the middle of a save does.
HANGING_SAVE = """
import os, sys, time
import lucid
def hang(fd):
    print("writing", flush=True)
    time.sleep(120)
os.fsync = hang
lucid.save({"w": lucid.ones(1000)}, sys.argv[1])
"""


def _start_hanging_save(target: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HANGING_SAVE, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "writing\n"
    return child


def _temps(folder: Path, target: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{target}."))


def test_a_killed_saves_temp_file_is_removed_by_the_next_save(tmp_path: Path) -> None:
    target = tmp_path / "ckpt.safetensors"
    foreign = tmp_path / ".ckpt.safetensors.abcd1234.tmp"  # not lucid's pattern: kept
    foreign.write_bytes(b"someone else's")
    child = _start_hanging_save(target)
    try:
        assert len(_temps(tmp_path, target.name)) == 2
        lucid.save({"w": lucid.zeros(3)}, target)  # the child is alive: its temp file stays
        assert len(_temps(tmp_path, target.name)) == 2
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    lucid.save({"w": lucid.full((3,), 2.0)}, target)
    assert _temps(tmp_path, target.name) == [foreign.name]
    np.testing.assert_array_equal(lucid.load(target)["w"].numpy(), np.full(3, 2.0))


def test_a_temp_file_of_another_target_is_kept(tmp_path: Path) -> None:
    child = _start_hanging_save(tmp_path / "a.safetensors")
    child.send_signal(signal.SIGKILL)
    child.wait()
    lucid.save({"w": lucid.zeros(1)}, tmp_path / "b.safetensors")
    assert len(_temps(tmp_path, "a.safetensors")) == 1


def test_saving_into_a_missing_folder_names_the_target(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "ckpt.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        lucid.save({"w": lucid.zeros(1)}, target)
    text = str(info.value)
    assert str(target) in text and "does not exist" in text and ".tmp" not in text


# -- malformed files -------------------------------------------------------------------------


def _file(header: dict[str, Any], data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + data


def _with_structure(structure: Any, **extra: Any) -> bytes:
    meta = {"lucid.format": "1", "lucid.structure": json.dumps(structure), **extra}
    return _file({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                  "__metadata__": meta}, b"\0\0\0\0")  # fmt: skip


def _deep_header(depth: int) -> bytes:
    raw = b'{"a":' + b"[" * depth + b"]" * depth + b"}"
    return len(raw).to_bytes(8, "little") + raw


MALFORMED = {
    "deep header": (_deep_header(100_000), "nested too deeply"),
    "deep structure": (_with_structure(json.loads("[" * 900 + "]" * 900)), "nested too deeply"),
    "metadata a list": (_file({"__metadata__": [1]}), "__metadata__ must be an object"),
    "structure not a string": (_file({"__metadata__": {"lucid.structure": 5}}), "JSON string"),
    "structure bad JSON": (_file({"__metadata__": {"lucid.structure": "{"}}), "not valid JSON"),
    "complex128 bad JSON": (_with_structure([], **{"lucid.complex128": "["}), "not valid JSON"),
    "complex128 not a list": (_with_structure([], **{"lucid.complex128": "3"}), "list of tensor"),
    "float not a number": (_with_structure({"float": "abc"}), "corrupt lucid structure"),
    "float of a list": (_with_structure({"float": [1]}), "corrupt lucid structure"),
    "unknown dtype": (_with_structure({"dtype": "q17"}), "corrupt lucid structure"),
    "dict entry not a pair": (_with_structure({"dict": [[1, 2, 3]]}), "corrupt lucid structure"),
    "dict items not a list": (_with_structure({"dict": 7}), "corrupt lucid structure"),
    "unhashable key": (_with_structure({"dict": [[{"dict": []}, 1]]}), "corrupt lucid structure"),
    "namespace int key": (_with_structure({"namespace": [[1, 2]]}), "corrupt lucid structure"),
    "tuple of an int": (_with_structure({"tuple": 3}), "corrupt lucid structure"),
    "tensor name a list": (_with_structure({"tensor": ["t"]}), "corrupt lucid structure"),
    "device not a string": (_with_structure({"tensor": "t", "device": 3}), "device of tensor"),
    "shape of booleans": (_file({"t": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}},
                                b"\0" * 4), "corrupt header entry"),
    "offsets of booleans": (_file({"t": {"dtype": "BOOL", "shape": [1],
                                         "data_offsets": [False, True]}}, b"\0"),
                            "corrupt header entry"),
    "shape a string": (_file({"t": {"dtype": "U8", "shape": "1", "data_offsets": [0, 1]}},
                             b"\0"), "corrupt header entry"),
    "offsets a dict": (_file({"t": {"dtype": "U8", "shape": [1], "data_offsets": {"0": 1}}},
                             b"\0"), "corrupt header entry"),
    "entry a list": (_file({"t": [1, 2]}, b"\0"), "corrupt header entry"),
    "shape of floats": (_file({"t": {"dtype": "U8", "shape": [1.0], "data_offsets": [0, 1]}},
                              b"\0"), "corrupt header entry"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(MALFORMED))
def test_every_malformed_file_raises_serialization_error(tmp_path: Path, case: str) -> None:
    content, message = MALFORMED[case]
    (tmp_path / "f").write_bytes(content)
    with pytest.raises(SerializationError, match=message):
        lucid.load(tmp_path / "f")


def test_errors_of_map_location_are_the_callers_own(tmp_path: Path) -> None:
    lucid.save({"w": lucid.zeros(1)}, tmp_path / "f")

    def refuse(t: Any, saved: str) -> Any:
        raise ValueError("no room on that device")

    with pytest.raises(ValueError, match="no room"):
        lucid.load(tmp_path / "f", map_location=refuse)


# -- torch.save files and other pickles -----------------------------------------------------


def _torch_like_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as z:  # the layout torch.save writes
        z.writestr("archive/data.pkl", pickle.dumps({"w": 1, "s": {2.5, "a"}}, protocol=2))
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


LEGACY = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02M\xe9\x03."


def test_torch_layouts_of_plain_values_load(tmp_path: Path) -> None:
    _torch_like_zip(tmp_path / "z.pt")
    assert lucid.load(tmp_path / "z.pt") == {"w": 1, "s": {2.5, "a"}}
    legacy = LEGACY + pickle.dumps({"little_endian": True}, 2) + pickle.dumps([1, "a"], 2)
    (tmp_path / "l.pt").write_bytes(legacy + pickle.dumps([], 2))
    assert lucid.load(tmp_path / "l.pt") == [1, "a"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (pickle.dumps({"w": list(range(9))}), "this is a pickle file"),
        (LEGACY + b"\0" * 64, "Unsupported operand 0"),
        (b"PK\x03\x04" + b"\0" * 64, "not a valid torch.save file"),
    ],
    ids=["pickle", "legacy", "zip"],
)
def test_plain_pickles_and_broken_torch_files_are_refused(tmp_path: Path, content: bytes,
                                                          message: str) -> None:  # fmt: skip
    path = tmp_path / "model.pt"
    path.write_bytes(content)
    with pytest.raises(SerializationError, match=message) as info:
        lucid.load(path)
    if "pickle file" in message:
        assert "does not unpickle plain pickle files" in str(info.value)
