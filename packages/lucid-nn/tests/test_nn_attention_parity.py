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


def _pair(a):
    return lucid.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def test_sdpa_parity_more_cases():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 4, 3, 8)).astype(np.float32)
    kv = rng.standard_normal((2, 2, 5, 8)).astype(np.float32)
    keep = rng.random((3, 5)) > 0.5
    keep[1] = False  # a query with every key masked: torch gives zeros
    fmask = rng.standard_normal((2, 1, 3, 5)).astype(np.float32)
    cases = [
        ({"enable_gqa": True}, kv),
        ({"attn_mask": keep}, rng.standard_normal((2, 4, 5, 8)).astype(np.float32)),
        ({"attn_mask": fmask}, rng.standard_normal((2, 4, 5, 8)).astype(np.float32)),
        ({"is_causal": True, "scale": 0.3}, rng.standard_normal((2, 4, 6, 8)).astype(np.float32)),
    ]
    for kw, k in cases:
        (lq, tq), (lk, tk), (lv, tv) = _pair(q), _pair(k), _pair(k * 0.5)
        lkw = {n: lucid.tensor(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
        tkw = {n: torch.tensor(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
        lo = F.scaled_dot_product_attention(lq, lk, lv, **lkw)
        to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **tkw)
        _compare(lo, to)
        (lo * lo).sum().backward()
        (to * to).sum().backward()
        for a, b in ((lq, tq), (lk, tk), (lv, tv)):
            _compare(a.grad, b.grad)


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_parity_sdpa_path_3d_mask_and_per_head_weights(batch_first):
    rng = np.random.default_rng(4)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    mine = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    _copy(mine, theirs)
    with torch.no_grad():
        theirs.in_proj_bias.normal_()
    _copy(mine, theirs)
    n, length = 3, 4
    x = rng.standard_normal((n, length, 8) if batch_first else (length, n, 8)).astype(np.float32)
    mask3 = rng.standard_normal((n * 2, length, length)).astype(np.float32)
    pad = np.zeros((n, length), bool)
    pad[2, 1:] = True
    for need in (False, True):
        (lx, tx) = _pair(x)
        kw_l = dict(attn_mask=lucid.tensor(mask3), key_padding_mask=lucid.tensor(pad))
        kw_t = dict(attn_mask=torch.tensor(mask3), key_padding_mask=torch.tensor(pad))
        lo, lw = mine(lx, lx, lx, need_weights=need, average_attn_weights=False, **kw_l)
        to, tw = theirs(tx, tx, tx, need_weights=need, average_attn_weights=False, **kw_t)
        _compare(lo, to)
        if need:
            _compare(lw, tw)
        else:
            assert lw is None and tw is None
        lo.sum().backward()
        to.sum().backward()
        _compare(lx.grad, tx.grad)
        for name, p in theirs.named_parameters():
            _compare(dict(mine.named_parameters())[name].grad, p.grad)
            p.grad = None
        mine.zero_grad()
    # unbatched input with a causal mask and the is_causal hint
    u = x[0] if batch_first else x[:, 0]
    causal = torch.nn.Transformer.generate_square_subsequent_mask(length)
    lo, _ = mine(*[lucid.tensor(u)] * 3, attn_mask=lucid.tensor(causal.numpy()), is_causal=True,
                 need_weights=False)  # fmt: skip
    to, _ = theirs(*[torch.tensor(u)] * 3, attn_mask=causal, is_causal=True, need_weights=False)
    _compare(lo, to)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_parity_with_padding_and_eval_dropout(norm_first):
    rng = np.random.default_rng(5)
    kw = dict(dim_feedforward=16, dropout=0.3, norm_first=norm_first, batch_first=True)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, **kw).eval()
    mine = nn.TransformerEncoderLayer(8, 2, **kw).eval()
    _copy(mine, theirs)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    pad = np.zeros((2, 5), bool)
    pad[0, 3:] = True
    (lx, tx) = _pair(x)
    lo = mine(lx, src_key_padding_mask=lucid.tensor(pad))
    to = theirs(tx, src_key_padding_mask=torch.tensor(pad))
    _compare(lo, to)
    (lo * lo).sum().backward()
    (to * to).sum().backward()
    _compare(lx.grad, tx.grad)
    for name, p in theirs.named_parameters():
        _compare(dict(mine.named_parameters())[name].grad, p.grad)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_model_parity():
    rng = np.random.default_rng(6)
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0)
    mine = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    _copy(mine, theirs)
    src = rng.standard_normal((6, 2, 8)).astype(np.float32)
    tgt = rng.standard_normal((4, 2, 8)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    (ls, ts), (lt, tt) = _pair(src), _pair(tgt)
    lo = mine(ls, lt, tgt_mask=lucid.tensor(mask.numpy()))
    to = theirs(ts, tt, tgt_mask=mask)
    _compare(lo, to)
    lo.sum().backward()
    to.sum().backward()
    _compare(ls.grad, ts.grad)
    _compare(lt.grad, tt.grad)
    for name, p in theirs.named_parameters():
        _compare(dict(mine.named_parameters())[name].grad, p.grad)


def test_reprs_and_module_trees_match_pytorch():
    assert repr(nn.MultiheadAttention(8, 2)) == repr(torch.nn.MultiheadAttention(8, 2))
    kw = dict(dim_feedforward=16, norm_first=True, bias=False)
    for name in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        mine, theirs = getattr(nn, name)(8, 2, **kw), getattr(torch.nn, name)(8, 2, **kw)
        assert [(n, type(m).__name__) for n, m in mine.named_modules()] == [
            (n, type(m).__name__) for n, m in theirs.named_modules()
        ]
        assert list(mine.state_dict()) == list(theirs.state_dict())


def _pooled(make, named, copies=16):
    """Each parameter's values over ``copies`` fresh modules (enough for a stable std)."""
    pools: dict[str, list[np.ndarray]] = {}
    for _ in range(copies):
        for name, p in named(make()):
            pools.setdefault(name, []).append(p.detach().numpy().ravel())
    return {k: np.concatenate(v) for k, v in pools.items()}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_default_init_statistics_match_pytorch():
    lucid.manual_seed(0)
    torch.manual_seed(0)
    for args, kw, copies in (((64, 4), {"add_bias_kv": True}, 16),
                             ((32, 2, 1, 1, 64), {}, 2)):  # fmt: skip
        cls = "MultiheadAttention" if len(args) == 2 else "Transformer"
        mine = _pooled(lambda: getattr(nn, cls)(*args, **kw),
                       lambda m: m.named_parameters(), copies)  # fmt: skip
        theirs = _pooled(lambda: getattr(torch.nn, cls)(*args, **kw),
                         lambda m: m.named_parameters(), copies)  # fmt: skip
        assert list(mine) == list(theirs)
        for name, b in theirs.items():
            a, noise = mine[name], 4 / np.sqrt(b.size)  # ~3 standard errors of two samples
            np.testing.assert_allclose(a.std(), b.std(), rtol=0.05 + noise, atol=1e-7,
                                       err_msg=name)  # fmt: skip
            np.testing.assert_allclose(a.mean(), b.mean(), atol=noise * b.std() + 1e-7,
                                       err_msg=name, rtol=1e-7)  # fmt: skip


@pytest.mark.parametrize("causal", [True, False])
def test_sdpa_one_node_path_parity_gpt_shapes(causal):
    """nanoGPT's attention shapes (heads split from one projection) in float32: values and
    gradients of the one-node path against torch's."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 64, 3 * 128)).astype(np.float32)
    g = rng.standard_normal((3, 4, 64, 32)).astype(np.float32)
    outs = []
    for fw, f in ((lucid, F), (torch, torch.nn.functional)):
        xt = fw.tensor(x.copy(), requires_grad=True)
        q, k, v = (t.reshape(3, 64, 4, 32).transpose(1, 2) for t in xt.split(128, dim=2))
        y = f.scaled_dot_product_attention(q, k, v, is_causal=causal)
        y.backward(fw.tensor(g))
        outs.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("pad_dtype", ["bool", "float32"])
@pytest.mark.parametrize("mask_dtype", ["bool", "float32"])
def test_mismatched_padding_and_attention_mask_types_warn_as_torch(
    pad_dtype: str, mask_dtype: str
) -> None:
    # pytorch/examples language_translation: a float causal mask beside bool padding masks
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 2, 8)).astype(np.float32)
    pad = np.zeros((2, 5), bool)
    pad[1, 4] = True
    mask = np.triu(np.ones((5, 5), bool), 1)
    pad_a = pad if pad_dtype == "bool" else np.where(pad, -np.inf, 0).astype(np.float32)
    mask_a = mask if mask_dtype == "bool" else np.where(mask, -np.inf, 0).astype(np.float32)
    tm = torch.nn.MultiheadAttention(8, 2)
    lm = nn.MultiheadAttention(8, 2)
    _copy(lm, tm)
    results = []
    for mod, m in ((torch, tm), (lucid, lm)):
        with pytest.warns() if pad_dtype != mask_dtype else _no_warning() as record:
            out, _ = m(*(mod.tensor(x),) * 3, key_padding_mask=mod.tensor(pad_a),
                       attn_mask=mod.tensor(mask_a))  # fmt: skip
        if record is not None:
            texts = [str(w.message) for w in record]
            assert _MISMATCHED in texts, texts
        results.append(out)
    _compare(results[1], results[0])


_MISMATCHED = (
    "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same "
    "type for both instead."
)


class _no_warning:  # noqa: N801
    def __enter__(self) -> None:
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error")
        return None

    def __exit__(self, *exc: object) -> None:
        self._cm.__exit__(*exc)
