"""torch's deprecated scalar-first overloads, which old programs still use (the char-RNN
tutorial's ``p.data.add_(-learning_rate, p.grad.data)``): same result, same warning."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _pair() -> tuple[lucid.Tensor, lucid.Tensor]:
    lucid.manual_seed(0)
    return lucid.randn(4), lucid.randn(4)


@pytest.mark.parametrize("name", ["add_", "sub_", "add", "sub"])
def test_number_alpha_first(name: str) -> None:
    p, g = _pair()
    expected = getattr(p.clone(), name)(g, alpha=-0.5).numpy()
    with pytest.warns(UserWarning, match=f"This overload of {name} is deprecated"):
        got = getattr(p, name)(-0.5, g)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-7)
    if name.endswith("_"):
        assert got is p


@pytest.mark.parametrize("name", ["addcmul_", "addcdiv_"])
def test_number_value_first(name: str) -> None:
    p, g = _pair()
    h = g.abs() + 1
    expected = getattr(p.clone(), name)(g, h, value=2.0).numpy()
    with pytest.warns(UserWarning, match=f"{name}\\(Number value, Tensor tensor1"):
        got = getattr(p, name)(2.0, g, h)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_the_current_overloads_do_not_warn() -> None:
    import warnings

    p, g = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p.add_(g, alpha=2)
        p.add_(3)
        p.addcmul_(g, g, value=0.5)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["add_", "sub_", "add", "sub", "addcmul_", "addcdiv_"])
def test_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(5), np.abs(rng.standard_normal(5)) + 1
    args = (0.25, b) if name in ("add_", "sub_", "add", "sub") else (0.25, a, b)
    with pytest.warns(UserWarning):
        got = getattr(lucid.tensor(a), name)(
            *(lucid.tensor(x) if isinstance(x, np.ndarray) else x for x in args)
        )
    want = getattr(torch.tensor(a), name)(
        *(torch.tensor(x) if isinstance(x, np.ndarray) else x for x in args)
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
