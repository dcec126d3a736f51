"""lucid.utils.checkpoint: gradients identical to the plain run, memory held by the graph falls,
RNG replayed, keyword arguments, nesting, autograd.grad w.r.t. parameters, double backward."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

D = lucid.float64


def _weights(n: int, width: int, seed: int = 0) -> list[lucid.Tensor]:
    rng = np.random.default_rng(seed)
    return [lucid.tensor(rng.standard_normal((width, width)) / np.sqrt(width), dtype=D,
                         requires_grad=True) for _ in range(n)]  # fmt: skip


def _layer(w: lucid.Tensor) -> Callable[[lucid.Tensor], lucid.Tensor]:
    return lambda h: (h @ w).tanh() * 1.5


def _grads(loss: lucid.Tensor, ts: list[lucid.Tensor]) -> list[np.ndarray]:
    return [g.numpy() for g in lucid.autograd.grad(loss, ts)]


def test_gradients_identical_with_kwargs() -> None:
    ws = _weights(5, 8)
    x = lucid.tensor(np.random.default_rng(1).standard_normal((4, 8)), dtype=D, requires_grad=True)

    def block(h: lucid.Tensor, w: lucid.Tensor, *, scale: float) -> lucid.Tensor:
        return (h @ w).sigmoid() * scale + h

    def run(ck: bool) -> lucid.Tensor:
        h = x
        for w in ws:
            h = (
                checkpoint(block, h, w, scale=0.7, use_reentrant=False)
                if ck
                else block(h, w, scale=0.7)
            )
        return (h * h).sum()

    plain = _grads(run(False), [x, *ws])
    ckpt = _grads(run(True), [x, *ws])
    for a, b in zip(plain, ckpt):
        np.testing.assert_array_equal(a, b)


def test_backward_accumulates_into_closed_over_parameters() -> None:
    (w,) = _weights(1, 4)
    x = lucid.ones(2, 4, dtype=D)
    checkpoint(_layer(w), x, use_reentrant=True).sum().backward()
    expected = w.grad.numpy().copy()
    w.grad = None
    _layer(w)(x).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), expected)


def test_nested_checkpoints_and_double_backward() -> None:
    ws = _weights(3, 6, seed=2)
    x = lucid.tensor(np.random.default_rng(3).standard_normal((2, 6)), dtype=D, requires_grad=True)

    def inner(h: lucid.Tensor) -> lucid.Tensor:
        return _layer(ws[1])(checkpoint(_layer(ws[0]), h, use_reentrant=False))

    def outer(h: lucid.Tensor) -> lucid.Tensor:
        return _layer(ws[2])(checkpoint(inner, h, use_reentrant=False))

    def plain(h: lucid.Tensor) -> lucid.Tensor:
        return _layer(ws[2])(_layer(ws[1])(_layer(ws[0])(h)))

    for f in (outer, lambda h: checkpoint(outer, h, use_reentrant=False)):
        (gx,) = lucid.autograd.grad(f(x).pow(2).sum(), x, create_graph=True)
        (gx0,) = lucid.autograd.grad(plain(x).pow(2).sum(), x, create_graph=True)
        np.testing.assert_allclose(gx.detach().numpy(), gx0.detach().numpy(), rtol=1e-12, atol=0)
        second = _grads(gx.sum(), ws)
        second0 = _grads(gx0.sum(), ws)
        for a, b in zip(second, second0):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_rng_state_is_replayed() -> None:
    x = lucid.tensor(np.random.default_rng(4).standard_normal((50,)), dtype=D, requires_grad=True)

    def dropout(h: lucid.Tensor) -> lucid.Tensor:
        return h * (lucid.rand(50, dtype=D) > 0.5) * 2.0

    lucid.manual_seed(7)
    y = checkpoint(dropout, x, use_reentrant=False)
    y.sum().backward()
    mask = y.detach().numpy() != 0  # x has no exact zeros
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 * mask)


def test_without_preserved_rng_the_replay_differs() -> None:
    x = lucid.ones(200, dtype=D, requires_grad=True)
    lucid.manual_seed(7)

    def noisy(h: lucid.Tensor) -> lucid.Tensor:
        return h * lucid.rand(200, dtype=D)

    y = checkpoint(noisy, x, use_reentrant=False, preserve_rng_state=False)
    y.sum().backward()
    assert not np.array_equal(x.grad.numpy(), y.detach().numpy())


def test_a_recomputation_that_saves_differently_raises() -> None:
    calls = []
    x = lucid.ones(3, dtype=D, requires_grad=True)

    def shifty(h: lucid.Tensor) -> lucid.Tensor:
        calls.append(1)
        return h.exp() if len(calls) == 1 else h.exp().exp()

    y = checkpoint(shifty, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different number of tensors"):
        y.sum().backward()


def test_checkpoint_sequential_matches_and_validates() -> None:
    ws = _weights(6, 5, seed=5)
    layers = [_layer(w) for w in ws]
    x = lucid.tensor(np.random.default_rng(6).standard_normal((3, 5)), dtype=D)
    plain = x
    for f in layers:
        plain = f(plain)
    out = checkpoint_sequential(layers, 3, x, use_reentrant=False)
    np.testing.assert_array_equal(out.detach().numpy(), plain.detach().numpy())
    for a, b in zip(_grads(out.sum(), ws), _grads(plain.sum(), ws)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(layers, 0, x)


def _held_and_peak(run: Callable[[], lucid.Tensor]) -> tuple[int, int]:
    """Bytes the graph holds after the forward, and the peak over forward and backward."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = run()
        held = tracemalloc.get_traced_memory()[0] - base
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return held, peak


def test_memory_falls_on_a_deep_mlp_and_gradients_are_identical() -> None:
    depth, width, batch = 24, 32, 512
    ws = _weights(depth, width, seed=8)
    x = lucid.tensor(np.random.default_rng(9).standard_normal((batch, width)), dtype=D)
    layers = [_layer(w) for w in ws]

    def plain() -> lucid.Tensor:
        h = x
        for f in layers:
            h = f(h)
        return h.sum()

    def ckpt() -> lucid.Tensor:
        return checkpoint_sequential(layers, 6, x, use_reentrant=False).sum()

    held0, peak0 = _held_and_peak(plain)
    g0 = [w.grad.numpy().copy() for w in ws]
    for w in ws:
        w.grad = None
    held1, peak1 = _held_and_peak(ckpt)
    for w, g in zip(ws, g0):
        np.testing.assert_array_equal(w.grad.numpy(), g)
    activation = batch * width * 8
    assert held0 > depth * activation  # each layer keeps at least one activation
    assert held1 < held0 / 3, (held0, held1)  # measured: 6.5 MB -> 1.6 MB
    assert peak1 < peak0 * 0.75, (peak0, peak1)  # measured: 6.9 MB -> 2.0 MB


def test_in_place_ops_inside_a_checkpoint() -> None:
    (w,) = _weights(1, 4, seed=11)
    x = lucid.tensor(np.random.default_rng(12).standard_normal((3, 4)), dtype=D, requires_grad=True)

    def block(h: lucid.Tensor) -> lucid.Tensor:
        a = h @ w
        a.relu_()  # as nn.ReLU(inplace=True)
        b = a * 2.0 + 0.5
        b.pow_(3)  # its node saved b before the overwrite
        return b.sum()

    for a, b in zip(_grads(checkpoint(block, x, use_reentrant=False), [x, w]),
                    _grads(block(x), [x, w])):  # fmt: skip
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_context_fn_wraps_the_first_run_and_each_recomputation() -> None:
    from contextlib import contextmanager

    from lucid.utils.checkpoint import noop_context_fn

    log: list[str] = []

    @contextmanager
    def tag(name: str) -> Any:
        log.append(name)
        yield

    x = lucid.ones(3, dtype=D, requires_grad=True)
    y = checkpoint(lambda h: h.exp(), x, use_reentrant=False,
                   context_fn=lambda: (tag("forward"), tag("recompute")))  # fmt: skip
    y.sum().backward()
    assert log == ["forward", "recompute"]
    assert all(hasattr(c, "__enter__") for c in noop_context_fn())
