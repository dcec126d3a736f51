"""``F.linear``'s plain backward on the arrays (no ``create_graph``) gives the op-level
backward's gradients bit for bit: the same array calls, without a Function call per product."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

linear_module = importlib.import_module("lucid.nn.functional.linear")


def _grads(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, g: np.ndarray,
           needs: tuple[bool, bool, bool]) -> list[np.ndarray | None]:  # fmt: skip
    xt, wt = lucid.from_numpy(x.copy()), lucid.from_numpy(w.copy())
    bt = None if b is None else lucid.from_numpy(b.copy())
    ts = [xt, wt, bt]
    for t, need in zip(ts, needs):
        if t is not None and need:
            t.requires_grad_()
    F.linear(xt, wt, bt).backward(lucid.from_numpy(g))
    return [None if t is None or t.grad is None else t.grad.numpy().copy() for t in ts]


@pytest.mark.parametrize("lead", [(1,), (7,), (3, 5), (2, 1, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("needs", [(True, True, True), (False, True, True), (True, False, False)])
def test_array_backward_equals_the_ops(lead: tuple[int, ...], dtype: str,
                                       needs: tuple[bool, bool, bool],
                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    rng = np.random.default_rng(0)
    x = rng.standard_normal((*lead, 13)).astype(dtype)
    w = rng.standard_normal((6, 13)).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)
    g = rng.standard_normal((*lead, 6)).astype(dtype)
    for bias in (b, None):
        got = _grads(x, w, bias, g, needs)
        with monkeypatch.context() as m:
            m.setattr(linear_module, "_plain", lambda *_: False)  # the op-level backward
            want = _grads(x, w, bias, g, needs)
        for a, e in zip(got, want):
            assert (a is None) == (e is None)
            if a is not None and e is not None:
                assert a.dtype == e.dtype and a.shape == e.shape
                np.testing.assert_array_equal(a, e)


def test_create_graph_still_records_the_ops() -> None:
    x = lucid.randn(4, 3, dtype=lucid.float64, requires_grad=True)
    w = lucid.randn(2, 3, dtype=lucid.float64, requires_grad=True)
    (gx,) = lucid.autograd.grad(F.linear(x, w).pow(2).sum(), x, create_graph=True)
    assert gx.grad_fn is not None
    (gw,) = lucid.autograd.grad(gx.sum(), w)
    xa, wa = x.detach().numpy(), w.detach().numpy()
    # sum(2 (x w^T) w) by w: 2 (colsum(x)_j rowsum(w)_k + colsum(x w^T)_k)
    want = 2 * (np.outer(wa.sum(1), xa.sum(0)) + (xa @ wa.T).sum(0)[:, None])
    np.testing.assert_allclose(gw.numpy(), want, rtol=1e-12, atol=1e-12)
