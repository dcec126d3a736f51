"""softmax / log_softmax: values, stability on huge logits, gradients, dtype handling."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck


def _ref_softmax(a: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_matches_reference(dim: int) -> None:
    a = np.random.default_rng(0).standard_normal((3, 4, 5))
    out = lucid.softmax(lucid.tensor(a), dim)
    np.testing.assert_allclose(out.numpy(), _ref_softmax(a, dim), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out.numpy().sum(axis=dim), 1.0, rtol=1e-6, atol=1e-12)
    log = lucid.log_softmax(lucid.tensor(a), dim)
    np.testing.assert_allclose(log.numpy(), np.log(_ref_softmax(a, dim)), rtol=1e-6, atol=1e-6)


def test_huge_logits_are_stable() -> None:
    x = lucid.tensor([[1e4, 1e4 + 1.0, -1e4], [0.0, 0.0, 0.0]])
    s = lucid.softmax(x, dim=1).numpy()
    assert np.all(np.isfinite(s))
    np.testing.assert_allclose(s[0, :2], [0.26894142, 0.73105858], rtol=1e-5, atol=1e-6)
    assert s[0, 2] == 0.0
    ls = lucid.log_softmax(x, dim=1).numpy()
    assert np.all(np.isfinite(ls))
    np.testing.assert_allclose(ls[0, :2], [-1.3132616, -0.3132617], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ls[0, 2], -2e4 - 1.3132616, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ls[1], np.log(1 / 3), rtol=1e-6, atol=1e-6)


def test_keeps_float32_and_casts_with_dtype() -> None:
    x = lucid.randn(2, 3)
    assert lucid.softmax(x, 1).dtype is lucid.float32
    assert lucid.log_softmax(x, 1, dtype=lucid.float64).dtype is lucid.float64
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.softmax(lucid.tensor([1, 2, 3]), 0)
    assert lucid.softmax(lucid.tensor([1, 2, 3]), 0, dtype=lucid.float32).dtype is lucid.float32


def test_method_form_and_bad_dim() -> None:
    x = lucid.randn(2, 3)
    np.testing.assert_allclose(
        x.softmax(-1).numpy(), lucid.softmax(x, -1).numpy(), rtol=1e-7, atol=1e-7
    )
    np.testing.assert_allclose(
        x.log_softmax(0).numpy(), lucid.log_softmax(x, 0).numpy(), rtol=1e-7, atol=1e-7
    )
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.softmax(x, 2)


def test_zero_dim_input() -> None:
    assert lucid.softmax(lucid.tensor(3.0), 0).item() == 1.0
    assert lucid.log_softmax(lucid.tensor(3.0), 0).item() == 0.0


@pytest.mark.parametrize("fn", [lucid.softmax, lucid.log_softmax])
@pytest.mark.parametrize("dim", [0, 1])
def test_gradients(fn: object, dim: int) -> None:
    lucid.manual_seed(0)
    x = lucid.randn(3, 4, dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda t: fn(t, dim), x)  # type: ignore[operator]
    assert gradgradcheck(lambda t: fn(t, dim), x)  # type: ignore[operator]


def test_softmax_grad_known_value() -> None:
    # d/dx of softmax(x)[0] at x = 0 (two classes): s0 * (1 - s0) = 0.25, and -0.25.
    x = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    lucid.softmax(x, 0)[0].backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.25, -0.25], rtol=1e-10, atol=1e-12)
