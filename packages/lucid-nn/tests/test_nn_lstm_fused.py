"""The fused LSTM layer (``kernels.LSTM``, one op per layer and direction) against the
reference in lucid ops (``_lstm_reference``, what ran before): outputs, final states and every
gradient, float64 to 1e-12 and float32 to 2e-6 (atol and rtol), for one and two layers, both
directions, batch_first, no bias, given or zero initial states, and outputs of which only some
are used; double backward through it differentiates the reference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn.modules import rnn

_TOL = {lucid.float64: 1e-12, lucid.float32: 2e-6}


def _run(m: nn.LSTM, x: lucid.Tensor, hx: Any, fused: bool,
         loss: Callable[..., lucid.Tensor]) -> list[np.ndarray]:  # fmt: skip
    """Outputs and gradients (input, states, parameters) with or without the fused op."""
    saved = rnn._fusable
    if not fused:
        rnn._fusable = lambda *a: False  # type: ignore[assignment]
    try:
        leaves = [x, *(hx or ()), *m.parameters()]
        for p in leaves:
            p.grad = None
        y, (hn, cn) = m(x, hx)
        loss(y, hn, cn).backward()
        outs = [t.detach().numpy().copy() for t in (y, hn, cn)]
        return outs + [np.zeros(1) if p.grad is None else p.grad.numpy().copy() for p in leaves]
    finally:
        rnn._fusable = saved


def _full(y: lucid.Tensor, hn: lucid.Tensor, cn: lucid.Tensor) -> lucid.Tensor:
    return y.sin().sum() + hn.cos().sum() + (cn * cn).sum()


def _y_only(y: lucid.Tensor, hn: lucid.Tensor, cn: lucid.Tensor) -> lucid.Tensor:
    return (y * y).sum()


def _cn_only(y: lucid.Tensor, hn: lucid.Tensor, cn: lucid.Tensor) -> lucid.Tensor:
    return cn.sum()


@pytest.mark.parametrize("dtype", [lucid.float64, lucid.float32])
@pytest.mark.parametrize(
    ("layers", "bidirectional", "batch_first", "bias", "states"),
    [(2, False, False, True, True), (1, True, True, True, False), (2, True, False, False, True),
     (1, False, True, True, False)],
)  # fmt: skip
@pytest.mark.parametrize("loss", [_full, _y_only, _cn_only])
def test_fused_lstm_equals_the_reference(
    dtype: Any, layers: int, bidirectional: bool, batch_first: bool, bias: bool, states: bool,
    loss: Callable[..., lucid.Tensor],
) -> None:  # fmt: skip
    lucid.manual_seed(0)
    m = nn.LSTM(6, 5, layers, bias=bias, bidirectional=bidirectional, batch_first=batch_first)
    m = m.to(dtype)
    n, length = 3, 7
    x = lucid.randn(*((n, length) if batch_first else (length, n)), 6, dtype=dtype)
    x.requires_grad_()
    hx = None
    if states:
        d = layers * (2 if bidirectional else 1)
        hx = tuple(lucid.randn(d, n, 5, dtype=dtype).requires_grad_() for _ in range(2))
    got, want = _run(m, x, hx, True, loss), _run(m, x, hx, False, loss)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=_TOL[dtype], atol=_TOL[dtype], err_msg=f"item {k}")


def test_the_fused_op_is_what_runs_and_the_packed_path_is_not() -> None:
    m = nn.LSTM(4, 3)
    y, _ = m(lucid.randn(5, 2, 4))
    assert y.grad_fn is not None and "Stack" not in type(y.grad_fn).__name__
    assert type(y.grad_fn).__name__.startswith("_FusedLSTM")
    packed = nn.utils.rnn.pack_padded_sequence(lucid.randn(5, 2, 4), lucid.tensor([5, 3]))
    out, _ = m(packed)
    assert not type(out.data.grad_fn).__name__.startswith("_FusedLSTM")


def test_double_backward_through_the_fused_lstm_matches_the_reference() -> None:
    lucid.manual_seed(1)
    m = nn.LSTM(3, 4).double()
    x = lucid.randn(5, 2, 3, dtype=lucid.float64)

    def second(fused: bool) -> list[np.ndarray]:
        saved = rnn._fusable
        if not fused:
            rnn._fusable = lambda *a: False  # type: ignore[assignment]
        try:
            xx = x.detach().requires_grad_()
            y, _ = m(xx)
            (gx,) = lucid.autograd.grad((y * y).sum(), xx, create_graph=True)
            params = list(m.parameters())
            grads = lucid.autograd.grad((gx * gx).sum(), [xx, *params])
            return [g.numpy() for g in grads]
        finally:
            rnn._fusable = saved

    for a, b in zip(second(True), second(False)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_gradients_by_finite_differences_in_float64() -> None:
    lucid.manual_seed(2)
    m = nn.LSTM(2, 3, bidirectional=True).double()
    x = lucid.randn(4, 2, 2, dtype=lucid.float64, requires_grad=True)

    def f(inp: lucid.Tensor) -> lucid.Tensor:
        y, (hn, cn) = m(inp)
        return y.sum() + hn.sum() + cn.sum()

    assert lucid.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_two_threads_give_one_threads_results(mode: str) -> None:
    # word_language_model's shape (35 steps, batch 20, 200 -> 200): at two threads the
    # all-step products split on lucid's pool, the per-step ones stay on one BLAS thread
    lucid.manual_seed(0)
    m = getattr(nn, mode)(200, 200, 2)
    x = lucid.randn(35, 20, 200, requires_grad=True)

    def run() -> list[np.ndarray]:
        for p in (x, *m.parameters()):
            p.grad = None
        y, _ = m(x)
        (y * y).sum().backward()
        grads = [p.grad for p in (x, *m.parameters())]
        return [y.detach().numpy().copy()] + [g.numpy().copy() for g in grads if g is not None]

    saved = lucid.get_num_threads()
    try:
        lucid.set_num_threads(1)
        one = run()
        lucid.set_num_threads(2)
        two = run()
    finally:
        lucid.set_num_threads(saved)
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)
