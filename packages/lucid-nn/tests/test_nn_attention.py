"""Attention: scaled_dot_product_attention, multi_head_attention_forward, MultiheadAttention."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def _t(*shape: int) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=True)


def ref_sdpa(q, k, v, bias):
    s = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) + bias
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def test_sdpa_matches_reference_with_masks():
    q, k, v = (RNG.standard_normal(s) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)))
    lq, lk, lv = (lucid.tensor(a) for a in (q, k, v))
    np.testing.assert_allclose(F.scaled_dot_product_attention(lq, lk, lv).numpy(),
                               ref_sdpa(q, k, v, 0.0), rtol=1e-12)  # fmt: skip
    causal = np.where(np.arange(6)[None, :] <= np.arange(4)[:, None], 0.0, -np.inf)
    out = F.scaled_dot_product_attention(lq, lk, lv, is_causal=True)
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, causal), rtol=1e-12)
    keep = RNG.random((4, 6)) > 0.3
    keep[:, 0] = True
    out = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=lucid.tensor(keep))
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, np.where(keep, 0.0, -np.inf)),
                               rtol=1e-12)  # fmt: skip
    add = RNG.standard_normal((4, 6))
    out = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=lucid.tensor(add))
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, add), rtol=1e-12)


def test_sdpa_gradcheck_and_double_backward():
    q, k, v = _t(1, 2, 3, 4), _t(1, 2, 5, 4), _t(1, 2, 5, 3)
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     (q, k, v))  # fmt: skip
    mask = lucid.tensor(RNG.standard_normal((3, 5)))
    assert gradgradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7),
        (q, k, v),
    )


def test_sdpa_dropout_and_gqa():
    q = lucid.randn(1, 4, 3, 8)
    kv = lucid.randn(1, 2, 3, 8)
    out = F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
    full = F.scaled_dot_product_attention(q, kv.repeat_interleave(2, dim=1),
                                          kv.repeat_interleave(2, dim=1))  # fmt: skip
    np.testing.assert_allclose(out.numpy(), full.numpy(), rtol=1e-6)
    lucid.manual_seed(0)
    dropped = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert not np.allclose(dropped.numpy(), F.scaled_dot_product_attention(q, q, q).numpy())
    with pytest.raises(RuntimeError, match="attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=lucid.ones(3, 3), is_causal=True)


def test_mha_shapes_layout_and_weights():
    mha = nn.MultiheadAttention(8, 2)
    names = [n for n, _ in mha.named_parameters()]
    assert names == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert mha.in_proj_weight.shape == (24, 8)
    x = lucid.randn(5, 3, 8)  # (L, N, E)
    out, w = mha(x, x, x)
    assert out.shape == (5, 3, 8) and w.shape == (3, 5, 5)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, rtol=1e-5)
    out, w = mha(x, x, x, average_attn_weights=False)
    assert w.shape == (3, 2, 5, 5)
    out, w = mha(x[:, 0], x[:, 0], x[:, 0], need_weights=False)
    assert out.shape == (5, 8) and w is None
    kv = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, batch_first=True, bias=False)
    assert kv.in_proj_weight is None and kv.k_proj_weight.shape == (8, 3)
    out, _ = kv(lucid.randn(2, 4, 8), lucid.randn(2, 6, 3), lucid.randn(2, 6, 5))
    assert out.shape == (2, 4, 8)


def test_mha_key_padding_mask_blocks_keys():
    mha = nn.MultiheadAttention(4, 1, batch_first=True)
    x = lucid.randn(2, 3, 4)
    pad = lucid.tensor([[False, False, True], [False, False, False]])
    _, w = mha(x, x, x, key_padding_mask=pad)
    assert np.all(w.detach().numpy()[0, :, 2] == 0.0) and np.all(w.detach().numpy()[1, :, 2] > 0.0)


def test_mha_gradcheck():
    mha = nn.MultiheadAttention(4, 2, batch_first=True, add_bias_kv=True).double()
    x = _t(1, 3, 4)
    assert gradcheck(lambda x: mha(x, x, x)[0], (x,))
    assert gradcheck(lambda w: F.linear(w, mha.in_proj_weight).sum(-1), (_t(2, 4),))


def test_mha_errors():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    mha = nn.MultiheadAttention(8, 2)
    with pytest.raises(ValueError, match=r"MultiheadAttention expected query of shape .*8\), got"):
        mha(lucid.randn(5, 3, 7), lucid.randn(5, 3, 8), lucid.randn(5, 3, 8))
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        x = lucid.randn(5, 3, 8)
        mha(x, x, x, is_causal=True)
