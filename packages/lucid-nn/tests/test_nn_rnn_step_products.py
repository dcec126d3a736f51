"""word_language_model's recurrent layers (2 x 200 -> 200, 35 steps, batch 20) in float32,
where the NumPy backend's fused layers run their per-step products as column blocks on
OpenBLAS's small-matrix kernels (cores that have them; issue 30): the recorded forward and the
no-grad one give the same bits, and outputs and gradients match lucid's reference cells (the
ops the fused layer replaces) and a float64 run within float32 rounding (rtol and atol)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn.modules import rnn

_RTOL, _ATOL = 1e-4, 1e-5


def _model(mode: str) -> tuple[nn.Module, lucid.Tensor]:
    lucid.manual_seed(0)
    m = getattr(nn, mode)(200, 200, 2)
    x = lucid.randn(35, 20, 200)
    return m, x


def _run(m: nn.Module, x: lucid.Tensor, fused: bool = True) -> list[np.ndarray]:
    saved = rnn._fusable
    if not fused:
        rnn._fusable = lambda *a: False  # type: ignore[assignment]
    try:
        xx = x.detach().requires_grad_()
        for p in m.parameters():
            p.grad = None
        y, h = m(xx)
        hn = h[0] if isinstance(h, tuple) else h
        ((y * y).sum() + hn.sum()).backward()
        grads = [xx.grad, *(p.grad for p in m.parameters())]
        return [y.detach().numpy().copy()] + [g.numpy().copy() for g in grads]  # type: ignore[union-attr]
    finally:
        rnn._fusable = saved


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_no_grad_forward_gives_the_recorded_bits(mode: str) -> None:
    m, x = _model(mode)
    y, h = m(x.detach().requires_grad_())
    with lucid.no_grad():
        y0, h0 = m(x)
    np.testing.assert_array_equal(y.detach().numpy(), y0.numpy())
    for a, b in zip(h if isinstance(h, tuple) else (h,), h0 if isinstance(h0, tuple) else (h0,)):
        np.testing.assert_array_equal(a.detach().numpy(), b.numpy())


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_fused_float32_matches_the_reference_and_float64(mode: str) -> None:
    m, x = _model(mode)
    fused = _run(m, x)
    reference = _run(m, x, fused=False)
    oracle = _run(m.double(), x.double())
    for k, (a, b, o) in enumerate(zip(fused, reference, oracle)):
        assert a.dtype == np.float32 and o.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=_RTOL, atol=_ATOL, err_msg=f"item {k}")
        np.testing.assert_allclose(a, o, rtol=_RTOL, atol=_ATOL, err_msg=f"item {k}")
