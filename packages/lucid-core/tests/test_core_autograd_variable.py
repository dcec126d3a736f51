"""lucid.autograd.Variable and the legacy autograd names, as PyTorch has them."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
from lucid import autograd


def test_variable_is_a_detached_leaf_sharing_memory() -> None:
    lucid.manual_seed(0)
    w = lucid.randn(3, requires_grad=True)
    v = autograd.Variable(w * 2, requires_grad=True)
    assert isinstance(v, lucid.Tensor) and v.is_leaf and v.requires_grad
    (v * v).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), 2 * v.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert w.grad is None  # detached: nothing flows back into w
    base = lucid.zeros(2)
    alias = autograd.Variable(base)
    alias.add_(1.0)
    assert base.tolist() == [1.0, 1.0] and not alias.requires_grad


def test_variable_isinstance_and_errors() -> None:
    assert isinstance(lucid.ones(1), autograd.Variable)
    assert not isinstance(np.ones(1), autograd.Variable)
    assert autograd.Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        autograd.Variable(3)
    with pytest.raises(RuntimeError, match="floating point"):
        autograd.Variable(lucid.ones(2, dtype=lucid.int64), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed"):
        autograd.Variable(lucid.ones(1), volatile=True)
    with pytest.raises(RuntimeError, match=r"use torch.tensor\(...\) instead"):
        autograd.variable([1.0])


def test_switches_restore_their_mode() -> None:
    module = importlib.import_module("lucid.autograd.variable")

    with autograd.set_multithreading_enabled(False):
        assert module._switches.multithreading is False
    assert module._switches.multithreading is True
    autograd.enforce_grad_layout_policy(False)
    assert module._switches.grad_layout_policy is False
    autograd.enforce_grad_layout_policy(True)

    @autograd.set_multithreading_enabled(False)
    def inside() -> bool:
        return module._switches.multithreading

    assert inside() is False and module._switches.multithreading is True


@pytest.mark.parity
def test_variable_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    t = torch.autograd.Variable(torch.ones(2) * 3, requires_grad=True)
    lt = autograd.Variable(lucid.ones(2) * 3, requires_grad=True)
    assert (t.is_leaf, t.requires_grad, t.dtype == torch.float32) == (
        lt.is_leaf, lt.requires_grad, lt.dtype == lucid.float32,
    )  # fmt: skip
    assert tuple(torch.autograd.Variable().shape) == tuple(autograd.Variable().shape)
