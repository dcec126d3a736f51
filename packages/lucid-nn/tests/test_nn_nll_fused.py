"""``nll_loss`` as one node (``_NllLoss``): values and gradients bit for bit those of the op-level
form (``_nll_reference``, the oracle: the same array arithmetic), float64 gradients by finite
differences, double backward, the every-target-ignored case as PyTorch, and the op-level form
under an op observer (exporters, ``vmap``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck
from lucid.autograd.function import observe_ops
from lucid.nn.functional.loss import _nll_reference

CASES = [
    ((7, 5), (7,)),  # (N, C)
    ((3, 5, 4), (3, 4)),  # (N, C, d): the classes moved last
    ((2, 5, 3, 2), (2, 3, 2)),
]


def _run(fn: Any, x: np.ndarray, t: np.ndarray, w: Any, red: str, g: np.ndarray) -> Any:
    xt = lucid.tensor(x, requires_grad=True)
    loss = fn(xt, lucid.tensor(t), None if w is None else lucid.tensor(w), -100, red)
    loss.backward(lucid.tensor(g))
    assert xt.grad is not None
    return loss.detach().numpy().copy(), xt.grad.numpy().copy()


def _fused(x: Any, t: Any, w: Any, ignore: int, red: str) -> Any:
    return F.nll_loss(x, t, w, ignore_index=ignore, reduction=red)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(("shape", "tshape"), CASES)
def test_values_and_gradients_equal_the_op_level_form_bit_for_bit(
    shape: tuple[int, ...], tshape: tuple[int, ...], reduction: str, weighted: bool, dtype: str
) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    t = rng.integers(0, shape[1], tshape)
    t.flat[1] = -100  # an ignored row
    w = rng.uniform(0.5, 2.0, shape[1]).astype(dtype) if weighted else None
    g = rng.standard_normal(tshape if reduction == "none" else ()).astype(dtype)
    got = _run(_fused, x, t, w, reduction, g)
    want = _run(_nll_reference, x, t, w, reduction, g)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_float64_gradients_by_finite_differences(reduction: str) -> None:
    rng = np.random.default_rng(1)
    x = lucid.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
    t = lucid.tensor(np.array([[0, 2], [1, -100], [2, 2], [0, 1]]))
    w = lucid.tensor(rng.uniform(0.5, 2.0, 3))
    assert gradcheck(lambda a: F.nll_loss(a, t, w, reduction=reduction), (x,))


def test_double_backward_is_linear_in_the_upstream_gradient() -> None:
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    t = lucid.tensor([0, 3, 1, 1, 2])
    up = lucid.tensor(2.5, dtype=lucid.float64, requires_grad=True)
    (gx,) = lucid.autograd.grad(F.nll_loss(x, t) * up, x, create_graph=True)
    want = np.zeros((5, 4))
    want[np.arange(5), t.numpy()] = -2.5 / 5
    np.testing.assert_allclose(gx.detach().numpy(), want, rtol=1e-15, atol=0)
    (gup,) = lucid.autograd.grad(gx.sum(), up)  # d/d up of sum(gx) = -1
    np.testing.assert_allclose(float(gup), -1.0, rtol=1e-15, atol=0)


def test_every_target_ignored_gives_nan_and_a_zero_gradient() -> None:
    # PyTorch's: the mean over no rows is nan, its gradient 0 (not nan)
    x = lucid.randn(3, 4, requires_grad=True)
    loss = F.nll_loss(x, lucid.tensor([-100, -100, -100]))
    assert np.isnan(float(loss))
    loss.backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4), np.float32))


def test_an_op_observer_sees_the_op_level_form() -> None:
    seen: list[str] = []
    x = lucid.randn(3, 4, requires_grad=True)
    with observe_ops(lambda cls, *_: seen.append(cls.__name__)):
        F.nll_loss(x, lucid.tensor([0, 1, 2]))
    assert "_NllLoss" not in seen and len(seen) > 3
    F.nll_loss(x, lucid.tensor([0, 1, 2])).backward()  # outside: one node
    assert x.grad is not None


def test_bad_input_is_named() -> None:
    x = lucid.randn(3, 4)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.nll_loss(x, lucid.tensor([0, 4, 1]))
    with pytest.raises(RuntimeError, match="for all 4 classes or no classes but got weight"):
        F.nll_loss(x, lucid.tensor([0, 1, 1]), weight=lucid.ones(3))
    with pytest.raises(RuntimeError, match="integer dtype"):
        F.nll_loss(x, lucid.tensor([0.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="got Bool"):
        F.nll_loss(x, lucid.tensor([True, False, True]))


@pytest.mark.parity
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_a_language_models_loss_matches_torch(reduction: str) -> None:
    # word_language_model's loss: log_softmax over 10,000 classes, then nll_loss (float32:
    # values within 2e-6 relative, gradients within 1e-7 absolute); every target ignored too
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((40, 10_000)) * 3).astype(np.float32)
    t = rng.integers(0, 10_000, 40)
    t[3] = -100
    for target in (t, np.full(40, -100)):
        lx = lucid.tensor(x, requires_grad=True)
        tx = torch.tensor(x, requires_grad=True)
        lo = F.nll_loss(F.log_softmax(lx, 1), lucid.tensor(target), reduction=reduction)
        to = torch.nn.functional.nll_loss(torch.log_softmax(tx, 1), torch.tensor(target),
                                          reduction=reduction)  # fmt: skip
        g = rng.standard_normal(to.shape).astype(np.float32)
        lo.backward(lucid.tensor(g))
        to.backward(torch.tensor(g))
        assert lx.grad is not None and tx.grad is not None
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=2e-6, atol=1e-6)
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-7)
