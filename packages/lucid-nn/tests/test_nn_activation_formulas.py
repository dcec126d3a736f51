"""sigmoid, silu, softplus, logsigmoid, mish and hardswish as torch computes them (issue 30:
one op each, NumPy's SIMD exp/log1p/tanh passes): values and gradients against PyTorch over
the whole float32 range and its special values, first and second gradients against finite
differences in float64, and torch's node names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

NAMES = [("sigmoid", {}), ("silu", {}), ("softplus", {}),
         ("softplus", {"beta": 2.0, "threshold": 5.0}), ("logsigmoid", {}), ("mish", {}),
         ("hardswish", {})]  # fmt: skip
SPECIAL = [0.0, -0.0, 1e-30, -1e-30, 3.0, -3.0, 2.5, 20.0, 20.5, -20.0, 88.0, 89.0, -88.0,
           -89.0, -100.0, 100.0, 1e4, -1e4, np.inf, -np.inf, np.nan]  # fmt: skip


def _values() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.standard_normal(3000) * 8, SPECIAL]).astype(np.float32)


def _run(fw: Any, name: str, kw: dict[str, Any], x0: np.ndarray) -> tuple[Any, Any]:
    x = fw.tensor(x0, requires_grad=True)
    y = getattr(fw.nn.functional, name)(x, **kw)
    y.backward(fw.tensor(np.linspace(-2, 2, x0.size).astype(x0.dtype)))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize(("name", "kw"), NAMES, ids=[f"{n}{k}" for n, k in NAMES])
def test_values_and_gradients_match_pytorch_float32(name: str, kw: dict[str, Any]) -> None:
    x0 = _values()
    (ly, lg), (ty, tg) = _run(lucid, name, kw, x0), _run(torch, name, kw, x0)
    # NaN exactly where torch's are, infinities equal, the rest within float32 rounding
    # (NumPy's SIMD exp/log1p/tanh against torch's, 1-2 ulp; a gradient's 1 - s cancels)
    for a, b in ((ly, ty), (lg, tg)):
        assert np.array_equal(np.isnan(a), np.isnan(b))
        assert np.array_equal(a[np.isinf(b)], b[np.isinf(b)])
    np.testing.assert_allclose(ly, ty, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(lg, tg, rtol=2e-5, atol=2e-7)


@pytest.mark.parametrize(("name", "kw"), NAMES, ids=[f"{n}{k}" for n, k in NAMES])
def test_gradients_and_second_gradients_match_finite_differences(
    name: str, kw: dict[str, Any]
) -> None:
    rng = np.random.default_rng(1)
    x0 = rng.uniform(-6, 6, 24)
    x0 = x0[np.abs(np.abs(x0) - 3) > 1e-3]  # hardswish's kinks at -3 and 3
    fn = getattr(F, name)
    eps = 1e-6

    def grad(v: np.ndarray) -> np.ndarray:
        x = lucid.tensor(v, dtype=lucid.float64, requires_grad=True)
        (gx,) = lucid.autograd.grad(fn(x, **kw).sum(), [x])
        return gx.numpy()

    x = lucid.tensor(x0, dtype=lucid.float64, requires_grad=True)
    (gx,) = lucid.autograd.grad(fn(x, **kw).sum(), [x], create_graph=True)
    (ggx,) = lucid.autograd.grad(gx.sum(), [x])
    y = lambda v: fn(lucid.tensor(v, dtype=lucid.float64), **kw).numpy()  # noqa: E731
    np.testing.assert_allclose(gx.detach().numpy(), (y(x0 + eps) - y(x0 - eps)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)  # fmt: skip
    np.testing.assert_allclose(ggx.numpy(), (grad(x0 + eps) - grad(x0 - eps)) / (2 * eps),
                               rtol=1e-5, atol=1e-7)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "node"),
    [
        ("silu", "SiluBackward0"),
        ("mish", "MishBackward0"),
        ("hardswish", "HardswishBackward0"),
        ("softplus", "SoftplusBackward0"),
        ("logsigmoid", "LogSigmoidBackward0"),
        ("sigmoid", "SigmoidBackward0"),
    ],  # fmt: skip
)
def test_one_node_named_as_torch_names_it(name: str, node: str) -> None:
    x = lucid.randn(4, requires_grad=True)
    y = getattr(F, name)(x)
    assert y.grad_fn is not None and y.grad_fn.name() == node
    tx = torch.randn(4, requires_grad=True)
    assert getattr(torch.nn.functional, name)(tx).grad_fn.name() == node


def test_silu_in_place_and_on_complex_numbers() -> None:
    x = lucid.randn(5)
    want = F.silu(x).numpy()
    y = x.clone()
    assert F.silu(y, inplace=True) is y
    np.testing.assert_array_equal(y.numpy(), want)
    z = lucid.tensor(np.array([1 + 2j, -0.5 + 0.1j], dtype=np.complex64))
    tz = torch.tensor(z.numpy())
    np.testing.assert_allclose(F.silu(z).numpy(), torch.nn.functional.silu(tz).numpy(),
                               rtol=1e-6, atol=1e-6)  # fmt: skip
