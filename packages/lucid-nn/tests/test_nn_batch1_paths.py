"""A batch-1 model's short paths (a char-RNN's Linears, its nll_loss of log_softmax): the
same bits, node names, checks and errors as the general routes they skip (issue 30)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

linear_module = importlib.import_module("lucid.nn.functional.linear")


def _bytes(t: lucid.Tensor | None) -> bytes:
    assert t is not None
    return t.detach().numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
def test_one_row_forward_is_the_general_route(dtype: str, bias: bool) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 37)).astype(dtype)
    w = rng.standard_normal((11, 37)).astype(dtype)
    b = rng.standard_normal(11).astype(dtype) if bias else None
    xt = lucid.from_numpy(x).requires_grad_()
    wt, bt = lucid.from_numpy(w), None if b is None else lucid.from_numpy(b)
    out = F.linear(xt, wt, bt)
    xp = xt._backend.xp
    want = linear_module._product_bias(xp, x, w, b)
    assert out.shape == (1, 11) and out.dtype == xt.dtype
    assert _bytes(out) == want.tobytes()
    assert out.grad_fn.name() == ("AddmmBackward0" if bias else "MmBackward0")
    # and as the no-grad forward gives it
    with lucid.no_grad():
        assert _bytes(F.linear(xt, wt, bt)) == want.tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lead", [(1,), (1, 1), (3,)])
def test_one_row_bias_gradient_is_the_reduction(
    dtype: str, lead: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # -0.0 sums to 0.0 in NumPy's reduction (its identity is added): the short path keeps that
    rng = np.random.default_rng(1)
    x = rng.standard_normal((*lead, 5)).astype(dtype)
    w = rng.standard_normal((4, 5)).astype(dtype)
    b = rng.standard_normal(4).astype(dtype)
    g = rng.standard_normal((*lead, 4)).astype(dtype)
    g.reshape(-1, 4)[0, :3] = (-0.0, np.nan, -np.inf)

    def grads() -> list[bytes]:
        ts = [lucid.from_numpy(a.copy()).requires_grad_() for a in (x, w, b)]
        F.linear(*ts).backward(lucid.from_numpy(g.copy()))
        return [_bytes(t.grad) for t in ts]

    got = grads()
    assert got[2] == np.add.reduce(g.reshape(-1, 4), axis=(0,)).tobytes()
    with monkeypatch.context() as m:
        m.setattr(linear_module, "_plain", lambda *_: False)  # the op-level backward
        assert grads() == got


def test_linear_layer_checks_are_unchanged() -> None:
    lin = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="Linear expected a lucid.Tensor as input, got list"):
        lin([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="expected input of dtype lucid.float32"):
        lin(lucid.ones(1, 3, dtype=lucid.float64))
    with pytest.raises(ValueError, match="Linear expected input with 3 features"):
        lin(lucid.ones(1, 4))


def test_module_attribute_lookup_order() -> None:
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(lucid.ones(2))
            self.register_buffer("buf", lucid.zeros(2))
            self.sub = nn.Linear(2, 2)

    m = M()
    assert m.w is m._parameters["w"]
    assert m.buf is m._buffers["buf"]
    assert m.sub is m._modules["sub"]
    m.register_parameter("p", None)
    assert m.p is None
    with pytest.raises(AttributeError, match="'M' object has no attribute 'missing'"):
        _ = m.missing


@pytest.mark.parametrize("m", [1, 2, 7])
def test_nll_of_log_softmax_small_gradients(m: int) -> None:
    # the small one-hot gradient now takes the dense formula: the same bits as the sparse one
    rng = np.random.default_rng(2)
    x = lucid.from_numpy(rng.standard_normal((m, 18)).astype(np.float32)).requires_grad_()
    target = lucid.from_numpy(rng.integers(0, 18, m))
    F.nll_loss(F.log_softmax(x, 1), target).backward()
    y = F.log_softmax(x.detach(), 1).numpy()
    g = np.zeros((m, 18), dtype=np.float32)
    g[np.arange(m), target.numpy()] = np.float32(-1.0) / np.float32(m)
    want = np.subtract(g, np.multiply(np.exp(y), np.add.reduce(g, axis=1, keepdims=True)))
    assert x.grad.numpy().tobytes() == want.tobytes()


@pytest.mark.parametrize("shape", [(1, 18), (4, 5), (2, 3, 4), (7,)])
@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.float16])
def test_log_softmax_direct_route_is_the_op(shape: tuple[int, ...], dtype: lucid.dtype) -> None:
    x = lucid.randn(*shape).to(dtype).requires_grad_()
    for dim in range(-len(shape), len(shape)):
        got = F.log_softmax(x, dim)
        want = lucid.log_softmax(x, dim)
        assert _bytes(got) == _bytes(want) and got.dtype == want.dtype
        assert got.grad_fn.name() == want.grad_fn.name() == "LogSoftmaxBackward0"
        assert got.grad_fn.dim == want.grad_fn.dim
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.log_softmax(x, len(shape))
    with pytest.raises(RuntimeError, match="expected a floating point input"):
        F.log_softmax(lucid.ones(2, 3, dtype=lucid.int64), 1)
    assert F.log_softmax(x, -1, dtype=lucid.float64).dtype == lucid.float64
