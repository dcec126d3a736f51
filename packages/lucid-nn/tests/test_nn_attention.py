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


def _t(*shape: int, grad: bool = True) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=grad)


def ref_sdpa(q, k, v, bias):
    s = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) + bias
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def test_sdpa_matches_reference_with_masks():
    q, k, v = (RNG.standard_normal(s) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)))
    lq, lk, lv = (lucid.tensor(a) for a in (q, k, v))
    np.testing.assert_allclose(F.scaled_dot_product_attention(lq, lk, lv).numpy(),
                               ref_sdpa(q, k, v, 0.0), rtol=1e-12, atol=1e-12)  # fmt: skip
    causal = np.where(np.arange(6)[None, :] <= np.arange(4)[:, None], 0.0, -np.inf)
    out = F.scaled_dot_product_attention(lq, lk, lv, is_causal=True)
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, causal), rtol=1e-12, atol=1e-12)
    keep = RNG.random((4, 6)) > 0.3
    keep[:, 0] = True
    out = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=lucid.tensor(keep))
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, np.where(keep, 0.0, -np.inf)),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    add = RNG.standard_normal((4, 6))
    out = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=lucid.tensor(add))
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, add), rtol=1e-12, atol=1e-12)


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
    np.testing.assert_allclose(out.numpy(), full.numpy(), rtol=1e-6, atol=1e-6)
    lucid.manual_seed(0)
    dropped = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert not np.allclose(
        dropped.numpy(), F.scaled_dot_product_attention(q, q, q).numpy(), rtol=1e-5, atol=1e-8
    )
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
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, rtol=1e-5, atol=1e-6)
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
    mask = lucid.tensor([[False, True, False, False], [False, False, True, False],
                         [True, False, False, False]])  # fmt: skip
    pad = lucid.tensor([[False, False, True]])
    assert gradcheck(lambda x: mha(x, x, x)[0], (x,))
    assert gradcheck(lambda x: mha(x, x, x, attn_mask=mask[:, :3], key_padding_mask=pad,
                                   need_weights=False)[0], (x,))  # fmt: skip
    assert gradcheck(lambda x: mha(x, x, x)[1], (x,))  # the averaged weights too
    for p in (mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight, mha.bias_k, mha.bias_v):
        assert gradcheck(lambda _: mha(x.detach(), x.detach(), x.detach())[0], (p,))
    sep = nn.MultiheadAttention(4, 2, kdim=3, vdim=2).double()
    q, k, v = _t(2, 1, 4), _t(3, 1, 3), _t(3, 1, 2)
    assert gradcheck(lambda q, k, v: sep(q, k, v)[0], (q, k, v))
    assert gradcheck(lambda _: sep(q.detach(), k.detach(), v.detach())[0], (sep.k_proj_weight,))


def test_mha_errors():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    mha = nn.MultiheadAttention(8, 2)
    with pytest.raises(ValueError, match=r"MultiheadAttention expected query of shape .*8\), got"):
        mha(lucid.randn(5, 3, 7), lucid.randn(5, 3, 8), lucid.randn(5, 3, 8))
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        x = lucid.randn(5, 3, 8)
        mha(x, x, x, is_causal=True)


def test_sdpa_fully_masked_rows_give_zeros_and_finite_grads():
    q, k, v = _t(1, 3, 4), _t(1, 4, 4), _t(1, 4, 2)
    keep = lucid.tensor([[True, False, True, False], [False, False, False, False],
                         [True, True, True, True]])  # fmt: skip
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    assert np.all(out.detach().numpy()[0, 1] == 0.0)
    bias = np.where(keep.numpy(), 0.0, -np.inf)
    for r in (0, 2):  # the live rows, one query at a time against the reference
        ri = ref_sdpa(q.detach().numpy()[:, r : r + 1], k.detach().numpy(), v.detach().numpy(),
                      bias[r : r + 1])  # fmt: skip
        np.testing.assert_allclose(out.detach().numpy()[:, r : r + 1], ri, rtol=1e-12, atol=1e-12)
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all() and np.isfinite(k.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[0, 1], 0.0)
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=keep),
                     (q, k, v))  # fmt: skip
    add = lucid.tensor(np.where(keep.numpy(), 0.5, -np.inf))  # a float mask with -inf rows too
    assert np.all(F.scaled_dot_product_attention(q, k, v, attn_mask=add).detach().numpy()[0, 1]
                  == 0.0)  # fmt: skip


def test_sdpa_mask_broadcast_unbatched_and_gqa_gradcheck():
    q, k, v = _t(2, 3, 4), _t(2, 5, 4), _t(2, 5, 3)
    keep = RNG.random((2, 1, 5)) > 0.3
    keep[..., 0] = True
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=lucid.tensor(keep))
    want = ref_sdpa(*(t.detach().numpy() for t in (q, k, v)), np.where(keep, 0.0, -np.inf))
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    out2 = F.scaled_dot_product_attention(q[0], k[0], v[0], is_causal=True)  # 2-D inputs
    assert out2.shape == (3, 3)
    qh, kh = _t(1, 4, 2, 3), _t(1, 2, 3, 3)
    assert gradcheck(lambda q, k: F.scaled_dot_product_attention(q, k, k, enable_gqa=True),
                     (qh, kh))  # fmt: skip


def test_sdpa_errors():
    q = lucid.randn(1, 4, 3, 8)
    with pytest.raises(RuntimeError, match=r"query has 4 heads but key has 2 .*enable_gqa"):
        F.scaled_dot_product_attention(q, lucid.randn(1, 2, 3, 8), lucid.randn(1, 2, 3, 8))
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=lucid.ones(3, 3, dtype=lucid.int64))
    with pytest.raises(RuntimeError, match=r"attn_mask of shape \(2, 3\) does not broadcast"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=lucid.ones(2, 3, dtype=lucid.bool))
    with pytest.raises(RuntimeError, match=r"expected query \(\.\.\., L, E\), key"):
        F.scaled_dot_product_attention(q, lucid.randn(1, 4, 3, 7), q)
    with pytest.raises(RuntimeError, match="at least 2 dims"):
        F.scaled_dot_product_attention(q[0, 0, 0], q[0, 0, 0], q[0, 0, 0])
    with pytest.raises(RuntimeError, match="of one dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)


def _ref_mha(mha, q, k, v, bias):
    """Per-head NumPy MHA (sequence-first inputs), with an additive (N, H, L, S) bias."""
    e, h = mha.embed_dim, mha.num_heads
    d = e // h
    w, b = mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy()
    qp, kp, vp = (x.transpose(1, 0, 2) @ w[i * e : (i + 1) * e].T + b[i * e : (i + 1) * e]
                  for i, x in enumerate((q, k, v)))  # fmt: skip
    n, length = qp.shape[:2]
    qh, kh, vh = (x.reshape(n, -1, h, d).transpose(0, 2, 1, 3) for x in (qp, kp, vp))
    s = qh @ kh.swapaxes(-1, -2) / math.sqrt(d) + bias
    wts = np.exp(s - s.max(-1, keepdims=True))
    wts = wts / wts.sum(-1, keepdims=True)
    o = (wts @ vh).transpose(0, 2, 1, 3).reshape(n, length, e)
    o = o @ mha.out_proj.weight.detach().numpy().T + mha.out_proj.bias.detach().numpy()
    return o.transpose(1, 0, 2), wts


def test_mha_matches_per_head_reference_with_3d_and_padding_masks():
    mha = nn.MultiheadAttention(6, 3).double()
    for p in (mha.in_proj_bias, mha.out_proj.bias):
        p.data[...] = lucid.tensor(RNG.standard_normal(p.shape))
    n, length, source = 2, 3, 4
    q, k, v = (RNG.standard_normal(s) for s in ((length, n, 6), (source, n, 6), (source, n, 6)))
    mask3 = RNG.standard_normal((n * 3, length, source))  # per batch-and-head float mask
    pad = np.zeros((n, source), bool)
    pad[1, 0] = True
    bias = mask3.reshape(n, 3, length, source) + np.where(pad, -np.inf, 0.0)[:, None, None]
    want, wts = _ref_mha(mha, q, k, v, bias)
    lq, lk, lv = (lucid.tensor(a) for a in (q, k, v))
    kw = dict(attn_mask=lucid.tensor(mask3), key_padding_mask=lucid.tensor(pad))
    out, w = mha(lq, lk, lv, average_attn_weights=False, **kw)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.detach().numpy(), wts, rtol=1e-10, atol=1e-12)
    out2, none = mha(lq, lk, lv, need_weights=False, **kw)  # the SDPA path
    assert none is None
    np.testing.assert_allclose(out2.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    fpad = lucid.tensor(np.where(pad, -np.inf, 0.0))  # a float key_padding_mask is added
    out3, _ = mha(lq, lk, lv, attn_mask=lucid.tensor(mask3), key_padding_mask=fpad)
    np.testing.assert_allclose(out3.detach().numpy(), want, rtol=1e-10, atol=1e-12)


def test_mha_unbatched_batch_first_and_causal_hint_agree():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    x = lucid.randn(2, 5, 8)
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    out, _ = mha(x, x, x, attn_mask=causal)
    hinted, _ = mha(x, x, x, attn_mask=causal, is_causal=True, need_weights=False)
    np.testing.assert_allclose(hinted.detach().numpy(), out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    single, w = mha(x[1], x[1], x[1], attn_mask=causal,
                    key_padding_mask=lucid.zeros(5, dtype=lucid.bool))  # fmt: skip
    assert single.shape == (5, 8) and w.shape == (5, 5)
    np.testing.assert_allclose(single.detach().numpy(), out.detach().numpy()[1], rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    seq = nn.MultiheadAttention(8, 2)
    seq.load_state_dict(mha.state_dict())
    out_seq, _ = seq(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), attn_mask=causal)
    np.testing.assert_allclose(out_seq.transpose(0, 1).detach().numpy(),
                               out.detach().numpy(), rtol=1e-6, atol=1e-6)  # fmt: skip


def test_mha_dropout_only_in_training():
    mha = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = lucid.randn(4, 2, 8)
    mha.eval()
    a = mha(x, x, x)[0].detach().numpy()
    np.testing.assert_array_equal(mha(x, x, x)[0].detach().numpy(), a)
    mha.train()
    lucid.manual_seed(1)
    assert not np.allclose(mha(x, x, x)[0].detach().numpy(), a, rtol=1e-5, atol=1e-8)
    assert not np.allclose(
        mha(x, x, x, need_weights=False)[0].detach().numpy(), a, rtol=1e-5, atol=1e-8
    )


def test_functional_mha_separate_weights_and_static_kv():
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=3).double()
    q, k, v = _t(2, 1, 4, grad=False), _t(3, 1, 3, grad=False), _t(3, 1, 3, grad=False)
    want, _ = mha(q, k, v)
    out, w = F.multi_head_attention_forward(
        q, k, v, 4, 2, None, mha.in_proj_bias, None, None, False, 0.0, mha.out_proj.weight,
        mha.out_proj.bias, use_separate_proj_weight=True, q_proj_weight=mha.q_proj_weight,
        k_proj_weight=mha.k_proj_weight, v_proj_weight=mha.v_proj_weight,
    )  # fmt: skip
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    # static_k/static_v replace the projected keys/values, laid out (N * H, S, head_dim)
    bk, bv = mha.in_proj_bias.chunk(3)[1:]
    kp = F.linear(k, mha.k_proj_weight, bk).transpose(0, 1).reshape(1, 3, 2, 2).transpose(1, 2)
    vp = F.linear(v, mha.v_proj_weight, bv).transpose(0, 1).reshape(1, 3, 2, 2).transpose(1, 2)
    out2, _ = F.multi_head_attention_forward(
        q, k, v, 4, 2, None, mha.in_proj_bias, None, None, False, 0.0, mha.out_proj.weight,
        mha.out_proj.bias, use_separate_proj_weight=True, q_proj_weight=mha.q_proj_weight,
        k_proj_weight=mha.k_proj_weight, v_proj_weight=mha.v_proj_weight,
        static_k=kp.reshape(2, 3, 2), static_v=vp.reshape(2, 3, 2),
    )  # fmt: skip
    np.testing.assert_allclose(out2.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 4"):
        F.multi_head_attention_forward(q, q, q, 8, 2, mha.q_proj_weight, None, None, None,
                                       False, 0.0, mha.out_proj.weight, None)  # fmt: skip


def test_mha_mask_errors():
    mha = nn.MultiheadAttention(8, 2)
    x = lucid.randn(5, 3, 8)
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is \(3, 5, 5\), but "
                                           r"should be \(6, 5, 5\)"):  # fmt: skip
        mha(x, x, x, attn_mask=lucid.zeros(3, 5, 5))
    with pytest.raises(AssertionError, match=r"expecting key_padding_mask shape of \(3, 5\)"):
        mha(x, x, x, key_padding_mask=lucid.zeros(3, 4, dtype=lucid.bool))
    with pytest.raises(AssertionError, match="expected `key_padding_mask` to be `None` or 2-D"):
        mha(x, x, x, key_padding_mask=lucid.zeros(5, dtype=lucid.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        mha(x, x, x, attn_mask=lucid.zeros(5, 5, dtype=lucid.int64))
    with pytest.raises(ValueError, match="MultiheadAttention expected query, key and value of"):
        mha(x, x[:, 0], x[:, 0])
    with pytest.raises(RuntimeError, match="MultiheadAttention expected input of dtype"):
        mha(x.double(), x.double(), x.double())


def test_mha_double_backward():
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    x = _t(1, 3, 4)
    causal = lucid.tensor([[False, True, True], [False, False, True], [False, False, False]])
    assert gradgradcheck(lambda x: mha(x, x, x, attn_mask=causal, need_weights=False)[0], (x,))


@pytest.mark.parametrize(
    ("qs", "ks", "ev", "causal", "scale"),
    [((12, 4, 64, 32), (12, 4, 64, 32), 32, True, None), ((2, 3, 5, 4), (2, 3, 7, 4), 6, True,
     None), ((2, 6, 4), (2, 9, 4), 3, False, -0.7), ((5, 3), (4, 3), 2, True, 2.0)],
)  # fmt: skip
def test_sdpa_array_path_float32_against_float64_oracle(qs, ks, ev, causal, scale):
    """The one-node path (no mask, no dropout) in float32: values and gradients within 2e-6 of
    the largest magnitude of a float64 oracle in NumPy (the reference gives the same margin)."""
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal(qs), rng.standard_normal(ks)
    v = rng.standard_normal((*ks[:-1], ev))
    g = rng.standard_normal((*qs[:-1], ev))
    f = 1 / math.sqrt(qs[-1]) if scale is None else scale
    s = q @ k.swapaxes(-1, -2) * f
    if causal:
        s = s + np.where(np.arange(ks[-2])[None, :] <= np.arange(qs[-2])[:, None], 0.0, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = g @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * f
    want = [p @ v, ds @ k, ds.swapaxes(-1, -2) @ q, p.swapaxes(-1, -2) @ g]
    lq, lk, lv = (lucid.tensor(a.astype(np.float32), requires_grad=True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(lq, lk, lv, is_causal=causal, scale=scale)
    assert type(out.grad_fn).__name__.startswith("_Attention")
    out.backward(lucid.tensor(g.astype(np.float32)))
    got = [out.detach().numpy(), lq.grad.numpy(), lk.grad.numpy(), lv.grad.numpy()]
    for a, b in zip(got, want):
        assert a.dtype == np.float32 and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-6 * np.abs(b).max())


def test_sdpa_array_path_strided_inputs_contiguous_result_and_double_backward():
    """Strided (split) inputs; the result reports contiguous and a view of it works (lucid takes
    computed tensors as contiguous; torch's is a transposed (N, L, H, E) here, as lucid's array
    is: docs/differences.md); the gradient of the gradient differentiates the ops."""
    x = _t(2, 5, 3 * 8)
    q, k, v = (t.reshape(2, 5, 2, 4).transpose(1, 2) for t in x.split(8, dim=2))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.is_contiguous() and out.view(4, 5, 4).shape == (4, 5, 4)
    ref = F.attention._reference(q, k, v, None, 0.0, True, 0.5)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.scaled_dot_product_attention(
        *(t.reshape(2, 5, 2, 4).transpose(1, 2) for t in x.split(8, dim=2)), is_causal=True),
        (x,))  # fmt: skip
    q, k, v = _t(1, 2, 3, 4), _t(1, 2, 5, 4), _t(1, 2, 5, 3)
    assert gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                         (q, k, v))  # fmt: skip
