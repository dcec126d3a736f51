"""lucid.compile's fused first convolution and max pooling (``_fused_conv.ConvMaxPool``):
values and gradients against eager code and a float64 oracle, the NumPy fallback, and where
the rewrite must not apply."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.backends._numpy import _compiled
from lucid.compiler import _fused_conv

FUSED = _fused_conv.REWRITE
needs_numba = pytest.mark.skipif(
    not _compiled.available("_convpool_jit"), reason="needs lucid-core[numba]"
)


def _arrays_of(net: nn.Module) -> Any:
    return net._compiled_call_impl.log[0].program.arrays  # type: ignore[union-attr]


def _fused(net: nn.Module) -> list[str]:
    """The program's ConvMaxPool rewrite lines (one, with the inexact bias note or not)."""
    return [line for line in _arrays_of(net).rewrites if line.startswith(FUSED)]


def _net(cin: int, k: int, pad: int, pool: int, bias: bool, hw: int) -> nn.Sequential:
    conv = nn.Conv2d(cin, 3, k, padding=pad, bias=bias)
    side = (hw + 2 * pad - k + 1) // pool
    return nn.Sequential(conv, nn.ReLU(), nn.MaxPool2d(pool), nn.Flatten(),
                         nn.Linear(3 * side * side, 4))  # fmt: skip


def _grad(p: lucid.Tensor) -> np.ndarray:
    assert p.grad is not None
    return np.array(p.grad.numpy())


def _steps(net: nn.Module, x: lucid.Tensor, g: lucid.Tensor, n: int = 3) -> list[np.ndarray]:
    """Output and parameter gradients of the ``n``-th call (compiled: the capture, the traced
    backward, then the recorded one)."""
    got: list[np.ndarray] = []
    for _ in range(n):
        net.zero_grad()
        y = net(x)
        (y * g).sum().backward()
        got = [y.detach().numpy()] + [_grad(p) for p in net.parameters()]
    return got


@needs_numba
@pytest.mark.parametrize(
    ("k", "pad", "pool", "bias", "hw"),
    [
        (5, 2, 2, True, 12),  # LeNet-5's conv1
        (3, 0, 2, False, 9),  # an odd output (7 x 7): a row and a column no window covers
        (3, 1, 3, True, 10),
    ],  # fmt: skip
)
@pytest.mark.parametrize("exact", [True, False])
def test_conv_max_pool_fused_against_eager_and_float64(
    k: int, pad: int, pool: int, bias: bool, hw: int, exact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fused_conv, "EXACT", exact)
    lucid.manual_seed(0)
    net = _net(1, k, pad, pool, bias, hw)
    x, g = lucid.randn(5, 1, hw, hw), lucid.randn(5, 4)
    oracle = [a.astype(np.float64) for a in _steps(net.double(), x.double(), g.double(), 1)]
    net.float()
    want = _steps(net, x, g)
    net.compile()
    got = _steps(net, x, g)
    assert _fused(net) == [FUSED + ("" if exact else _fused_conv.INEXACT_NOTE)]
    assert "ConvMaxPool" in _arrays_of(net).opaque
    np.testing.assert_array_equal(got[0], want[0])  # the forward: the same bits
    np.testing.assert_array_equal(got[1], want[1])  # conv's weight gradient: eager's loop
    for a, b, o in zip(got, want, oracle):
        if exact:  # the gradients too
            np.testing.assert_array_equal(a, b)
        else:  # sums in another order
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a, o, rtol=1e-4, atol=1e-5)


@needs_numba
def test_fused_in_float64_is_the_eager_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fused_conv, "EXACT", True)  # eager's bits, the bias sum included
    lucid.manual_seed(1)
    net = _net(1, 5, 2, 2, True, 12).double()
    x, g = lucid.randn(4, 1, 12, 12).double(), lucid.randn(4, 4).double()
    want = _steps(net, x, g)
    net.compile()
    got = _steps(net, x, g)
    assert len(_fused(net)) == 1
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@needs_numba
def test_ties_and_nan_pick_the_eager_winner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fused_conv, "EXACT", True)  # eager's bits, the bias sum included
    lucid.manual_seed(2)
    net = _net(1, 3, 1, 2, True, 8)
    with lucid.no_grad():
        net[0].weight.zero_()  # every window ties: the first tap wins, as eager's pool
    x, g = lucid.randn(3, 1, 8, 8), lucid.randn(3, 4)
    x[0, 0, 3, 3] = float("nan")
    want = _steps(net, x, g)
    net.compile()
    got = _steps(net, x, g)
    assert len(_fused(net)) == 1
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)  # (NaN where eager has NaN)


def test_not_fused_without_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lucid.backends.cpu, "numba_enabled", False)
    lucid.manual_seed(0)
    net = _net(1, 5, 2, 2, True, 12)
    x, g = lucid.randn(2, 1, 12, 12), lucid.randn(2, 4)
    want = _steps(net, x, g)
    net.compile()
    for a, b in zip(_steps(net, x, g), want):
        np.testing.assert_array_equal(a, b)
    assert not _fused(net)


@pytest.mark.parametrize("case", ["input grad", "channels", "stride", "overlap"])
def test_where_the_rewrite_does_not_apply(case: str) -> None:
    lucid.manual_seed(0)
    cin = 2 if case == "channels" else 1
    conv = nn.Conv2d(cin, 3, 3, stride=2 if case == "stride" else 1)
    pool = nn.MaxPool2d(3, 2) if case == "overlap" else nn.MaxPool2d(2)
    net = nn.Sequential(conv, nn.ReLU(), pool)
    x = lucid.randn(2, cin, 11, 11, requires_grad=case == "input grad")
    net.compile()
    for _ in range(2):
        net(x).sum().backward()
    assert not _fused(net)


@needs_numba
@pytest.mark.parametrize(("k", "pad", "pool", "hw"), [(5, 2, 2, 12), (3, 0, 2, 9), (3, 1, 3, 10)])
@pytest.mark.parametrize("exact", [True, False])
def test_numpy_fallback_matches_the_compiled_pass(
    k: int, pad: int, pool: int, hw: int, exact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With numba gone after the program was built, the op computes in NumPy: the same
    pooled values and taps (to float rounding), and the same gradients."""
    monkeypatch.setattr(_fused_conv, "EXACT", exact)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 1, hw, hw)).astype(np.float32)
    w = rng.standard_normal((4, 1, k, k)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    padding, pools = ((pad, pad), (pad, pad)), (pool, pool)

    class Ctx:
        needs_input_grad = (False, True, True, False, False)

    c = Ctx()
    y = _fused_conv.ConvMaxPool.forward(c, x, w, b, padding, pools)
    assert c.kernel == "numba"  # type: ignore[attr-defined]
    xpad = _fused_conv._padded(x, padding)
    wm = w.reshape(4, k * k)
    out, idx = _fused_conv._numpy_forward(xpad, wm, b, (k, k), pools, np.float32)
    np.testing.assert_allclose(np.transpose(out, (0, 3, 1, 2)), y, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(idx, c.idx)  # type: ignore[attr-defined]
    g = rng.standard_normal(y.shape).astype(np.float32)
    gt = lucid.from_numpy(g)
    gw, gb = _fused_conv.ConvMaxPool.backward(c, gt)[1:3]
    gl = np.ascontiguousarray(np.transpose(g, (0, 2, 3, 1)))
    dw, db = _fused_conv._numpy_weight(xpad, gl, idx, (k, k), pools)
    np.testing.assert_allclose(gw.numpy(), dw.reshape(w.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gb.numpy(), db, rtol=1e-5, atol=1e-5)
    # and both against a float64 oracle: the convolution, pooled at the same taps
    x64, w64 = xpad.astype(np.float64), w.astype(np.float64)
    oh = hw + 2 * pad - k + 1
    conv = np.zeros((3, 4, oh, oh))
    for u in range(k):
        for v in range(k):
            conv += x64[:, None, u : u + oh, v : v + oh] * w64[None, :, 0, u, v, None, None]
    conv += b.astype(np.float64)[None, :, None, None]
    q = oh // pool
    win = conv[:, :, : q * pool, : q * pool].reshape(3, 4, q, pool, q, pool)
    np.testing.assert_allclose(y, win.max(axis=(3, 5)), rtol=1e-5, atol=1e-5)
    dy = np.zeros_like(conv)
    ti = np.transpose(c.idx, (0, 3, 1, 2))  # type: ignore[attr-defined]
    for i in range(q):
        for j in range(q):
            a, bb = np.divmod(ti[:, :, i, j], pool)
            n_, o_ = np.meshgrid(range(3), range(4), indexing="ij")
            dy[n_, o_, i * pool + a, j * pool + bb] = g[:, :, i, j]
    dw64 = np.array([[(dy[:, o] * x64[:, u : u + oh, v : v + oh]).sum() for u in range(k)
                      for v in range(k)] for o in range(4)])  # fmt: skip
    np.testing.assert_allclose(gw.numpy().reshape(4, -1), dw64, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb.numpy(), g.astype(np.float64).sum(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


@needs_numba
def test_batch_split_over_numba_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pass split over numba's threads (where this machine has two cores): eager
    code's bits (its split of the weight gradient's sums)."""
    from lucid.backends._numpy import _numba  # imports numba: only where it is installed

    monkeypatch.setattr(_numba, "SPLIT_ELEMENTS", 0)
    monkeypatch.setattr(_fused_conv, "EXACT", True)  # eager's bits, the bias sum included
    lucid.manual_seed(3)
    net = _net(1, 5, 2, 2, True, 12)
    x, g = lucid.randn(6, 1, 12, 12), lucid.randn(6, 4)
    want = _steps(net, x, g)
    net.compile()
    got = _steps(net, x, g)
    assert len(_fused(net)) == 1
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@needs_numba
def test_a_program_keeps_the_mode_it_was_captured_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """``EXACT`` is read at capture: changed afterwards, the program's gradients do not move
    (the exact program keeps eager's bits; the default one its float64 bias sum)."""
    lucid.manual_seed(4)
    x, g = lucid.randn(4, 1, 12, 12), lucid.randn(4, 4)
    for exact in (True, False):
        monkeypatch.setattr(_fused_conv, "EXACT", exact)
        net = _net(1, 5, 2, 2, True, 12)
        want = _steps(net, x, g)
        net.compile()
        first = _steps(net, x, g)
        monkeypatch.setattr(_fused_conv, "EXACT", not exact)
        later = _steps(net, x, g)
        for a, b in zip(later, first):
            np.testing.assert_array_equal(a, b)
        if exact:
            for a, b in zip(first, want):
                np.testing.assert_array_equal(a, b)
