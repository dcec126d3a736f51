"""lucid.compile's GELU that keeps its slope (``_fused_gelu.GeluSlope``): eager code's values
and gradients bit for bit, with numba's kernels and where they stop loading."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.backends._numpy import _compiled

SLOPE = "gelu ran keeping its slope for the backward"
needs_numba = pytest.mark.skipif(
    not _compiled.available("_gelu_slope_jit"), reason="needs lucid-core[numba]"
)


def _arrays_of(net: nn.Module) -> Any:
    return net._compiled_call_impl.log[0].program.arrays  # type: ignore[union-attr]


def _grad(p: lucid.Tensor) -> np.ndarray:
    assert p.grad is not None
    return np.array(p.grad.numpy())


def _mlp(approximate: str = "none") -> nn.Sequential:
    return nn.Sequential(nn.Linear(16, 64), nn.GELU(approximate), nn.Linear(64, 8))


def _steps(net: nn.Module, x: lucid.Tensor, g: lucid.Tensor) -> list[np.ndarray]:
    got: list[np.ndarray] = []
    for _ in range(3):  # the capture, the traced backward, the recorded one
        net.zero_grad()
        y = net(x)
        (y * g).sum().backward()
        got = [y.detach().numpy()] + [_grad(p) for p in net.parameters()]
    return got


@needs_numba
@pytest.mark.parametrize("rows", [4, 5000])  # 5000 x 64: several of the slope pass's blocks
def test_gelu_slope_is_eager_bit_for_bit(rows: int) -> None:
    lucid.manual_seed(0)
    net = _mlp()
    x, g = lucid.randn(rows, 16) * 2, lucid.randn(rows, 8)
    want = _steps(net, x, g)
    net.compile()
    got = _steps(net, x, g)
    assert SLOPE in _arrays_of(net).rewrites
    assert "GeluSlope" in _arrays_of(net).opaque
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@needs_numba
def test_gelu_slope_after_numba_stops_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built with numba's kernels, replayed without them: eager code's NumPy values."""
    lucid.manual_seed(1)
    net = _mlp()
    x, g = lucid.randn(40, 16), lucid.randn(40, 8)
    net.compile()
    _steps(net, x, g)
    assert SLOPE in _arrays_of(net).rewrites
    monkeypatch.setattr(lucid.backends.cpu, "numba_enabled", False)
    got = _steps(net, x, g)
    lucid.manual_seed(1)
    want = _steps(_mlp(), x, g)  # the same weights, eager
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", ["tanh", "float64", "no grad", "no numba", "small"])
def test_where_gelu_keeps_its_op(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if case == "no numba":
        monkeypatch.setattr(lucid.backends.cpu, "numba_enabled", False)
    lucid.manual_seed(0)
    net = _mlp("tanh" if case == "tanh" else "none")
    x = lucid.randn(3 if case == "small" else 4, 16)  # 3 x 64: eager takes ufunc code
    if case == "float64":
        net, x = net.double(), x.double()
    net.compile()
    if case == "no grad":
        with lucid.no_grad():
            net(x)
    else:
        for _ in range(2):
            net(x).sum().backward()
    assert SLOPE not in _arrays_of(net).rewrites
