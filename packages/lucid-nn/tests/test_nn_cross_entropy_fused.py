"""``cross_entropy`` without class weights or label smoothing through the backend's log_softmax
rows (``loss.FUSED_LOG_SOFTMAX``): values and gradients bit for bit those of
``nll_loss(log_softmax(x, 1))`` (torch's own composition, two nodes here), on the small arrays'
formula and on the kernels' rows; held to a float64 oracle; float64 gradients by finite
differences; the every-target-ignored case; a double backward; and the path it replaced
(``FUSED_LOG_SOFTMAX = False``) within float32 rounding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck
from lucid.nn.functional import loss as loss_mod

# (rows, classes): a LeNet-sized batch, nanoGPT's (batch x block, vocab), and logits past
# ``_ONE_HOT_KERNEL_ELEMENTS`` (the backend's one-hot kernels, compiled rows with numba)
SHAPES = [(64, 10), (96, 65), (300, 1000)]


def _run(fn: Any, x: np.ndarray, t: np.ndarray, red: str, g: np.ndarray) -> Any:
    xt = lucid.tensor(x, requires_grad=True)
    loss = fn(xt, lucid.tensor(t), red)
    loss.backward(lucid.tensor(g))
    assert xt.grad is not None
    return loss.detach().numpy().copy(), xt.grad.numpy().copy()


def _fused(x: Any, t: Any, red: str) -> Any:
    return F.cross_entropy(x, t, reduction=red)


def _composed(x: Any, t: Any, red: str) -> Any:
    return F.nll_loss(F.log_softmax(x, 1), t, reduction=red)


def _inputs(shape: tuple[int, int], dtype: str, red: str, ignored: bool, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    t = rng.integers(0, shape[1], shape[0])
    if ignored:
        t[1] = -100
    g = rng.standard_normal(shape[0] if red == "none" else ()).astype(dtype)
    if red != "none":
        g = np.abs(g) + dtype_type(dtype)(0.5)  # a positive scale: every row's value negative
    return x, t, g


def dtype_type(dtype: str) -> Any:
    return np.dtype(dtype).type


@pytest.mark.parametrize("ignored", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{m}x{c}" for m, c in SHAPES])
def test_values_and_gradients_equal_nll_of_log_softmax_bit_for_bit(
    shape: tuple[int, int], reduction: str, dtype: str, ignored: bool
) -> None:
    x, t, g = _inputs(shape, dtype, reduction, ignored)
    got = _run(_fused, x, t, reduction, g)
    want = _run(_composed, x, t, reduction, g)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{m}x{c}" for m, c in SHAPES])
def test_float32_values_and_gradients_against_a_float64_oracle(
    shape: tuple[int, int], reduction: str
) -> None:
    x, t, g = _inputs(shape, "float32", reduction, True, seed=3)
    loss, grad = _run(_fused, x, t, reduction, g)
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    valid = t != -100
    tt = np.where(valid, t, 0)
    rows = np.arange(shape[0])
    per_row = -logp[rows, tt] * valid
    onehot = np.zeros(shape)
    onehot[rows, tt] = valid
    d_row = np.exp(logp) * valid[:, None] - onehot  # d per_row / d x
    g64 = g.astype(np.float64)
    if reduction == "none":
        want, want_grad = per_row, d_row * g64[:, None]
    elif reduction == "sum":
        want, want_grad = per_row.sum(), d_row * g64
    else:
        want, want_grad = per_row.sum() / valid.sum(), d_row * g64 / valid.sum()
    # float32 rounding of log_softmax (a few ulps of values up to ~20) and of the probabilities
    np.testing.assert_allclose(loss, want, rtol=2e-6, atol=2e-5)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_the_path_it_replaced_agrees_within_float32_rounding(
    reduction: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    x, t, g = _inputs((300, 1000), "float32", reduction, True, seed=5)
    got = _run(_fused, x, t, reduction, g)
    monkeypatch.setattr(loss_mod, "FUSED_LOG_SOFTMAX", False)
    old = _run(_fused, x, t, reduction, g)
    np.testing.assert_allclose(got[0], old[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], old[1], rtol=1e-4, atol=1e-8)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_float64_gradients_by_finite_differences(reduction: str) -> None:
    rng = np.random.default_rng(1)
    x = lucid.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    t = lucid.tensor(np.array([0, 3, -100, 1, 2]))
    assert gradcheck(lambda a: F.cross_entropy(a, t, reduction=reduction), (x,))


def test_spatial_targets_match_the_composition() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    t = rng.integers(0, 5, (3, 4))
    t[0, 0] = -100
    g = np.float32(1.0)
    got = _run(_fused, x, t, "mean", g)
    want = _run(_composed, x, t, "mean", g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_every_target_ignored_gives_nan_and_a_zero_gradient() -> None:
    x = lucid.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, lucid.tensor([-100, -100, -100, -100]))
    assert np.isnan(float(loss))
    loss.backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((4, 3), np.float32))


def test_double_backward_through_the_fused_path() -> None:
    # d/dx of sum(d loss / dx * v) = H v: softmax's Hessian-vector product, as the reference
    rng = np.random.default_rng(4)
    x = lucid.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    t = lucid.tensor([1, 0, 3])
    v = lucid.tensor(rng.standard_normal((3, 4)))
    (gx,) = lucid.autograd.grad(F.cross_entropy(x, t), x, create_graph=True)
    (hv,) = lucid.autograd.grad((gx * v).sum(), x)
    (gr,) = lucid.autograd.grad(_composed(x, t, "mean"), x, create_graph=True)
    (hr,) = lucid.autograd.grad((gr * v).sum(), x)
    np.testing.assert_allclose(gx.detach().numpy(), gr.detach().numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hv.numpy(), hr.numpy(), rtol=1e-10, atol=1e-13)
