"""scaled_dot_product_attention's result layout off the one-node path (``_reference``: float16,
bfloat16, an ``attn_mask``), its float32 computation of half-precision inputs (``_upcast``),
and ``lucid.nn.attention.bias`` (``CausalBias``), against PyTorch: values, gradients and the
layout-dependent ``y.transpose(1, 2).view(...)`` of a GPT's head merge.

Tolerances (every float comparison has both): float32 atol=rtol=1e-5; float16 atol=rtol=2e-3
(two units in the last place near 1: torch rounds its float32 softmax weights to half before
the product with v, lucid rounds only the result); bfloat16 atol=rtol=2e-2 (its ulp is 8x
float16's); the half types' gradients get 4x those (torch's backward rounds more
intermediates)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.nn.attention import bias as lbias
from lucid.nn.functional import attention as attention_mod

torch = pytest.importorskip("torch")
import torch.nn.attention.bias as tbias  # noqa: E402

pytestmark = pytest.mark.parity

B, T, H, E = 2, 5, 4, 8
_TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}
_GRAD_TOL = {"float32": 1e-4, "float16": 8e-3, "bfloat16": 8e-2}


def _dtypes(name: str) -> tuple[Any, Any]:
    return getattr(lucid, name), getattr(torch, name)


def _inputs(name: str, shape: tuple[int, ...], seed: int) -> tuple[Any, Any]:
    """The same values as a lucid and a torch leaf of dtype ``name`` (exact in that dtype)."""
    ld, td = _dtypes(name)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x = torch.from_numpy(x).to(td).float().numpy()  # representable in the half types
    lx = lucid.from_numpy(x.copy()).to(ld).requires_grad_()
    tx = torch.from_numpy(x.copy()).to(td).requires_grad_()
    return lx, tx


def _heads(x: Any) -> list[Any]:
    """A fused projection (B, T, 3HE) split into heads as a GPT does: transposed views."""
    return [z.view(B, T, H, E).transpose(1, 2) for z in x.chunk(3, -1)]


def _np(t: Any) -> np.ndarray:
    if isinstance(t, lucid.Tensor):
        return t.detach().float().numpy()
    return t.detach().float().numpy()


def _close(a: Any, b: Any, tol: float) -> None:
    np.testing.assert_allclose(_np(a), _np(b), atol=tol, rtol=tol)


def _masks(kind: str, name: str) -> tuple[Any, Any]:
    if kind == "none":
        return None, None
    rng = np.random.default_rng(7)
    if kind == "bool":
        m = rng.random((T, T)) > 0.3
        m[:, 0] = True
        return lucid.from_numpy(m.copy()), torch.from_numpy(m.copy())
    m = rng.standard_normal((T, T)).astype(np.float32)
    ld, td = _dtypes(name)
    return lucid.from_numpy(m.copy()).to(ld), torch.from_numpy(m.copy()).to(td)


CASES = [
    ("float16", "none", False),
    ("float16", "none", True),
    ("bfloat16", "none", False),
    ("bfloat16", "none", True),
    ("float16", "bool", False),
    ("bfloat16", "float", False),
    ("float32", "bool", False),
    ("float32", "float", False),
]


@pytest.mark.parametrize("name,mask,causal", CASES)
def test_head_merge_view_values_and_grads_match_torch(name: str, mask: str, causal: bool) -> None:
    lx, tx = _inputs(name, (B, T, 3 * H * E), 0)
    lm, tm = _masks(mask, name)
    ly = F.scaled_dot_product_attention(*_heads(lx), attn_mask=lm, is_causal=causal)
    ty = torch.nn.functional.scaled_dot_product_attention(*_heads(tx), attn_mask=tm,
                                                          is_causal=causal)  # fmt: skip
    assert ly.dtype is _dtypes(name)[0]
    assert tuple(ly.stride()) == tuple(ty.stride())  # torch's (B, T, H, E) seen transposed
    lmerged = ly.transpose(1, 2).view(B, -1, H * E)  # raised before the fix
    tmerged = ty.transpose(1, 2).view(B, -1, H * E)
    _close(lmerged, tmerged, _TOL[name])
    w = np.random.default_rng(3).standard_normal((B, T, H * E)).astype(np.float32)
    (lmerged * lucid.from_numpy(w.copy()).to(lmerged.dtype)).sum().backward()
    (tmerged * torch.from_numpy(w.copy()).to(tmerged.dtype)).sum().backward()
    assert lx.grad is not None and lx.grad.dtype is lx.dtype
    _close(lx.grad, tx.grad, _GRAD_TOL[name])


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_contiguous_query_gives_a_contiguous_result(name: str) -> None:
    lq, tq = _inputs(name, (B, H, T, E), 1)
    lm, tm = _masks("bool", name)
    for lmask, tmask in ((None, None), (lm, tm)):
        ly = F.scaled_dot_product_attention(lq, lq, lq, attn_mask=lmask)
        ty = torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, attn_mask=tmask)
        assert tuple(ly.stride()) == tuple(ty.stride()) == (H * T * E, T * E, E, 1)
        _close(ly, ty, _TOL[name])


def test_dropout_result_is_contiguous_as_torchs_math_path() -> None:
    lx, tx = _inputs("float32", (B, T, 3 * H * E), 2)
    ly = F.scaled_dot_product_attention(*_heads(lx), dropout_p=0.5)
    ty = torch.nn.functional.scaled_dot_product_attention(*_heads(tx), dropout_p=0.5)
    assert tuple(ly.stride()) == tuple(ty.stride()) == (H * T * E, T * E, E, 1)


# -- half precision through the float32 one-node path -------------------------------------------
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("grad", [False, True])
def test_half_inputs_run_in_float32_without_the_reference(
    monkeypatch: pytest.MonkeyPatch, name: str, causal: bool, grad: bool
) -> None:
    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError("_reference ran")

    monkeypatch.setattr(attention_mod, "_reference", refuse)
    shape = (2, 3, 40, 16)
    lq, tq = _inputs(name, shape, 4)
    lk, tk = _inputs(name, shape, 5)
    lv, tv = _inputs(name, shape, 6)
    with lucid.set_grad_enabled(grad):
        ly = F.scaled_dot_product_attention(lq, lk, lv, is_causal=causal)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    assert ly.dtype is _dtypes(name)[0]
    assert tuple(ly.stride()) == tuple(ty.stride())
    _close(ly, ty, _TOL[name])
    if grad:
        g = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
        ly.backward(lucid.from_numpy(g.copy()).to(ly.dtype))
        ty.backward(torch.from_numpy(g.copy()).to(ty.dtype))
        for a, b in ((lq, tq), (lk, tk), (lv, tv)):
            assert a.grad is not None and a.grad.dtype is a.dtype
            _close(a.grad, b.grad, _GRAD_TOL[name])


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("mask", ["bool", "float"])
def test_half_inputs_with_a_mask_run_in_float32(
    monkeypatch: pytest.MonkeyPatch, name: str, mask: str
) -> None:
    """A half-precision call with an ``attn_mask`` takes the reference path in float32 (not in
    the half type): values and gradients as torch's within the half type's tolerance."""
    seen: list[Any] = []
    reference = attention_mod._reference

    def spy(q: Any, *a: Any, **k: Any) -> Any:
        seen.append(q.dtype)
        return reference(q, *a, **k)

    monkeypatch.setattr(attention_mod, "_reference", spy)
    shape = (2, 3, 24, 16)
    lq, tq = _inputs(name, shape, 14)
    lk, tk = _inputs(name, shape, 15)
    lv, tv = _inputs(name, shape, 16)
    keep = np.random.default_rng(17).random((24, 24)) > 0.3
    np.fill_diagonal(keep, True)  # no query without keys
    if mask == "bool":
        lm, tm = lucid.from_numpy(keep.copy()), torch.from_numpy(keep.copy())
    else:
        add = np.where(keep, 0.0, -1e4).astype(np.float32)
        lm = lucid.from_numpy(add.copy()).to(_dtypes(name)[0])
        tm = torch.from_numpy(add.copy()).to(_dtypes(name)[1])
    ly = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=lm)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    assert seen == [lucid.float32] and ly.dtype is _dtypes(name)[0]
    _close(ly, ty, _TOL[name])
    g = np.random.default_rng(18).standard_normal(shape).astype(np.float32)
    ly.backward(lucid.from_numpy(g.copy()).to(ly.dtype))
    ty.backward(torch.from_numpy(g.copy()).to(ty.dtype))
    for a, b in ((lq, tq), (lk, tk), (lv, tv)):
        assert a.grad is not None and a.grad.dtype is a.dtype
        _close(a.grad, b.grad, _GRAD_TOL[name])


def test_half_gqa_and_big_heads_match_torch() -> None:
    lq, tq = _inputs("float16", (1, 4, 64, 32), 9)
    lk, tk = _inputs("float16", (1, 2, 64, 32), 10)
    ly = F.scaled_dot_product_attention(lq, lk, lk, is_causal=True, enable_gqa=True)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tk, is_causal=True,
                                                          enable_gqa=True)  # fmt: skip
    _close(ly, ty, _TOL["float16"])
    ly.sum().backward()
    ty.sum().backward()
    _close(lq.grad, tq.grad, _GRAD_TOL["float16"])
    _close(lk.grad, tk.grad, _GRAD_TOL["float16"])


# -- lucid.nn.attention.bias ---------------------------------------------------------------------
SIZES = [(3, 5), (4, 4), (5, 3)]  # L < S, L == S, L > S


def test_causal_variant_values() -> None:
    assert int(lbias.CausalVariant.UPPER_LEFT) == 1 == int(tbias.CausalVariant.UPPER_LEFT)
    assert int(lbias.CausalVariant.LOWER_RIGHT) == 2 == int(tbias.CausalVariant.LOWER_RIGHT)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias_materializes_as_torchs(size: tuple[int, int], variant: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = getattr(lbias, variant)(*size)
        tb = getattr(tbias, variant)(*size)
    assert isinstance(lb, lucid.Tensor) and isinstance(lb, lbias.CausalBias)
    assert (lb.variant, lb.seq_len_q, lb.seq_len_kv) == (int(tb.variant), *size)
    want = tb._materialize().numpy()
    assert lb.dtype is lucid.bool and tuple(lb.shape) == size
    np.testing.assert_array_equal(lb.numpy(), want)
    np.testing.assert_array_equal(lb._materialize().numpy(), want)
    offset = 0 if variant == "causal_upper_left" else size[1] - size[0]
    np.testing.assert_array_equal(want, np.tril(np.ones(size, dtype=bool), offset))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("name", ["float32", "float16"])
def test_causal_bias_attention_values_and_grads(size: tuple[int, int], variant: str,
                                                name: str) -> None:  # fmt: skip
    length, source = size
    lq, tq = _inputs(name, (2, 3, length, 8), 11)
    lk, tk = _inputs(name, (2, 3, source, 8), 12)
    lv, tv = _inputs(name, (2, 3, source, 6), 13)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = getattr(lbias, variant)(*size)
        tb = getattr(tbias, variant)(*size)
    ly = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=lb)
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tb)
    assert not np.isnan(_np(ly)).any()
    _close(ly, ty, _TOL[name])
    g = np.random.default_rng(14).standard_normal(tuple(ty.shape)).astype(np.float32)
    ly.backward(lucid.from_numpy(g.copy()).to(ly.dtype))
    ty.backward(torch.from_numpy(g.copy()).to(ty.dtype))
    for a, b in ((lq, tq), (lk, tk), (lv, tv)):
        _close(a.grad, b.grad, _GRAD_TOL[name])


def test_causal_bias_dispatch_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, bool]] = []
    real = attention_mod.scaled_dot_product_attention

    def spy(q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0,
            is_causal: bool = False, *rest: Any) -> Any:  # fmt: skip
        seen.append((attn_mask, is_causal))
        return real(q, k, v, attn_mask, dropout_p, is_causal, *rest)

    monkeypatch.setattr(attention_mod, "scaled_dot_product_attention", spy)
    q = lucid.randn(1, 2, 3, 4)
    k = lucid.randn(1, 2, 5, 4)
    real(q, k, k, lbias.causal_upper_left(3, 5))
    assert seen[-1] == (None, True)  # upper-left: is_causal=True
    real(q, q, q, lbias.causal_lower_right(3, 3))
    assert seen[-1] == (None, True)  # L == S: the same
    real(q, k, k, lbias.causal_lower_right(3, 5))
    mask, causal = seen[-1]
    assert not causal and type(mask) is lucid.Tensor and mask.dtype is lucid.bool
    with pytest.raises(ValueError, match="causal=True"):
        real(q, k, k, lbias.causal_upper_left(3, 5), is_causal=True)
    with pytest.warns(UserWarning, match="Lower right causal bias"):
        lbias.causal_lower_right(5, 3)
    with pytest.raises(AssertionError):
        lbias.causal_upper_left(3)
    with pytest.raises(AssertionError):
        lbias.CausalBias(1, 3, 3)  # type: ignore[arg-type]
