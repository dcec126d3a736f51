"""The engine's leaf gradients: a fresh gradient becomes ``.grad`` without a copy, a shared one
is copied, and a leaf used many times sums its gradients into one array (same bits)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import Function

_made: dict[str, Any] = {}


class _Fresh(Function):
    """``2 x`` whose backward makes a new array and remembers it (weakly)."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> Any:
        arr = g._data * 2
        _made["ref"] = weakref.ref(arr)
        return lucid.Tensor.from_backend_array(arr, g.backend)


class _Shaped(Function):
    """``2 x`` of a 1-D ``x`` whose backward returns a view of a new array: a whole reshape
    (``take``), or a slice of a larger one."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    whole = True

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> Any:
        n = g.shape[0]
        if _Shaped.whole:
            arr = (g._data * 2).reshape(1, n).reshape(n)
        else:
            arr = np.concatenate([g._data * 2, g._data])[:n]
        _made["ref"] = weakref.ref(arr)
        return lucid.Tensor.from_backend_array(arr, g.backend)


class _Ident(Function):
    """A copy whose backward passes the incoming gradient on as it is."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x.copy()

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> Any:
        return g


class _Twice(Function):
    """``(x, y) -> x + y`` whose backward hands one gradient Tensor to both inputs."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx: Any, x: Any, y: Any) -> Any:
        return x + y

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> Any:
        return g, g


def test_fresh_gradient_is_taken_without_a_copy() -> None:
    x = lucid.ones(3, requires_grad=True)
    _Fresh.apply(x).sum().backward()
    assert x.grad is not None
    assert x.grad._data is _made["ref"]()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0, np.float32))


@pytest.mark.parametrize("whole", [True, False])
def test_view_gradient_taken_only_when_it_spans_its_base(whole: bool) -> None:
    _Shaped.whole = whole
    x = lucid.ones(4, requires_grad=True)
    _Shaped.apply(x).sum().backward()
    assert x.grad is not None
    assert (x.grad._data is _made["ref"]()) is whole
    if not whole:  # a copy: it does not keep the larger array alive
        assert x.grad._data.base is None
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 2.0, np.float32))


def test_users_gradient_is_copied() -> None:
    x = lucid.ones(3, requires_grad=True)
    t = lucid.tensor([1.0, 2.0, 3.0])
    _Ident.apply(x).backward(t)
    assert x.grad is not None
    assert not np.shares_memory(x.grad._data, t._data)
    x.grad.add_(1.0)
    np.testing.assert_array_equal(t.numpy(), np.array([1.0, 2.0, 3.0], np.float32))


def test_retained_nonleaf_grad_and_leaf_grad_do_not_share() -> None:
    x = lucid.ones(3, requires_grad=True)
    y = _Ident.apply(x)
    y.retain_grad()
    _Fresh.apply(y).sum().backward()
    assert x.grad is not None and y.grad is not None
    assert not np.shares_memory(x.grad._data, y.grad._data)


def test_one_gradient_for_two_leaves_is_not_shared() -> None:
    x = lucid.ones(3, requires_grad=True)
    y = lucid.ones(3, requires_grad=True)
    _Twice.apply(x, y).sum().backward()
    assert x.grad is not None and y.grad is not None
    assert not np.shares_memory(x.grad._data, y.grad._data)
    x.grad.add_(1.0)
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(3, np.float32))


def test_gradient_a_hook_kept_is_copied() -> None:
    w = lucid.ones(4, requires_grad=True)
    kept: list[lucid.Tensor] = []
    w.register_hook(kept.append)
    (w * 3.0).sum().backward()
    assert w.grad is not None
    assert not np.shares_memory(kept[0]._data, w.grad._data)


@pytest.mark.parametrize("uses", [2, 3, 7])
def test_leaf_used_many_times_sums_in_order(uses: int) -> None:
    rng = np.random.default_rng(uses)
    scales = rng.standard_normal(uses).astype(np.float32)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    w = lucid.tensor(w0, requires_grad=True)
    total = None
    for s in scales:
        term = (w * float(s)).sum()
        total = term if total is None else total + term
    assert total is not None
    total.backward()
    expected = np.full((5, 3), scales[-1], np.float32)  # the engine's order: last use first
    for s in scales[-2::-1]:
        expected = expected + np.full((5, 3), s, np.float32)
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), expected)
    # a second pass accumulates into .grad as before
    (w * 2.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), expected + 2.0, rtol=1e-6, atol=1e-6)


def test_create_graph_sums_stay_differentiable() -> None:
    x = lucid.tensor([1.5, -0.5], dtype=lucid.float64, requires_grad=True)
    y = (x * x + x * x * x + x).sum()
    (g,) = lucid.autograd.grad(y, x, create_graph=True)
    (gg,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(
        g.detach().numpy(),
        2 * x.detach().numpy() + 3 * x.detach().numpy() ** 2 + 1,
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(gg.numpy(), 2 + 6 * x.detach().numpy(), rtol=1e-12, atol=1e-12)
