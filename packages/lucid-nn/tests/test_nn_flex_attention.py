"""``lucid.nn.attention.flex_attention``: torch's FlexAttention API on lucid's dense computation.

Forward outputs, log-sum-exps and block layouts are compared with torch's ``flex_attention``
(torch's CPU path has no backward, so gradients are compared with a dense torch reference
written with the same formula: scores, score_mod, -inf mask, safe softmax).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.nn.attention import flex_attention as LF

RTOL, ATOL = 1e-5, 1e-5
RTOL64, ATOL64 = 1e-10, 1e-10


def _arrays(seed: int, *shapes: tuple[int, ...], dtype: type = np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _torch_flex(torch, q, k, v, **kw):
    """torch's flex_attention on numpy inputs (its CPU path: forward only)."""
    tf = pytest.importorskip("torch.nn.attention.flex_attention")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tf.flex_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v), **kw)


def _torch_dense(torch, q, k, v, score_mod, mask_mod, scale, gqa=1):
    """The dense formula in torch, with autograd: the gradient reference."""
    k = k.repeat_interleave(gqa, dim=1)
    v = v.repeat_interleave(gqa, dim=1)
    B, H, L, S = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    idx = [
        torch.arange(n).view([n if d == i else 1 for d in range(4)])
        for i, n in enumerate((B, H, L, S))
    ]
    s = q @ k.transpose(-2, -1) * scale
    if score_mod is not None:
        s = score_mod(s, *idx)
    if mask_mod is not None:
        s = torch.where(mask_mod(*idx), s, torch.tensor(float("-inf"), dtype=s.dtype))
    s = s.expand(B, H, L, S)
    empty = torch.isneginf(s.amax(-1))
    lse = torch.where(empty, float("-inf"), torch.logsumexp(s, -1))
    return torch._safe_softmax(s, -1) @ v, lse


def _close(a, b, rtol=RTOL, atol=ATOL):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx <= 4) & (q_idx >= kv_idx)


# -- parity with torch's flex_attention (forward) ---------------------------------------------


@pytest.mark.parity
def test_no_mods_matches_torch():
    torch = pytest.importorskip("torch")
    q, k, v = _arrays(0, (2, 3, 11, 8), (2, 3, 13, 8), (2, 3, 13, 5))
    t_out, t_aux = _torch_flex(torch, q, k, v, return_aux=torch_aux(torch))
    out, aux = LF.flex_attention(
        lucid.tensor(q), lucid.tensor(k), lucid.tensor(v), return_aux=LF.AuxRequest(lse=True)
    )
    _close(out, t_out)
    _close(aux.lse, t_aux.lse)
    assert aux.max_scores is None and out.dtype == lucid.float32


def torch_aux(torch):
    from torch.nn.attention.flex_attention import AuxRequest

    return AuxRequest(lse=True)


@pytest.mark.parity
@pytest.mark.parametrize("mask_mod", [causal, sliding_window])
def test_block_mask_matches_torch(mask_mod):
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.nn.attention.flex_attention")
    B, H, L = 2, 2, 37
    q, k, v = _arrays(1, (B, H, L, 8), (B, H, L, 8), (B, H, L, 8))
    t_bm = tf.create_block_mask(mask_mod, B, None, L, L, device="cpu", BLOCK_SIZE=16)
    bm = LF.create_block_mask(mask_mod, B, None, L, L, BLOCK_SIZE=16)
    for name in LF.BlockMask._TENSOR_ATTRS:
        t_val, val = getattr(t_bm, name), getattr(bm, name)
        assert (t_val is None) == (val is None), name
        if t_val is not None:
            np.testing.assert_array_equal(val.numpy(), t_val.numpy(), err_msg=name)
    assert bm.shape == t_bm.shape and bm.BLOCK_SIZE == t_bm.BLOCK_SIZE
    assert bm.seq_lengths == t_bm.seq_lengths
    np.testing.assert_allclose(bm.sparsity(), t_bm.sparsity(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(bm.to_dense().numpy(), t_bm.to_dense().numpy())
    assert str(bm) == str(t_bm)
    assert repr(bm).replace("lucid.Size", "torch.Size") == repr(t_bm)
    t_out = _torch_flex(torch, q, k, v, block_mask=t_bm)
    out = LF.flex_attention(lucid.tensor(q), lucid.tensor(k), lucid.tensor(v), block_mask=bm)
    _close(out, t_out)


@pytest.mark.parity
def test_document_mask_and_score_mods_match_torch():
    """Document masking (a captured id tensor indexed by q_idx/kv_idx) combined with
    and_masks, ALiBi and a tanh softcap, with GQA and a custom scale."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.nn.attention.flex_attention")
    B, Hq, Hkv, L = 1, 4, 2, 24
    q, k, v = _arrays(2, (B, Hq, L, 8), (B, Hkv, L, 8), (B, Hkv, L, 8))
    docs = np.repeat(np.arange(3), [7, 10, 7])

    def make(mod, doc_ids):
        def document(b, h, q_idx, kv_idx):
            return doc_ids[q_idx] == doc_ids[kv_idx]

        def alibi_softcap(score, b, h, q_idx, kv_idx):
            score = score + (h + 1) * 0.25 * (kv_idx - q_idx)
            return 5.0 * mod.tanh(score / 5.0)

        return document, alibi_softcap

    t_doc, t_score = make(torch, torch.tensor(docs))
    l_doc, l_score = make(lucid, lucid.tensor(docs))
    t_bm = tf.create_block_mask(
        tf.and_masks(causal, t_doc), B, None, L, L, device="cpu", BLOCK_SIZE=8
    )
    bm = LF.create_block_mask(LF.and_masks(causal, l_doc), B, None, L, L, BLOCK_SIZE=8)
    np.testing.assert_array_equal(bm.kv_num_blocks.numpy(), t_bm.kv_num_blocks.numpy())
    np.testing.assert_array_equal(bm.full_kv_num_blocks.numpy(), t_bm.full_kv_num_blocks.numpy())
    kw_t = {"score_mod": t_score, "block_mask": t_bm, "scale": 0.3, "enable_gqa": True}
    t_out, t_aux = _torch_flex(torch, q, k, v, return_aux=torch_aux(torch), **kw_t)
    out, aux = LF.flex_attention(
        lucid.tensor(q),
        lucid.tensor(k),
        lucid.tensor(v),
        score_mod=l_score,
        block_mask=bm,
        scale=0.3,
        enable_gqa=True,
        return_aux=LF.AuxRequest(lse=True),
    )
    _close(out, t_out)
    _close(aux.lse, t_aux.lse)
    # or_masks, and the dense masks of both
    t_mask = tf.create_mask(tf.or_masks(causal, t_doc), B, 2, L, L, device="cpu")
    mask = LF.create_mask(LF.or_masks(causal, l_doc), B, 2, L, L)
    np.testing.assert_array_equal(mask.numpy(), t_mask.numpy())


@pytest.mark.parity
def test_fully_masked_rows_and_return_lse_match_torch():
    """Queries that attend nothing: zero output, -inf log-sum-exp (the deprecated
    return_lse path, which warns)."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.nn.attention.flex_attention")
    L = 8

    def late(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx + 5

    q, k, v = _arrays(3, (1, 2, L, 4), (1, 2, L, 4), (1, 2, L, 4))
    t_bm = tf.create_block_mask(late, 1, 2, L, L, device="cpu", BLOCK_SIZE=4)
    t_out, t_lse = _torch_flex(torch, q, k, v, block_mask=t_bm, return_lse=True)
    bm = LF.create_block_mask(late, 1, 2, L, L, BLOCK_SIZE=4)
    LF._WARNINGS_SHOWN.discard("deprecated_return_lse")
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        out, lse = LF.flex_attention(
            lucid.tensor(q), lucid.tensor(k), lucid.tensor(v), block_mask=bm, return_lse=True
        )
    _close(out, t_out)
    _close(lse, t_lse)
    assert np.all(out.numpy()[:, :, :5] == 0) and np.all(np.isneginf(lse.numpy()[:, :, :5]))


@pytest.mark.parity
@pytest.mark.parametrize("mask_mod", [None, causal])
def test_from_kv_blocks_matches_torch(mask_mod):
    """A BlockMask built from blocks: its q layout, and attention masked by its mask_mod alone
    (torch's CPU path; its GPU kernels would also skip the absent blocks)."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.nn.attention.flex_attention")
    L = 16
    q, k, v = _arrays(4, (1, 1, L, 4), (1, 1, L, 4), (1, 1, L, 4))
    num = np.array([[[1, 2]]], dtype=np.int32)
    idx = np.array([[[[0, 1], [1, 0]]]], dtype=np.int32)
    t_bm = tf.BlockMask.from_kv_blocks(
        torch.tensor(num), torch.tensor(idx), BLOCK_SIZE=8, mask_mod=mask_mod
    )
    bm = LF.BlockMask.from_kv_blocks(
        lucid.tensor(num), lucid.tensor(idx), BLOCK_SIZE=8, mask_mod=mask_mod
    )
    np.testing.assert_array_equal(bm.q_num_blocks.numpy(), t_bm.q_num_blocks.numpy())
    np.testing.assert_array_equal(bm.q_indices.numpy(), t_bm.q_indices.numpy())
    assert bm.shape == t_bm.shape
    t_out = _torch_flex(torch, q, k, v, block_mask=t_bm)
    out = LF.flex_attention(lucid.tensor(q), lucid.tensor(k), lucid.tensor(v), block_mask=bm)
    _close(out, t_out)


@pytest.mark.parity
def test_block_mask_indexing_matches_torch():
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.nn.attention.flex_attention")
    t_bm = tf.create_block_mask(causal, 4, 2, 512, 512, device="cpu")
    bm = LF.create_block_mask(causal, 4, 2, 512, 512)
    for index in [0, (0, 1), (slice(0, 2), slice(1, 2)), (slice(0, 2), slice(1, 2), [1])]:
        t_index = (
            tuple(torch.tensor(i) if isinstance(i, list) else i for i in index)
            if isinstance(index, tuple)
            else index
        )
        l_index = (
            tuple(lucid.tensor(i) if isinstance(i, list) else i for i in index)
            if isinstance(index, tuple)
            else index
        )
        t_sub, sub = t_bm[t_index], bm[l_index]
        np.testing.assert_array_equal(sub.kv_num_blocks.numpy(), t_sub.kv_num_blocks.numpy())
        np.testing.assert_array_equal(sub.kv_indices.numpy(), t_sub.kv_indices.numpy())
        assert sub.shape == t_sub.shape
    with pytest.raises(RuntimeError, match="sliced BlockMask"):
        bm[0].mask_mod(*[lucid.tensor(0)] * 4)


# -- gradients (against a dense torch reference) ----------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("chained", [False, True])
def test_learnable_bias_gradients_match_torch(chained):
    """A bias captured by score_mod gets its gradient; ``bias[h][q][kv]`` (HF's form) runs
    through vmap and gives the same."""
    torch = pytest.importorskip("torch")
    B, H, L = 2, 2, 9
    arrays = _arrays(5, (B, H, L, 4), (B, H, L, 4), (B, H, L, 4), (H, L, L), dtype=np.float64)
    tq, tk, tv, tb = (torch.tensor(a, requires_grad=True) for a in arrays)
    lq, lk, lv, lb = (lucid.tensor(a, requires_grad=True) for a in arrays)

    def mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx > 2)

    t_out, t_lse = _torch_dense(
        torch, tq, tk, tv, lambda s, b, h, qi, ki: s + tb[h, qi, ki], mask, 0.5
    )
    (t_out.sum() + t_lse.masked_fill(torch.isinf(t_lse), 0).sum()).backward()

    if chained:

        def score_mod(s, b, h, qi, ki):
            return s + lb[h][qi][ki]
    else:

        def score_mod(s, b, h, qi, ki):
            return s + lb[h, qi, ki]

    bm = LF.create_block_mask(mask, None, None, L, L, BLOCK_SIZE=4)
    out, aux = LF.flex_attention(
        lq,
        lk,
        lv,
        score_mod=score_mod,
        block_mask=bm,
        scale=0.5,
        return_aux=LF.AuxRequest(lse=True),
    )
    (out.sum() + lucid.where(lucid.isinf(aux.lse), 0.0, aux.lse).sum()).backward()
    _close(out, t_out, RTOL64, ATOL64)
    _close(aux.lse, t_lse, RTOL64, ATOL64)
    for t_x, l_x in [(tq, lq), (tk, lk), (tv, lv), (tb, lb)]:
        assert np.all(np.isfinite(l_x.grad.numpy()))
        _close(l_x.grad, t_x.grad, RTOL64, ATOL64)


@pytest.mark.parity
def test_gqa_softcap_gradients_match_torch():
    torch = pytest.importorskip("torch")
    B, Hq, Hkv, L, S = 1, 4, 2, 6, 7
    arrays = _arrays(6, (B, Hq, L, 4), (B, Hkv, S, 4), (B, Hkv, S, 3), dtype=np.float64)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in arrays)
    lq, lk, lv = (lucid.tensor(a, requires_grad=True) for a in arrays)

    def softcap(mod):
        return lambda s, b, h, qi, ki: 2.0 * mod.tanh(s / 2.0) - 0.1 * h * (qi - ki).abs()

    t_out, _ = _torch_dense(torch, tq, tk, tv, softcap(torch), causal, 0.5, gqa=2)
    grad = np.random.default_rng(7).standard_normal(t_out.shape)
    t_out.backward(torch.tensor(grad))
    bm = LF.create_block_mask(causal, None, None, L, S, BLOCK_SIZE=2)
    out = LF.flex_attention(lq, lk, lv, softcap(lucid), bm, scale=0.5, enable_gqa=True)
    out.backward(lucid.tensor(grad))
    _close(out, t_out, RTOL64, ATOL64)
    for t_x, l_x in [(tq, lq), (tk, lk), (tv, lv)]:
        _close(l_x.grad, t_x.grad, RTOL64, ATOL64)


# -- lucid alone ------------------------------------------------------------------------------


def test_gradcheck_float64():
    lucid.manual_seed(0)
    q = lucid.randn(1, 2, 5, 3, dtype=lucid.float64, requires_grad=True)
    k = lucid.randn(1, 1, 5, 3, dtype=lucid.float64, requires_grad=True)
    v = lucid.randn(1, 1, 5, 2, dtype=lucid.float64, requires_grad=True)
    bias = lucid.randn(5, 5, dtype=lucid.float64, requires_grad=True)

    def mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx != 1)

    bm = LF.create_block_mask(mask, 1, 2, 5, 5, BLOCK_SIZE=2)

    def fn(q, k, v, bias):
        out, aux = LF.flex_attention(
            q,
            k,
            v,
            lambda s, b, h, qi, ki: s * (h + 1) + bias[qi, ki],
            bm,
            enable_gqa=True,
            return_aux=LF.AuxRequest(lse=True),
        )
        return out, lucid.where(lucid.isinf(aux.lse), 0.0, aux.lse)

    assert gradcheck(fn, (q, k, v, bias), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_fully_masked_rows_have_zero_output_and_finite_gradients():
    q = lucid.ones(1, 1, 4, 2, requires_grad=True)
    k = lucid.ones(1, 1, 4, 2, requires_grad=True)
    v = lucid.ones(1, 1, 4, 2, requires_grad=True)
    bm = LF.create_block_mask(lambda b, h, qi, ki: qi >= 2, None, None, 4, 4, BLOCK_SIZE=2)
    out, aux = LF.flex_attention(
        q, k, v, block_mask=bm, return_aux=LF.AuxRequest(lse=True, max_scores=True)
    )
    assert out.detach().numpy()[0, 0, :2].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert np.all(np.isneginf(aux.lse.detach().numpy()[0, 0, :2]))
    max_scores = aux.max_scores.detach().numpy()[0, 0]
    assert np.all(np.isneginf(max_scores[:2]))
    np.testing.assert_allclose(max_scores[2:], 2 / np.sqrt(2), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    for x in (q, k, v):
        assert np.all(np.isfinite(x.grad.numpy()))


def test_errors_and_helpers():
    q = lucid.zeros(1, 2, 8, 4)
    bm = LF.create_block_mask(causal, 1, 1, 16, 16, BLOCK_SIZE=4)
    with pytest.raises(ValueError, match="larger length"):
        LF.flex_attention(q, q, q, block_mask=bm)
    with pytest.raises(ValueError, match="smaller length"):
        LF.flex_attention(
            lucid.zeros(1, 2, 32, 4),
            lucid.zeros(1, 2, 32, 4),
            lucid.zeros(1, 2, 32, 4),
            block_mask=bm,
        )
    with pytest.raises(ValueError, match="enable_gqa"):
        LF.flex_attention(q, lucid.zeros(1, 1, 8, 4), lucid.zeros(1, 1, 8, 4))
    with pytest.raises(ValueError, match="both return_lse and return_aux"):
        LF.flex_attention(q, q, q, return_lse=True, return_aux=LF.AuxRequest(lse=True))
    moved = bm.to("cpu")
    assert moved.shape == bm.shape and moved.mask_mod is causal
    np.testing.assert_array_equal(moved.q_indices.numpy(), bm.q_indices.numpy())
    assert "(0, 0)" in bm.to_string(grid_size=-1)
    adjusted = bm._adjust(8, 8)
    assert adjusted.shape == (1, 1, 8, 8)
    out = LF.flex_attention(q, q, q, block_mask=adjusted)
    assert out.shape == (1, 2, 8, 4)
    assert LF.noop_mask(*[lucid.tensor(0)] * 4).item() is True
    assert LF.create_mask(LF.noop_mask, 1, 1, 2, 3).all().item()
    empty = LF._create_empty_block_mask(q, q)
    assert empty.BLOCK_SIZE == (LF._LARGE_SPARSE_BLOCK_SIZE, LF._LARGE_SPARSE_BLOCK_SIZE)
    # kernel_options are accepted and ignored
    out2 = LF.flex_attention(q, q, q, block_mask=adjusted, kernel_options={"BLOCK_M": 16})
    _close(out2, out, 0.0, 0.0)
