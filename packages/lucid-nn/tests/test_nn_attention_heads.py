"""scaled_dot_product_attention's forward through ``kernels.ATTENTION`` (NumPy with
``lucid-core[numba]``: one compiled pass over whole heads, float32): that it runs where it
should, the values and gradients against PyTorch and against the NumPy passes it replaces, and
the result's layout (torch's: a GPT's head merge copies nothing)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.backends import cpu

pytest.importorskip("numba")
if not cpu.numba_enabled:
    pytest.skip("the compiled kernels are switched off (LUCID_NUMBA=0)", allow_module_level=True)

from lucid.backends._numpy.kernels import attention as kernel  # noqa: E402


def _qkv(b: int, t: int, h: int, d: int, seed: int) -> tuple[np.ndarray, Any, Any]:
    """A fused projection's output (b, t, 3hd) and its heads split as a GPT splits them."""
    x = np.random.default_rng(seed).standard_normal((b, t, 3 * h * d)).astype(np.float32)
    lx = lucid.from_numpy(x.copy()).requires_grad_()
    heads = [z.view(b, t, h, d).transpose(1, 2) for z in lx.split(h * d, dim=2)]
    return x, lx, heads


def _count(monkeypatch: pytest.MonkeyPatch, back: list[bool] | None = None) -> list[bool]:
    """The forward kernel's answers (True: it ran), the backward's into ``back``."""
    took: list[bool] = []
    real = kernel.CpuAttention.forward
    monkeypatch.setattr(kernel.CpuAttention, "forward",
                        staticmethod(lambda *a: took.append(real(*a)) or took[-1]))  # fmt: skip
    if back is not None:
        real_back = kernel.CpuAttention.backward

        def backward(*a: Any) -> Any:
            made = real_back(*a)
            back.append(made is not None)
            return made

        monkeypatch.setattr(kernel.CpuAttention, "backward", staticmethod(backward))
    return took


def test_the_heads_kernel_runs_and_the_head_merge_copies_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    took = _count(monkeypatch)
    b, t, h, d = 2, 8, 3, 4
    _, _, (q, k, v) = _qkv(b, t, h, d, 0)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert took == [True]
    # torch's CPU kernel lays the result out as the query: (b, t, h, d) seen as (b, h, t, d)
    assert y._data.strides == (t * h * d * 4, d * 4, h * d * 4, 4)
    merged = y.transpose(1, 2).contiguous().view(b, t, h * d)
    assert np.shares_memory(merged._data, y._data)
    with lucid.no_grad():  # the no-grad path takes the kernel too
        F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert took == [True, True]
    # a contiguous query gives a contiguous result
    qc, kc, vc = (z.contiguous() for z in (q, k, v))
    assert F.scaled_dot_product_attention(qc, kc, vc)._data.flags.c_contiguous


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape", [(12, 4, 64, 32), (3, 2, 9, 8), (1, 4, 1, 32)])
def test_the_heads_kernel_agrees_with_the_passes_it_replaces(
    shape: tuple[int, int, int, int], causal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forward and every gradient within float32 rounding of the NumPy passes (the kernel's
    own ``exp`` and its scaling inside the product differ in the last bits); the gradients
    come back in the inputs' layout, so a head split's way back to the projection is views."""
    b, h, t, d = shape

    def run() -> list[np.ndarray]:
        _, lx, (q, k, v) = _qkv(b, t, h, d, sum(shape))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        merged = y.transpose(1, 2).contiguous().view(b, t, h * d)
        (merged * merged).sum().backward()
        assert lx.grad is not None
        return [y.detach().numpy(), lx.grad.numpy()]

    back: list[bool] = []
    took = _count(monkeypatch, back)
    heads = run()
    assert took and all(took) and back == [True]
    monkeypatch.setattr(kernel, "COMPILED_HEADS", False)
    passes = run()
    for a, p in zip(heads, passes):
        np.testing.assert_allclose(a, p, rtol=1e-5, atol=1e-5 * np.abs(p).max())


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False), (False, False, True),
                                   (False, True, True)])  # fmt: skip
def test_the_heads_kernel_makes_only_the_gradients_asked_for(
    needs: tuple[bool, bool, bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(21)
    arrays = [rng.standard_normal((2, 3, 7, 4)).astype(np.float32) for _ in range(3)]
    g = rng.standard_normal((2, 3, 7, 4)).astype(np.float32)

    def run() -> list[Any]:
        ts = [lucid.from_numpy(a.copy()).requires_grad_(n) for a, n in zip(arrays, needs)]
        F.scaled_dot_product_attention(*ts, is_causal=True).backward(lucid.from_numpy(g))
        return [None if t.grad is None else t.grad.numpy() for t in ts]

    back: list[bool] = []
    _count(monkeypatch, back)
    heads = run()
    assert back == [True]
    monkeypatch.setattr(kernel, "COMPILED_HEADS", False)
    passes = run()
    for a, p, n in zip(heads, passes, needs):
        assert (a is None) == (p is None) == (not n)
        if n:
            np.testing.assert_allclose(a, p, rtol=1e-5, atol=1e-6)


def test_float64_and_other_inputs_keep_the_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    took = _count(monkeypatch)
    q = lucid.randn(2, 3, 5, 4, dtype=lucid.float64)
    F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert took == [False]  # float64: declined, the passes ran


def test_compiled_and_eager_give_the_same_bits() -> None:
    """A capture records the attention as one op: a replay runs the same kernel."""

    def block(x: lucid.Tensor) -> lucid.Tensor:
        b, t, e = x.shape
        q, k, v = (z.view(b, t, 2, e // 6).transpose(1, 2) for z in x.split(e // 3, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).contiguous().view(b, t, e // 3)

    x = np.random.default_rng(9).standard_normal((3, 16, 48)).astype(np.float32)
    compiled = lucid.compile(block)
    for _ in range(2):  # capture, then replay
        ex = lucid.from_numpy(x.copy()).requires_grad_()
        cx = lucid.from_numpy(x.copy()).requires_grad_()
        e, c = block(ex), compiled(cx)
        (e * e).sum().backward()
        (c * c).sum().backward()
        assert ex.grad is not None and cx.grad is not None
        np.testing.assert_array_equal(c.detach().numpy(), e.detach().numpy())
        np.testing.assert_array_equal(cx.grad.numpy(), ex.grad.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("t", [33, 100])  # 100: causal heads in blocks of queries
@pytest.mark.parametrize("causal", [True, False])
def test_the_heads_kernel_against_pytorch(causal: bool, t: int) -> None:
    torch = pytest.importorskip("torch")
    b, h, d = 4, 4, 16
    x, lx, (q, k, v) = _qkv(b, t, h, d, 11)
    tx = torch.from_numpy(x.copy()).requires_grad_()
    tq, tk, tv = (z.view(b, t, h, d).transpose(1, 2) for z in tx.split(h * d, dim=2))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    assert tuple(ty.stride()) == tuple(s // 4 for s in y._data.strides)  # the same layout
    g = np.random.default_rng(12).standard_normal((b, h, t, d)).astype(np.float32)
    y.backward(lucid.from_numpy(g))
    ty.backward(torch.from_numpy(g))
    assert lx.grad is not None and tx.grad is not None
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
