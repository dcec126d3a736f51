"""Legacy constructors/types and the device-agnostic answers, compared with PyTorch's CPU build."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _name(dtype: object) -> str:
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("args", [(2, 3), (5,), (), (1, 0, 4)])
def test_tensor_of_sizes_matches(args: tuple[int, ...]) -> None:
    ours, theirs = lucid.Tensor(*args), torch.Tensor(*args)
    assert ours.shape == tuple(theirs.shape) and _name(ours.dtype) == _name(theirs.dtype)


@pytest.mark.parametrize(
    "data",
    [[1, 2], [1.5], [True, False], np.arange(3, dtype=np.int64), np.ones(2, np.float64)],
    ids=["ints", "floats", "bools", "int64-array", "float64-array"],
)
def test_tensor_of_data_matches_dtype_and_values(data: object) -> None:
    ours, theirs = lucid.Tensor(data), torch.Tensor(data)
    assert _name(ours.dtype) == _name(theirs.dtype)
    assert ours.tolist() == pytest.approx(theirs.tolist(), rel=1e-6, abs=1e-6)


def test_tensor_of_a_tensor_keeps_its_dtype() -> None:
    ours, theirs = lucid.Tensor(lucid.arange(3)), torch.Tensor(torch.arange(3))
    assert _name(ours.dtype) == _name(theirs.dtype)


@pytest.mark.parametrize(
    "name",
    ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
     "CharTensor", "ByteTensor", "BoolTensor"],
)  # fmt: skip
def test_legacy_types_match(name: str) -> None:
    ours, theirs = getattr(lucid, name), getattr(torch, name)
    assert _name(ours([1, 0]).dtype) == _name(theirs([1, 0]).dtype)
    assert ours(2, 3).shape == tuple(theirs(2, 3).shape)
    assert isinstance(ours([1, 0]), ours) and isinstance(theirs([1, 0]), theirs)
    assert isinstance(lucid.zeros(1), ours) == isinstance(torch.zeros(1), theirs)
    assert issubclass(ours, lucid.Tensor) == issubclass(theirs, torch.Tensor)


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
              "uint8", "bool", "complex64", "complex128"],
)  # fmt: skip
def test_type_strings_match(dtype: str) -> None:
    ours = lucid.zeros(2, dtype=getattr(lucid, dtype)).type()
    theirs = torch.zeros(2, dtype=getattr(torch, dtype)).type()
    assert ours.removeprefix("lucid.") == theirs.removeprefix("torch.")


@pytest.mark.parametrize("target", ["LongTensor", "IntTensor", "DoubleTensor", "HalfTensor"])
def test_type_conversions_match(target: str) -> None:
    ours = lucid.tensor([1.5, -2.5])
    theirs = torch.tensor([1.5, -2.5])
    by_type = ours.type(getattr(lucid, target)), theirs.type(getattr(torch, target))
    by_name = ours.type(f"torch.{target}"), theirs.type(f"torch.{target}")
    for a, b in (by_type, by_name):
        assert _name(a.dtype) == _name(b.dtype)
        assert a.tolist() == pytest.approx(b.tolist(), rel=1e-6, abs=1e-6)


def test_cuda_answers_match_the_cpu_build() -> None:
    assert lucid.cuda.is_available() == torch.cuda.is_available() is False
    assert lucid.cuda.device_count() == torch.cuda.device_count()
    assert lucid.cuda.is_bf16_supported() == torch.cuda.is_bf16_supported()
    assert lucid.cuda.is_initialized() == torch.cuda.is_initialized()
    with pytest.raises(AssertionError):
        torch.zeros(1).cuda()
    with pytest.raises(AssertionError):
        lucid.zeros(1).cuda()
    assert lucid.zeros(1).is_cuda == torch.zeros(1).is_cuda
    assert lucid.zeros(1).is_pinned() == torch.zeros(1).is_pinned()


def test_xpu_answers_match_the_cpu_build() -> None:
    # the profiler recipe asks torch.cuda.is_available(), then torch.xpu.is_available()
    for name in ("is_available", "device_count", "is_bf16_supported", "is_initialized"):
        assert getattr(lucid.xpu, name)() == getattr(torch.xpu, name)(), name
    for name in ("synchronize", "current_device", "get_device_name"):
        with pytest.raises(AssertionError) as theirs:
            getattr(torch.xpu, name)()
        with pytest.raises(AssertionError, match=str(theirs.value)):
            getattr(lucid.xpu, name)()
    lucid.xpu.manual_seed_all(0)
    lucid.xpu.empty_cache()


def test_accelerator_answers_match_where_neither_has_one() -> None:
    if lucid.accelerator.is_available():
        pytest.skip("MLX reports a GPU here; torch's CPU build has no accelerator")
    assert lucid.accelerator.is_available() == torch.accelerator.is_available()
    assert lucid.accelerator.device_count() == torch.accelerator.device_count()
    assert lucid.accelerator.current_accelerator() is torch.accelerator.current_accelerator()


def test_backend_switch_defaults_match() -> None:
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(lucid.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert lucid.backends.cudnn.is_available() == torch.backends.cudnn.is_available()
    assert lucid.backends.mps.is_available() == torch.backends.mps.is_available()
    assert lucid.backends.mps.is_built() == torch.backends.mps.is_built()
    assert lucid.backends.cuda.is_built() == torch.backends.cuda.is_built()
    assert lucid.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert lucid.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32


@pytest.mark.parametrize("n", [0, -1])
def test_set_num_threads_errors_match(n: int) -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.set_num_threads(n)
    with pytest.raises(RuntimeError) as ours:
        lucid.set_num_threads(n)
    assert str(theirs.value) in str(ours.value)


def test_log_of_zero_matches_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = lucid.log(lucid.tensor([0.0, -1.0])).tolist()
        theirs = torch.log(torch.tensor([0.0, -1.0])).tolist()
    assert ours[0] == theirs[0] == -math.inf and math.isnan(ours[1]) and math.isnan(theirs[1])
