"""NumPy scalars are Python numbers to torch: ``x / np.sqrt(d)`` keeps ``x``'s float32, as
``x / math.sqrt(d)`` does. lucid handed the NumPy scalar to NumPy, whose rules (NEP 50) made
the result float64 (graykode/nlp-tutorial's Transformer and BERT then stopped at a float32
Linear, 7 December 2026). Also: half-precision ``multinomial`` draws in float32, and
``tensor`` of a list of arrays gives torch's warning."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "div": lambda fw, x: x / np.sqrt(4),
    "rmul": lambda fw, x: np.float64(2) * x,
    "radd": lambda fw, x: np.float64(2) + x,
    "rsub": lambda fw, x: np.float64(2) - x,
    "rdiv": lambda fw, x: np.float64(2) / x,
    "rpow": lambda fw, x: np.float64(2) ** x,
    "pow": lambda fw, x: x ** np.float64(2),
    "add_method": lambda fw, x: x.add(np.float64(1)),
    "int_times_float": lambda fw, x: fw.arange(3) * np.float64(1.5),
    "half": lambda fw, x: x.half().mul(np.float64(2)),
    "half_f32_scalar": lambda fw, x: x.half() * np.float32(2),
    "int32_np_int": lambda fw, x: fw.arange(3, dtype=fw.int32) * np.int64(2),
    "where": lambda fw, x: fw.where(x > 1, x, np.float64(0)),
    "clamp": lambda fw, x: x.clamp(np.float64(0.5), np.float64(1.5)),
    "clamp_min": lambda fw, x: fw.clamp_min(x, np.float64(1.2)),
    "masked_fill": lambda fw, x: x.masked_fill(x > 1, np.float64(0)),
    "full": lambda fw, x: fw.full((2,), np.float64(1)),
    "fill_": lambda fw, x: x.clone().fill_(np.float64(3)),
    "add_": lambda fw, x: x.clone().add_(np.float64(1)),
    "lerp": lambda fw, x: x.lerp(x * 2, np.float64(0.3)),
    "addcmul": lambda fw, x: x.addcmul(x, x, value=np.float64(0.5)),
    "sub_alpha": lambda fw, x: fw.sub(x, x * 3, alpha=np.float64(2)),
    "bool_scalar": lambda fw, x: x * np.bool_(True),
    "div_floor": lambda fw, x: fw.div(x, np.float64(2), rounding_mode="floor"),
    "remainder": lambda fw, x: x % np.float64(0.7),
    "softmax_scaled": lambda fw, x: fw.softmax(x / np.sqrt(np.float64(8)), dim=-1),
    "compare": lambda fw, x: x < np.float64(1.1),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_scalars_are_weak_as_torchs(name: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.array([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], dtype=np.float32)
    want = CASES[name](torch, torch.tensor(x))
    got = CASES[name](lucid, lucid.tensor(x))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], name
    np.testing.assert_allclose(
        got.float().numpy(), want.float().numpy(), rtol=1e-3 if "half" in name else 1e-6, atol=1e-6
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_multinomial_draws_in_float32(dtype: str) -> None:
    lucid.manual_seed(0)
    probs = lucid.full((2000, 50), 0.02, dtype=getattr(lucid, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a half uniform of 1.0 warned in log1p
        draws = lucid.multinomial(probs, 1).numpy().ravel()
        again = lucid.multinomial(probs, 3, replacement=True)
    assert draws.min() >= 0 and draws.max() < 50 and again.shape == (2000, 3)
    counts = np.bincount(draws, minlength=50)
    # uniform over 50 categories: each count ~ 40 +- 6.3; a category never drawn (an
    # infinite key) or many ties broken toward low indices would show here
    assert counts.min() > 10 and counts.max() < 80


def test_a_list_of_arrays_warns_once_as_torch() -> None:
    import lucid._tensor as tensor_module

    saved = list(tensor_module._warned_arrays)
    tensor_module._warned_arrays.clear()
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            t = lucid.tensor([np.zeros(3), np.ones(3)])
            lucid.tensor([np.zeros(3)])
        msgs = [w for w in seen if "list of numpy.ndarrays is extremely slow" in str(w.message)]
        assert len(msgs) == 1 and msgs[0].filename == __file__
        assert t.shape == (2, 3)
    finally:
        tensor_module._warned_arrays[:] = saved or [True]
