"""torch.save's zip format written and read by lucid without torch: dtypes, shared storages,
views, map_location, mmap, file-like objects (the same files against torch: the parity tests)."""

from __future__ import annotations

import io
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.serialization import SerializationError


def _state() -> dict[str, Any]:
    g = lucid.Generator().manual_seed(0)
    return {
        "w": lucid.randn(3, 4, generator=g),
        "d": lucid.randn(2, dtype=lucid.float64, generator=g),
        "h": lucid.randn(5, generator=g).half(),
        "b": lucid.tensor([1.0, -2.5, 3.140625]).bfloat16(),
        "i": lucid.arange(6).reshape(2, 3),
        "i8": lucid.tensor([-3, 4], dtype=lucid.int8),
        "u8": lucid.tensor([200, 4], dtype=lucid.uint8),
        "mask": lucid.tensor([True, False]),
        "c": lucid.tensor([1 + 2j, -3j], dtype=lucid.complex64),
        "z": lucid.tensor([1 + 2j], dtype=lucid.complex128),
        "scalar": lucid.tensor(2.5),
        "empty": lucid.zeros(0, 3),
        "meta": {"step": 7, "betas": (0.9, 0.999), "names": ["a", "b"], "none": None},
    }


def _assert_same(got: Any, want: Any) -> None:
    if isinstance(want, lucid.Tensor):
        assert isinstance(got, lucid.Tensor) and got.dtype is want.dtype
        assert got.shape == want.shape and got.requires_grad == want.requires_grad
        np.testing.assert_array_equal(got.detach().float().numpy() if want.dtype is
                                      lucid.bfloat16 else got.detach().numpy(),
                                      want.detach().float().numpy() if want.dtype is
                                      lucid.bfloat16 else want.detach().numpy())  # fmt: skip
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _assert_same(got[k], want[k])
    else:
        assert got == want and type(got) is type(want)


def test_every_dtype_round_trips_through_torchs_format(tmp_path: Path) -> None:
    state = _state()
    lucid.save(state, tmp_path / "m.pt", format="torch")
    with zipfile.ZipFile(tmp_path / "m.pt") as z:
        names = z.namelist()
        assert names[0] == "m/data.pkl" and "m/byteorder" in names and "m/version" in names
        for info in z.infolist():
            if "/data/" in info.filename:  # storages 64-byte aligned, as torch writes them
                z.fp.seek(info.header_offset + 26)  # type: ignore[union-attr]
                n, m = np.frombuffer(z.fp.read(4), "<u2")  # type: ignore[union-attr]
                assert (info.header_offset + 30 + n + m) % 64 == 0
    _assert_same(lucid.load(tmp_path / "m.pt"), state)
    _assert_same(lucid.load(tmp_path / "m.pt", mmap=True), state)


def test_requires_grad_ordered_dicts_and_shared_tensors_survive(tmp_path: Path) -> None:
    w = lucid.ones(2).requires_grad_()
    sd = OrderedDict(a=w, b=w, c=lucid.zeros(1))
    buf = io.BytesIO()
    lucid.save(sd, buf, format="torch")
    buf.seek(0)
    back = lucid.load(buf)
    assert type(back) is OrderedDict and list(back) == ["a", "b", "c"]
    assert back["a"].requires_grad and back["a"] is back["b"]


def test_mmap_maps_the_storages_copy_on_write(tmp_path: Path) -> None:
    lucid.save({"w": lucid.arange(8.0)}, tmp_path / "m.pt", format="torch")
    before = (tmp_path / "m.pt").read_bytes()
    w = lucid.load(tmp_path / "m.pt", mmap=True)["w"]
    assert isinstance(w.array.base, np.memmap) or isinstance(w.array, np.memmap)
    w.add_(1.0)  # private: the file does not change
    assert w.tolist() == [float(i + 1) for i in range(8)]
    assert (tmp_path / "m.pt").read_bytes() == before
    lucid.save({"w": lucid.arange(3.0)}, tmp_path / "s.safetensors")
    assert lucid.load(tmp_path / "s.safetensors", mmap=True)["w"].tolist() == [0.0, 1.0, 2.0]


def test_map_location_forms(tmp_path: Path) -> None:
    lucid.save({"w": lucid.ones(2)}, tmp_path / "m.pt", format="torch")
    assert lucid.load(tmp_path / "m.pt", map_location="cpu")["w"].device.type == "cpu"
    assert lucid.load(tmp_path / "m.pt", map_location={"cpu": "cpu"})["w"].tolist() == [1, 1]
    seen = []

    def fn(t: lucid.Tensor, saved: str) -> lucid.Tensor:
        seen.append(saved)
        return t * 2

    assert lucid.load(tmp_path / "m.pt", map_location=fn)["w"].tolist() == [2.0, 2.0]
    assert seen == ["cpu"]


def test_a_whole_object_keeps_its_tensor_subclasses(tmp_path: Path) -> None:
    with_array = {"t": lucid.ones(1), "arr": np.arange(3)}  # a numpy array: pickled inline
    lucid.save(with_array, tmp_path / "m.pt", format="torch")
    with pytest.raises(SerializationError, match="numpy.*not an allowed global"):
        lucid.load(tmp_path / "m.pt")
    back = lucid.load(tmp_path / "m.pt", weights_only=False)
    np.testing.assert_array_equal(back["arr"], np.arange(3))


def test_a_device_lucid_lacks_needs_a_map_location(tmp_path: Path) -> None:
    buf = io.BytesIO()
    lucid.save({"w": lucid.ones(2)}, buf, format="torch")
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(tmp_path / "m.pt", "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):  # the storage's location tag
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x03\x00\x00\x00xpu")
            dst.writestr(name, data)
    with pytest.raises(RuntimeError, match="device 'xpu'.*map_location='cpu'"):
        lucid.load(tmp_path / "m.pt")
    assert lucid.load(tmp_path / "m.pt", map_location="cpu")["w"].tolist() == [1.0, 1.0]
