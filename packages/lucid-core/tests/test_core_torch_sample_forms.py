"""Call forms and edge inputs from torch's OpInfo samples that lucid refused or answered
differently (issue 29's gauge, "failing samples of present ops"), one test per class of fix."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

RNG = np.random.default_rng(29)
TOL = {"rtol": 1e-6, "atol": 1e-6}


# --- Tensor.to's positional non_blocking/copy, the conversions' memory_format -----------------


def test_to_reads_positional_non_blocking_and_copy() -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3)).astype(np.float32))
    y = x.to("cpu", lucid.float64, True, True)
    assert y.dtype is lucid.float64
    z = x.to(lucid.float32, False, True)  # copy=True gives a new tensor of the same dtype
    assert z is not x
    np.testing.assert_array_equal(z.numpy(), x.numpy())
    assert x.to(lucid.float32, False, False) is x
    assert x.to(x, False, True) is not x
    with pytest.raises(TypeError, match="at most 2 flags"):
        x.to(lucid.float32, True, True, True)
    with pytest.raises(TypeError, match="after a bool"):
        x.to(True, lucid.float32)


@pytest.mark.parametrize(
    "method, dtype",
    [("float", "float32"), ("double", "float64"), ("long", "int64"), ("int", "int32"),
     ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool"),
     ("half", "float16"), ("bfloat16", "bfloat16")],
)  # fmt: skip
def test_dtype_conversions_take_memory_format(method: str, dtype: str) -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3, 4, 5)).astype(np.float32))
    y = getattr(x, method)(memory_format=lucid.channels_last)
    assert y.dtype is getattr(lucid, dtype)
    assert y.is_contiguous(memory_format=lucid.channels_last)
    assert getattr(x, method)(memory_format=lucid.preserve_format).shape == (2, 3, 4, 5)
    with pytest.raises(TypeError, match="memory_format"):
        getattr(x, method)(memory_format="channels_last")
