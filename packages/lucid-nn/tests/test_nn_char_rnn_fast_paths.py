"""A char-RNN step's direct routes (``F.log_softmax``, ``nll_loss``, ``add_`` under no_grad)
give the bits, nodes and errors of the op paths they skip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import observe_ops


def _observed(fn: Any) -> Any:
    with observe_ops(lambda *_: None):
        return fn()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_direct_matches_the_full_path(dtype: Any, reduction: str) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 5)).astype(dtype)
    target = lucid.tensor(np.array([1, 4, 0]))
    x = lucid.tensor(data, requires_grad=True)
    xw = nn.Parameter(lucid.tensor(data))  # not a plain Tensor: nll_loss's full checks run
    xo = lucid.tensor(data, requires_grad=True)
    loss = F.nll_loss(x, target, reduction=reduction)
    ref = F.nll_loss(xw, target, reduction=reduction)
    ops = _observed(lambda: F.nll_loss(xo, target, reduction=reduction))  # the op-level form
    np.testing.assert_array_equal(loss.detach().numpy(), ref.detach().numpy())
    np.testing.assert_allclose(loss.item(), ops.item(), rtol=1e-6, atol=1e-7)
    assert loss.grad_fn.name() == "NllLossBackward0" == ref.grad_fn.name()
    for t in (loss, ref, ops):
        t.backward()
    np.testing.assert_array_equal(x.grad.numpy(), xw.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), xo.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_nll_loss_direct_keeps_the_errors_and_ignore_index() -> None:
    x = lucid.randn(2, 4, requires_grad=True)
    with pytest.raises(IndexError):
        F.nll_loss(x, lucid.tensor([0, 4]))
    with pytest.raises(ValueError, match="expected target of shape"):
        F.nll_loss(x, lucid.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="integer dtype"):
        F.nll_loss(x, lucid.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="not a valid value"):
        F.nll_loss(x, lucid.tensor([0, 1]), reduction="avg")
    t32 = lucid.tensor(np.array([3, -100], dtype=np.int32))
    loss = F.nll_loss(x, t32)
    np.testing.assert_allclose(loss.item(), -x.detach().numpy()[0, 3], rtol=1e-6, atol=1e-7)


@pytest.mark.parity
def test_char_rnn_step_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((6, 7)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((3, 7)).astype(np.float32) * 0.3
    xs = rng.standard_normal((4, 1, 1)).astype(np.float32)

    def run(fw: Any) -> list[np.ndarray]:
        i2h, i2o = fw.nn.Linear(7, 6), fw.nn.Linear(7, 3)
        with fw.no_grad():
            i2h.weight.copy_(fw.tensor(w1))
            i2o.weight.copy_(fw.tensor(w2))
            i2h.bias.zero_()
            i2o.bias.zero_()
        sm = fw.nn.LogSoftmax(dim=1)
        hidden = fw.zeros(1, 6)
        for i in range(4):
            combined = fw.cat((fw.tensor(xs[i]), hidden), 1)
            out, hidden = sm(i2o(combined)), i2h(combined)
        loss = fw.nn.functional.nll_loss(out, fw.tensor(np.array([2])))
        loss.backward()
        with fw.no_grad():
            for p in (i2h.weight, i2o.weight):
                p.add_(p.grad, alpha=-0.5)
        return [i2h.weight.grad.numpy(), i2o.weight.grad.numpy(),
                i2h.weight.detach().numpy(), i2o.weight.detach().numpy()]  # fmt: skip

    for a, b in zip(run(lucid), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_log_softmax_module_and_functional_match_the_observed_path() -> None:
    x = lucid.randn(2, 18, requires_grad=True)
    y = nn.LogSoftmax(dim=1)(x)
    z = _observed(lambda: F.log_softmax(x, dim=1))
    np.testing.assert_array_equal(y.detach().numpy(), z.detach().numpy())
    assert y.grad_fn.name() == "LogSoftmaxBackward0"
    assert F.log_softmax(x, dim=-1).grad_fn is not None
    with pytest.raises(IndexError):
        F.log_softmax(x, dim=2)


# alphas float32 holds (3e38 overflows the products): an alpha past its range is outside
# this test, where torch raises and lucid follows NumPy's promotion (docs/differences.md)
@pytest.mark.parametrize("alpha", [-0.005, 2.5, 3e38, 7])
def test_add_alpha_in_place_matches_the_ufuncs(alpha: Any) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 40)).astype(np.float32)
    b = rng.standard_normal((128, 40)).astype(np.float32)
    p = nn.Parameter(lucid.tensor(a.copy()))
    with lucid.no_grad():
        p.add_(lucid.tensor(b), alpha=alpha)
    with np.errstate(all="ignore"):
        # alpha rounded to the array's dtype first, as torch's add_ and lucid's kernel round
        # it (NumPy 1.x would promote a float32 array times 1e300 to float64)
        expected = np.add(a, np.multiply(b, a.dtype.type(alpha)))
    np.testing.assert_array_equal(p.detach().numpy(), expected)
