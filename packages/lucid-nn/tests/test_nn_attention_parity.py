"""MultiheadAttention and Transformer layers vs PyTorch: same weights -> same results."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-5


def _copy(mine, theirs):
    state = {k: lucid.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    mine.load_state_dict(state)


def _compare(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=RTOL, atol=ATOL)


def test_sdpa_parity():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 2, 4, 8), (2, 2, 6, 8),
                                                                   (2, 2, 6, 8)))  # fmt: skip
    mask = rng.random((4, 6)) > 0.3
    mask[:, 0] = True
    for kw in ({"is_causal": True}, {"attn_mask": mask}, {"scale": 0.2}):
        lt = [lucid.tensor(a, requires_grad=True) for a in (q, k, v)]
        tt = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        lk = {n: lucid.tensor(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
        tk = {n: torch.tensor(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
        lo = F.scaled_dot_product_attention(*lt, **lk)
        to = torch.nn.functional.scaled_dot_product_attention(*tt, **tk)
        _compare(lo, to)
        lo.sum().backward()
        to.sum().backward()
        for a, b in zip(lt, tt):
            _compare(a.grad, b.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("extra", [{}, {"add_bias_kv": True, "add_zero_attn": True},
                                   {"kdim": 3, "vdim": 5, "bias": False}])  # fmt: skip
def test_mha_parity(batch_first, extra):
    rng = np.random.default_rng(1)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, **extra)
    mine = nn.MultiheadAttention(8, 2, batch_first=batch_first, **extra)
    _copy(mine, theirs)
    n, length, source = 3, 4, 5

    def shape(s, e):
        return (n, s, e) if batch_first else (s, n, e)

    arrays = [rng.standard_normal(shape(length, 8)),
              rng.standard_normal(shape(source, extra.get("kdim", 8))),
              rng.standard_normal(shape(source, extra.get("vdim", 8)))]  # fmt: skip
    arrays = [a.astype(np.float32) for a in arrays]
    attn_mask = rng.random((length, source)) > 0.7
    pad = np.zeros((n, source), bool)
    pad[0, -1] = True
    lx = [lucid.tensor(a, requires_grad=True) for a in arrays]
    tx = [torch.tensor(a, requires_grad=True) for a in arrays]
    lo, lw = mine(*lx, key_padding_mask=lucid.tensor(pad), attn_mask=lucid.tensor(attn_mask))
    to, tw = theirs(*tx, key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(attn_mask))
    _compare(lo, to)
    _compare(lw, tw)
    (lo.sum() + lw.sum()).backward()
    (to.sum() + tw.sum()).backward()
    for a, b in zip(lx, tx):
        _compare(a.grad, b.grad)
    for name, p in theirs.named_parameters():
        _compare(dict(mine.named_parameters())[name].grad, p.grad)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_layers_parity(norm_first):
    rng = np.random.default_rng(2)
    kw = dict(dim_feedforward=16, dropout=0.0, norm_first=norm_first, batch_first=True)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, activation="gelu", **kw)
    mine = nn.TransformerDecoderLayer(8, 2, activation="gelu", **kw)
    _copy(mine, theirs)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    mem = rng.standard_normal((2, 6, 8)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    lo = mine(lucid.tensor(x), lucid.tensor(mem), tgt_mask=lucid.tensor(mask.numpy()))
    to = theirs(torch.tensor(x), torch.tensor(mem), tgt_mask=mask)
    _compare(lo, to)
    lo.sum().backward()
    to.sum().backward()
    for name, p in theirs.named_parameters():
        _compare(dict(mine.named_parameters())[name].grad, p.grad)
    enc_t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, **kw), 2,
                                        enable_nested_tensor=False)  # fmt: skip
    enc_m = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, **kw), 2)
    _copy(enc_m, enc_t)
    _compare(enc_m(lucid.tensor(x)), enc_t(torch.tensor(x)))
