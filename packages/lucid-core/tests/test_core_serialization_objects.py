"""lucid.save/lucid.load beyond tensors: numpy arrays, plain values and argparse.Namespace keep
their types; class instances are pickled in torch's format and load only with
weights_only=False (or when registered with add_safe_globals); torch's keywords."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid import serialization
from lucid.serialization import SerializationError


def _round_trip(obj: object, tmp_path: Path) -> object:
    lucid.save(obj, tmp_path / "ckpt")
    return lucid.load(tmp_path / "ckpt")


def test_plain_values_keep_their_types(tmp_path: Path) -> None:
    obj = {"n": 3, "x": 2.5, "inf": float("-inf"), "s": "gpt", "b": False, "none": None,
           "nested": [(1, (2.0, "a")), {"k": [None, True]}], 7: "int key"}  # fmt: skip
    back = _round_trip(obj, tmp_path)
    assert back == obj
    assert isinstance(back["nested"][0], tuple) and isinstance(back["nested"][0][1], tuple)  # type: ignore[index]


def test_numpy_arrays_load_as_numpy_arrays(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {"f64": rng.standard_normal((2, 3)), "i32": np.arange(4, dtype=np.int32),
              "mask": np.array([True, False]), "scalar": np.array(1.5, dtype=np.float32),
              "strided": np.arange(12.0).reshape(3, 4)[:, ::2]}  # fmt: skip
    back = _round_trip({"arrays": arrays, "t": lucid.ones(2)}, tmp_path)
    for k, v in arrays.items():
        got = back["arrays"][k]  # type: ignore[index]
        assert type(got) is np.ndarray and got.dtype == v.dtype and got.shape == v.shape
        np.testing.assert_array_equal(got, v)
    assert isinstance(back["t"], lucid.Tensor)  # type: ignore[index]


def test_bfloat16_arrays_and_tensors_keep_their_dtype(tmp_path: Path) -> None:
    t = lucid.tensor([1.0, -2.5, 3.140625]).bfloat16()
    back = _round_trip({"t": t, "a": t.numpy()}, tmp_path)
    assert back["t"].dtype is lucid.bfloat16  # type: ignore[index]
    assert back["a"].dtype == t.numpy().dtype  # type: ignore[index]
    np.testing.assert_array_equal(back["t"].float().numpy(), t.float().numpy())  # type: ignore[index]


def test_namespace_round_trips(tmp_path: Path) -> None:
    args = argparse.Namespace(lr=3e-4, batch_size=12, dataset="shakespeare_char",
                              betas=(0.9, 0.95), compile=False, init=None)  # fmt: skip
    back = _round_trip({"config": args, "model_args": {"n_layer": 2}}, tmp_path)
    assert isinstance(back["config"], argparse.Namespace) and back["config"] == args  # type: ignore[index]
    assert isinstance(back["config"].betas, tuple)  # type: ignore[index]


class Net:
    """A whole object holding tensors (as an nn.Module does), at module level: picklable."""

    def __init__(self) -> None:
        self.w = lucid.arange(6.0).reshape(2, 3).requires_grad_()
        self.config = {"layers": (1, 2)}

    def state_dict(self) -> dict[str, lucid.Tensor]:
        return {"w": self.w}


def test_a_whole_object_is_pickled_and_loads_only_when_asked(tmp_path: Path) -> None:
    lucid.save({"model": Net(), "epoch": 3}, tmp_path / "m.pt")
    with pytest.raises(serialization.UnpicklingError, match=r"GLOBAL .*Net was not an allowed"):
        lucid.load(tmp_path / "m.pt")
    back = lucid.load(tmp_path / "m.pt", weights_only=False)
    assert back["epoch"] == 3 and isinstance(back["model"], Net)
    assert back["model"].w.requires_grad and back["model"].config == {"layers": (1, 2)}
    np.testing.assert_array_equal(back["model"].w.detach().numpy(), np.arange(6.0).reshape(2, 3))
    with serialization.safe_globals([Net]):
        assert isinstance(lucid.load(tmp_path / "m.pt")["model"], Net)


def test_format_safetensors_refuses_objects_with_the_state_dict_advice(tmp_path: Path) -> None:
    advice = r"Net at 'model'.*weights_only=False.*state_dict\(\)"
    with pytest.raises(SerializationError, match=advice):
        lucid.save({"model": Net()}, tmp_path / "m", format="safetensors")
    with pytest.raises(SerializationError, match="type object at 'o'"):
        lucid.save({"o": object()}, tmp_path / "o", format="safetensors")
    with pytest.raises(SerializationError, match="numpy array of dtype <U2 at 'names'"):
        lucid.save({"names": np.array(["ab"])}, tmp_path / "o", format="safetensors")
    with pytest.raises(ValueError, match="format must be"):
        lucid.save({}, tmp_path / "o", format="pickle")
    assert list(tmp_path.iterdir()) == []


def test_load_and_save_accept_torchs_keywords(tmp_path: Path) -> None:
    buf = io.BytesIO()
    lucid.save({"w": lucid.ones(2)}, buf, pickle_protocol=4)
    buf.seek(0)
    back = lucid.load(buf, map_location="cpu", weights_only=True, mmap=False)
    assert back["w"].tolist() == [1.0, 1.0]
    buf.seek(0)
    assert lucid.load(buf, None, None, weights_only=False)["w"].shape == (2,)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        lucid.load(buf, pickle_module=__import__("pickle"), weights_only=True)
    with pytest.raises(ValueError, match="must be a file path .* mmap"):
        lucid.load(buf, mmap=True)


def test_safe_globals_record_and_restore() -> None:
    serialization.clear_safe_globals()
    with serialization.safe_globals([argparse.Namespace, (np.dtype, "numpy.dtype")]):
        assert serialization.get_safe_globals() == [argparse.Namespace, (np.dtype, "numpy.dtype")]
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([argparse.Namespace])
    assert serialization.get_safe_globals() == [argparse.Namespace]
    serialization.clear_safe_globals()
    with pytest.raises(TypeError, match="expected a list"):
        serialization.add_safe_globals(argparse.Namespace)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got 3"):
        serialization.add_safe_globals([3])  # type: ignore[list-item]


def test_a_structure_naming_a_missing_array_is_a_serialization_error(tmp_path: Path) -> None:
    lucid.save({"a": np.ones(2)}, tmp_path / "f")
    raw = (tmp_path / "f").read_bytes().replace(b'ndarray\\":\\"a', b'ndarray\\":\\"z')
    (tmp_path / "f").write_bytes(raw)
    with pytest.raises(SerializationError, match="missing tensor 'z'"):
        lucid.load(tmp_path / "f")
