"""A Linear's weight gradient left running on the pool while the backward pass goes on
(``_gemm.matmul_defer``, ``engine.defer``): the engine waits before it reads it, and every
result is the bits of the pass that waits for both products at once (``DEFER`` off)."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import engine

gemm = importlib.import_module("lucid.backends._numpy._gemm")
parallel = importlib.import_module("lucid.backends._numpy._parallel")


@pytest.fixture
def two_threads(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Two threads and pairs at every size (so small products take the deferred path), the
    count of deferred products made."""
    monkeypatch.setattr(parallel.blas_threads, "budget", lambda: 2)
    monkeypatch.setattr(gemm, "PAIR_FLOPS", 0.0)
    made = []
    real = gemm.matmul_defer

    def counting(*args: Any) -> Any:
        r = real(*args)
        if r is not None:
            made.append(1)
        return r

    monkeypatch.setattr(gemm, "matmul_defer", counting)
    monkeypatch.setattr(importlib.import_module("lucid.backends._numpy")._XP, "matmul_defer",
                        counting)  # fmt: skip
    return made


def _mlp(dtype: Any) -> nn.Module:
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(24, 48), nn.Tanh(), nn.Linear(48, 48), nn.GELU(),
                         nn.Linear(48, 10)).to(dtype)  # fmt: skip


def _step_grads(model: nn.Module, x: lucid.Tensor, y: lucid.Tensor, times: int = 1) -> list[Any]:
    model.zero_grad(set_to_none=True)
    for _ in range(times):  # several backwards: the gradients accumulate
        F.cross_entropy(model(x), y).backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64])
@pytest.mark.parametrize("times", [1, 2])
def test_deferred_weight_gradients_give_the_same_bits(two_threads: Any, dtype: Any,
                                                      times: int) -> None:  # fmt: skip
    rng = np.random.default_rng(0)
    x = lucid.from_numpy(rng.standard_normal((5, 7, 24))).to(dtype)
    y = lucid.from_numpy(rng.integers(0, 10, (5,)).astype(np.int64))
    model = _mlp(dtype)
    got = _step_grads(model, x.mean(1), y, times)
    # the second and third Linears' (the first has no input gradient to pair with)
    assert len(two_threads) == 2 * times
    gemm.DEFER = False
    try:
        want = _step_grads(model, x.mean(1), y, times)
    finally:
        gemm.DEFER = True
    assert len(two_threads) == 2 * times
    for a, e in zip(got, want):
        np.testing.assert_array_equal(a, e)


def _tied() -> tuple[nn.Module, nn.Module]:
    lucid.manual_seed(1)
    a, b = nn.Linear(16, 16, bias=False), nn.Linear(16, 16, bias=False)
    b.weight = a.weight  # one leaf, two Linears: the engine sums two deferred terms
    return a, b


def test_a_weight_used_twice_sums_both_deferred_terms(two_threads: Any) -> None:
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((9, 16)).astype(np.float64)
    results = []
    for defer in (True, False):
        gemm.DEFER = defer
        try:
            a, b = _tied()
            a.double()
            x = lucid.from_numpy(xa.copy())
            b(a(x).tanh()).pow(2).sum().backward()
            results.append(a.weight.grad.numpy().copy())
        finally:
            gemm.DEFER = True
    assert two_threads == [1]  # b's weight gradient was deferred, a's summed into it after
    np.testing.assert_array_equal(results[0], results[1])
    # the float64 oracle: d/dW sum((W tanh(W x))^2) by finite differences of one entry
    a, b = _tied()
    a.double()
    w0 = a.weight.detach().numpy().copy()

    def f(w: np.ndarray) -> float:
        return float(((np.tanh(xa @ w.T) @ w.T) ** 2).sum())

    eps = 1e-6
    for i, j in [(0, 0), (3, 7), (15, 2)]:
        wp, wm = w0.copy(), w0.copy()
        wp[i, j] += eps
        wm[i, j] -= eps
        np.testing.assert_allclose(results[0][i, j], (f(wp) - f(wm)) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)  # fmt: skip


def test_hooks_and_autograd_grad_see_the_finished_gradient(two_threads: Any) -> None:
    rng = np.random.default_rng(3)
    lin = nn.Linear(32, 20).double()
    x = lucid.from_numpy(rng.standard_normal((11, 32))).requires_grad_()  # a pair to defer
    want = np.ones((11, 20)).T @ x.detach().numpy()  # d sum(x W^T + b) / dW
    seen: list[np.ndarray] = []
    lin.weight.register_hook(lambda g: seen.append(g.numpy().copy()))
    post: list[np.ndarray] = []
    lin.weight.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.numpy().copy()))
    lin(x).sum().backward()
    (gw,) = lucid.autograd.grad(lin(x).sum(), [lin.weight])
    assert len(two_threads) == 2
    for got in (seen[0], post[0], lin.weight.grad.numpy(), gw.numpy()):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _defers(wait: Any) -> Any:
    """A Function (the identity) whose backward leaves ``wait`` to the running pass."""

    class Defers(lucid.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
            return x * 1

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
            assert engine.deferring()
            engine.defer(wait)
            return g

    return Defers


def test_an_error_in_deferred_work_is_raised_by_backward() -> None:
    def wait() -> None:
        raise ValueError("the deferred product failed")

    Defers = _defers(wait)
    x = lucid.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="deferred product failed"):
        Defers.apply(x).sum().backward()
    assert x.grad is None  # nothing accumulated from a failed pass
    assert not engine.deferring()  # no pass left running


def test_a_failing_pass_still_waits_for_deferred_work() -> None:
    waited: list[int] = []
    Defers = _defers(lambda: waited.append(1))

    class Fails(lucid.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
            return x * 1

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
            raise RuntimeError("a later node fails")

    x = lucid.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="later node fails"):
        Fails.apply(Defers.apply(x)).sum().backward()
    assert waited == []  # Defers never ran: Fails is first
    with pytest.raises(RuntimeError, match="later node fails"):
        Defers.apply(Fails.apply(x)).sum().backward()
    assert waited == [1]  # Defers ran first; its work was waited for before the error left


def test_node_hooks_and_anomaly_mode_do_not_defer(two_threads: Any) -> None:
    lin = nn.Linear(8, 8).double()
    x = lucid.randn(4, 8, dtype=lucid.float64, requires_grad=True)
    out = lin(x)
    out.grad_fn.register_hook(lambda gi, go: None)
    out.sum().backward()
    assert two_threads == []
    with lucid.autograd.detect_anomaly():
        lin(x).sum().backward()
    assert two_threads == []
    lin(x).sum().backward()
    assert two_threads == [1]
