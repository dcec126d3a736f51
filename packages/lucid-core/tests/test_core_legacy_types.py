"""PyTorch's legacy constructors and types: Tensor(2, 3), FloatTensor & co, Tensor.type()."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid._legacy import LEGACY_TYPES


def test_tensor_of_sizes_is_zero_filled_default_float() -> None:
    x = lucid.Tensor(2, 3)
    assert x.shape == (2, 3) and x.dtype is lucid.float32 and not x.requires_grad
    assert x.tolist() == [[0.0] * 3] * 2
    assert lucid.Tensor(5).shape == (5,) and lucid.Tensor().shape == (0,)
    assert lucid.Tensor(2, 3, dtype=lucid.float64).dtype is lucid.float64


def test_tensor_sizes_follow_the_default_dtype() -> None:
    lucid.set_default_dtype(lucid.float64)
    try:
        assert lucid.Tensor(2).dtype is lucid.float64
    finally:
        lucid.set_default_dtype(lucid.float32)


def test_tensor_of_data_is_default_float_as_torchs_legacy_constructor() -> None:
    x = lucid.Tensor(np.arange(3, dtype=np.int64))
    assert x.tolist() == [0.0, 1.0, 2.0] and x.dtype is lucid.float32
    assert lucid.Tensor([1, 2]).dtype is lucid.float32
    assert lucid.Tensor(np.zeros(2, np.float64)).dtype is lucid.float32
    assert lucid.Tensor([True]).tolist() == [1.0]
    assert lucid.Tensor(lucid.arange(3)).dtype is lucid.int64  # a Tensor keeps its dtype
    assert lucid.Tensor([1, 2], dtype=lucid.float32).dtype is lucid.float32


def test_sizes_must_be_ints() -> None:
    with pytest.raises(TypeError, match=r"expected sizes as ints, got \(2, 3.0\)"):
        lucid.Tensor(2, 3.0)
    with pytest.raises(TypeError, match="expected data or sizes"):
        lucid.Tensor([1, 2], 3)


def test_lucid_builds_scalars_from_data_not_sizes() -> None:
    assert lucid.tensor(5).shape == () and lucid.tensor(5).item() == 5
    assert lucid.as_tensor(3).shape == () and lucid.tensor([1, 2]).dtype is lucid.int64
    assert (lucid.ones(2) + 3).tolist() == [4.0, 4.0]
    assert lucid.arange(3).index_select(0, lucid.tensor([2])).tolist() == [2]


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("FloatTensor", lucid.float32),
        ("DoubleTensor", lucid.float64),
        ("HalfTensor", lucid.float16),
        ("LongTensor", lucid.int64),
        ("IntTensor", lucid.int32),
        ("ShortTensor", lucid.int16),
        ("CharTensor", lucid.int8),
        ("ByteTensor", lucid.uint8),
        ("BoolTensor", lucid.bool),
    ],
)
def test_legacy_type_constructs_and_checks_its_dtype(name: str, dtype: lucid.dtype) -> None:
    kind = getattr(lucid, name)
    assert kind is LEGACY_TYPES[name] and repr(kind) == f"<class 'lucid.{name}'>"
    made = kind([1, 0])
    assert made.dtype is dtype and made.tolist() == [1, 0]
    assert kind(2, 3).shape == (2, 3) and kind(2, 3).dtype is dtype
    assert isinstance(made, kind) and isinstance(made, lucid.Tensor)
    other = lucid.zeros(2, dtype=lucid.float64 if dtype is not lucid.float64 else lucid.float32)
    assert not isinstance(other, kind)
    assert not isinstance(np.zeros(2), kind)
    assert made.type() == f"lucid.{name}"


def test_type_converts_to_a_legacy_type_a_name_or_a_dtype() -> None:
    x = lucid.tensor([1.5, 2.5])
    assert x.type(lucid.LongTensor).dtype is lucid.int64
    assert x.type("torch.IntTensor").dtype is lucid.int32
    assert x.type("lucid.DoubleTensor").dtype is lucid.float64
    assert x.type(lucid.float64).dtype is lucid.float64
    assert x.type(lucid.FloatTensor) is x  # already that type: no copy, as torch
    with pytest.raises(TypeError, match="unknown dtype"):
        x.type("torch.NoSuchTensor")


def test_type_names_of_every_dtype() -> None:
    names = {d: lucid.zeros(1, dtype=d).type() for d in (lucid.complex64, lucid.complex128)}
    assert names == {
        lucid.complex64: "lucid.ComplexFloatTensor",
        lucid.complex128: "lucid.ComplexDoubleTensor",
    }


def test_legacy_types_are_not_tensor_subclasses() -> None:
    assert not issubclass(lucid.FloatTensor, lucid.Tensor)
    assert type(lucid.FloatTensor([1.0])) is lucid.Tensor


def test_type_names_the_device_as_torch_names_cuda() -> None:
    if "mlx" not in lucid.backends.available_backends():
        pytest.skip("needs the MLX backend plugin")
    x = lucid.zeros(2, device="mlx")
    assert x.type() == "lucid.mlx.FloatTensor"
    assert not isinstance(x, lucid.FloatTensor)  # as a CUDA tensor is no torch.FloatTensor
    assert x.type(lucid.LongTensor).device == x.device
