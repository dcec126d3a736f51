"""lucid.save / lucid.load: nested state, every dtype, atomic writes, corrupt-file errors."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import serialization
from lucid.serialization import SerializationError

CPU_DTYPES = [
    lucid.bool, lucid.uint8, lucid.int8, lucid.int16, lucid.int32, lucid.int64, lucid.float16,
    lucid.float32, lucid.float64, lucid.complex64, lucid.complex128,
]  # fmt: skip


def _sample(dt: Any) -> Any:
    arr = np.array([[0, 1, 2], [3, -4, 5]])
    if dt is lucid.bool:
        arr = arr > 1
    elif dt.is_complex:
        arr = arr + 1j * arr[::-1]
    elif dt.is_floating_point:
        arr = arr * 0.5
    elif dt is lucid.uint8:
        arr = np.abs(arr)
    return lucid.tensor(arr, dtype=dt)


@pytest.mark.parametrize("dt", CPU_DTYPES, ids=lambda d: d.name)
def test_every_dtype_round_trips(tmp_path: Path, dt: Any) -> None:
    t = _sample(dt)
    lucid.save({"t": t, "empty": lucid.zeros(0, 3, dtype=dt), "scalar": t[0, 1]}, tmp_path / "f")
    back = lucid.load(tmp_path / "f")
    for key, ref in [("t", t), ("empty", lucid.zeros(0, 3, dtype=dt)), ("scalar", t[0, 1])]:
        assert back[key].dtype is dt
        assert back[key].shape == ref.shape
        np.testing.assert_array_equal(back[key].numpy(), ref.numpy())


def test_optimizer_like_nested_state_round_trips(tmp_path: Path) -> None:
    w = lucid.randn(2, 3)
    state = {
        "state": {0: {"step": 7, "exp_avg": w, "exp_avg_sq": w * w}, 1: {"momentum_buffer": None}},
        "param_groups": [
            {"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999), "eps": float("inf"),
             "amsgrad": False, "name": "encoder", "nested": [[1, 2], {"a": 3}]},
        ],
        (1, "k"): -0.0,
        None: True,
    }  # fmt: skip
    lucid.save(state, tmp_path / "opt.safetensors")
    back = lucid.load(tmp_path / "opt.safetensors")
    assert set(back) == set(state)
    assert back["state"][0]["step"] == 7 and isinstance(back["state"][0]["step"], int)
    np.testing.assert_array_equal(back["state"][0]["exp_avg"].numpy(), w.numpy())
    assert back["state"][1] == {"momentum_buffer": None}
    group = back["param_groups"][0]
    assert group["betas"] == (0.9, 0.999) and isinstance(group["betas"], tuple)
    assert group["eps"] == float("inf") and group["lr"] == 1e-3
    assert group["params"] == [0, 1] and group["name"] == "encoder"
    assert group["nested"] == [[1, 2], {"a": 3}] and group["amsgrad"] is False
    assert back[(1, "k")] == 0.0 and back[None] is True


def test_single_tensor_shared_tensors_and_requires_grad(tmp_path: Path) -> None:
    p = lucid.randn(3, requires_grad=True)
    lucid.save([p, p, (p,)], tmp_path / "f")
    a, b, (c,) = lucid.load(tmp_path / "f")
    assert a is b and a is c
    assert a.requires_grad and a.is_leaf
    lucid.save(lucid.arange(4), tmp_path / "g")
    np.testing.assert_array_equal(lucid.load(tmp_path / "g").numpy(), [0, 1, 2, 3])


def test_file_objects_and_loaded_tensors_are_writable() -> None:
    buf = io.BytesIO()
    lucid.save({"x": lucid.ones(3)}, buf)
    buf.seek(0)
    x = lucid.load(buf)["x"]
    x.add_(1)  # the loaded data must be an ordinary writable array
    np.testing.assert_array_equal(x.numpy(), [2.0, 2.0, 2.0])


def test_unsupported_objects_are_rejected_with_their_path(tmp_path: Path) -> None:
    with pytest.raises(SerializationError, match=r"object at 'a\.b'"):
        lucid.save({"a": {"b": object()}}, tmp_path / "f", format="safetensors")
    with pytest.raises(SerializationError, match="dict key of type"):
        lucid.save({frozenset(): 1}, tmp_path / "f", format="safetensors")
    with pytest.raises(SerializationError, match="pickling it failed"):
        lucid.save({"a": lambda: 1}, tmp_path / "f")  # pickled in torch's format: not picklable
    assert not (tmp_path / "f").exists()
    assert os.listdir(tmp_path) == []


def test_interrupted_save_keeps_the_old_file(tmp_path: Path, monkeypatch: Any) -> None:
    target = tmp_path / "ckpt.safetensors"
    lucid.save({"w": lucid.zeros(4)}, target)
    before = target.read_bytes()
    calls = []

    def failing_write(f: Any, arr: Any) -> None:
        calls.append(1)
        f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write_array", failing_write)
    with pytest.raises(OSError, match="disk full"):
        lucid.save({"w": lucid.ones(4), "v": lucid.ones(2)}, target)
    assert calls
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]  # no temporary file left behind
    np.testing.assert_array_equal(lucid.load(target)["w"].numpy(), np.zeros(4))


def _raw_file(header: dict[str, Any], data: bytes) -> bytes:
    h = json.dumps(header).encode()
    return len(h).to_bytes(8, "little") + h + data


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"abc", "truncated"),
        ((10**6).to_bytes(8, "little") + b"{}", "header claims"),
        ((5).to_bytes(8, "little") + b"not j", "not valid JSON"),
        (_raw_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"1234"),
         "truncated file"),
        (_raw_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"12345678"),
         r"shape \[3\]"),
        (_raw_file({"a": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 8]}}, b"12345678"),
         "dtype 'Q9'"),
        (_raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"12345678"),
         "header/offset mismatch"),
        (_raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"12345678"),
         "header/offset mismatch"),
        (_raw_file({"a": {"dtype": "F32", "shape": "x"}}, b""), "corrupt header entry"),
        (_raw_file({"__metadata__": {"lucid.structure": "{bad"}}, b""), "structure metadata"),
        (_raw_file({"__metadata__": {"lucid.structure": '{"tensor": "zz"}'}}, b""),
         "missing tensor 'zz'"),
    ],
)  # fmt: skip
def test_corrupt_files_give_clear_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(SerializationError, match=message):
        lucid.load(path)


def test_truncating_a_real_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "f"
    lucid.save({"a": lucid.ones(10), "b": lucid.ones(3)}, path)
    raw = path.read_bytes()
    path.write_bytes(raw[:-5])
    with pytest.raises(SerializationError, match="truncated|mismatch"):
        lucid.load(path)


def test_map_location_forms(tmp_path: Path) -> None:
    lucid.save({"a": lucid.ones(2)}, tmp_path / "f")
    assert lucid.load(tmp_path / "f", map_location="cpu")["a"].device == "cpu"
    assert lucid.load(tmp_path / "f", map_location={"cpu": "cpu"})["a"].device == "cpu"
    seen = []
    out = lucid.load(tmp_path / "f", map_location=lambda t, dev: seen.append(dev) or t * 2)
    assert seen == ["cpu"]
    np.testing.assert_array_equal(out["a"].numpy(), [2.0, 2.0])
    with pytest.raises(lucid.backends.DeviceError, match="unknown device"):
        lucid.load(tmp_path / "f", map_location="nosuchdevice")


def test_safetensors_numpy_interop(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    arrays = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([1, 2], np.int64),
              "h": np.ones(3, np.float16), "m": np.array([True, False])}  # fmt: skip
    st.save_file(arrays, str(tmp_path / "np.safetensors"))
    back = lucid.load(tmp_path / "np.safetensors")
    assert set(back) == set(arrays)
    for k, v in arrays.items():
        assert back[k].numpy().dtype == v.dtype
        np.testing.assert_array_equal(back[k].numpy(), v)
    ours = {"w": lucid.randn(3, 2), "n": lucid.arange(5), "c": lucid.ones(2, dtype=lucid.complex64)}
    lucid.save(ours, tmp_path / "lucid.safetensors")
    loaded = st.load_file(str(tmp_path / "lucid.safetensors"))
    for k, v in ours.items():
        np.testing.assert_array_equal(loaded[k], v.numpy())


def test_bfloat16_bits_load_as_bfloat16_on_cpu(tmp_path: Path) -> None:
    values = np.array([1.0, -2.5, 3.140625, 0.0], dtype=np.float32)
    bits = (values.view(np.uint32) >> 16).astype("<u2")
    header = {"b": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}
    (tmp_path / "bf").write_bytes(_raw_file(header, bits.tobytes()))
    out = lucid.load(tmp_path / "bf")["b"]
    assert out.dtype is lucid.bfloat16
    np.testing.assert_array_equal(out.float().numpy(), values)
    lucid.save({"b": out}, tmp_path / "again")
    assert (tmp_path / "again").read_bytes()[-8:] == bits.tobytes()


def test_saved_file_gets_normal_permissions(tmp_path: Path) -> None:
    target = tmp_path / "perm.safetensors"
    lucid.save({"a": lucid.ones(1)}, target)
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
    target.chmod(0o640)
    lucid.save({"a": lucid.zeros(1)}, target)  # overwriting keeps the file's mode
    assert target.stat().st_mode & 0o777 == 0o640
