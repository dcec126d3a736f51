"""erf, erfc, erfinv, gelu and lucid.special: values against math.erf, edges, gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.special
from lucid.autograd import gradcheck, gradgradcheck


def test_erf_matches_math_erf_to_double_precision() -> None:
    x = np.concatenate([np.linspace(-7, 7, 2001), np.logspace(-300, 1, 200)])
    ref = np.array([math.erf(v) for v in x])
    out = lucid.erf(lucid.tensor(x)).numpy()
    np.testing.assert_allclose(out, ref, rtol=5e-16, atol=2e-16)
    refc = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(lucid.erfc(lucid.tensor(x)).numpy(), refc, rtol=5e-14, atol=0)


def test_erf_edges_and_dtype() -> None:
    out = lucid.erf(lucid.tensor([float("inf"), float("-inf"), float("nan"), 0.0]))
    assert out.dtype is lucid.float32
    np.testing.assert_array_equal(out.numpy()[[0, 1, 3]], [1.0, -1.0, 0.0])
    assert np.isnan(out.numpy()[2])
    assert lucid.erf(lucid.tensor([1, 2])).dtype is lucid.float32


def test_erfinv_inverts_erf() -> None:
    y = np.concatenate([np.linspace(-0.999, 0.999, 999), 1 - np.logspace(-15, -1, 30)])
    x = lucid.erfinv(lucid.tensor(y)).numpy()
    back = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(back, y, rtol=0, atol=4e-16)
    # In the tails compare through erfc, where the information is.
    tail = 1 - np.logspace(-15, -1, 30)
    xt = lucid.erfinv(lucid.tensor(tail)).numpy()
    np.testing.assert_allclose([math.erfc(v) for v in xt], 1 - tail, rtol=1e-9, atol=1e-12)


def test_erfinv_edges() -> None:
    out = lucid.erfinv(lucid.tensor([1.0, -1.0, 1.5, -2.0, 0.0, float("nan")])).numpy()
    assert out[0] == math.inf and out[1] == -math.inf
    assert np.isnan(out[2]) and np.isnan(out[3]) and np.isnan(out[5])
    assert out[4] == 0.0


def test_special_namespace() -> None:
    x = lucid.tensor([-1.0, 0.0, 1.96], dtype=lucid.float64)
    phi = lucid.special.ndtr(x).numpy()
    np.testing.assert_allclose(
        phi, [0.15865525393145707, 0.5, 0.9750021048517795], rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(lucid.special.ndtri(lucid.tensor(phi)).numpy(), x.numpy(),
                               rtol=1e-10, atol=1e-12)  # fmt: skip
    assert lucid.special.erf is lucid.erf


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_values(approximate: str) -> None:
    x = np.linspace(-4, 4, 17)
    if approximate == "none":
        ref = x * 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    else:
        ref = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    out = lucid.special.gelu(lucid.tensor(x), approximate=approximate).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=1e-15)
    with pytest.raises(RuntimeError, match="none or tanh"):
        lucid.special.gelu(lucid.tensor(x), approximate="fast")


@pytest.mark.parametrize(
    "fn",
    [
        lucid.erf,
        lucid.erfc,
        lambda t: lucid.erfinv(t * 0.7),
        lambda t: lucid.special.gelu(t),
        lambda t: lucid.special.gelu(t, approximate="tanh"),
    ],
)
def test_gradients(fn: object) -> None:
    x = lucid.tensor([[-1.3, -0.2, 0.0], [0.4, 0.7, 1.1]], dtype=lucid.float64,
                     requires_grad=True)  # fmt: skip
    assert gradcheck(fn, x)  # type: ignore[arg-type]
    assert gradgradcheck(fn, x)  # type: ignore[arg-type]
