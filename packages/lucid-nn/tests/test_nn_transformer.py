"""Transformer layers and stacks: wiring (post-/pre-norm), masks, names, gradchecks, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck

RNG = np.random.default_rng(5)


def _t(*shape: int, grad: bool = True) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=grad)


def _np(t: lucid.Tensor) -> np.ndarray:
    return t.detach().numpy()


ENCODER_NAMES = [
    "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
    "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
    "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
]  # fmt: skip


def test_state_dict_names_are_pytorchs():
    enc = nn.TransformerEncoderLayer(8, 2, 16)
    assert list(enc.state_dict()) == ENCODER_NAMES
    assert enc.linear1.weight.shape == (16, 8) and enc.linear2.weight.shape == (8, 16)
    dec = nn.TransformerDecoderLayer(8, 2, 16)
    names = list(dec.state_dict())
    assert names[:4] == ENCODER_NAMES[:4]
    cross = ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert names[4:8] == [f"multihead_attn.{n}" for n in cross]
    assert names[-2:] == ["norm3.weight", "norm3.bias"]
    assert [n for n, _ in dec.named_children()] == [
        "self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
        "norm3", "dropout1", "dropout2", "dropout3",
    ]  # fmt: skip
    model = nn.Transformer(8, 2, 2, 1, 16)
    keys = list(model.state_dict())
    assert "encoder.layers.1.self_attn.in_proj_weight" in keys
    assert "encoder.norm.weight" in keys and "decoder.norm.bias" in keys
    assert "decoder.layers.0.multihead_attn.out_proj.weight" in keys
    no_bias = nn.TransformerEncoderLayer(8, 2, 16, bias=False)
    assert not any(n.endswith("bias") for n in no_bias.state_dict())


def _mha(attn: nn.MultiheadAttention, q, kv, mask=None):
    return attn(q, kv, kv, attn_mask=mask, need_weights=False)[0]


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_wiring(norm_first):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                       norm_first=norm_first).double()  # fmt: skip
    x = _t(5, 2, 8, grad=False)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=lucid.float64)

    def ff(h):
        return layer.linear2(F.gelu(layer.linear1(h)))

    if norm_first:
        h = x + _mha(layer.self_attn, layer.norm1(x), layer.norm1(x), mask)
        want = h + ff(layer.norm2(h))
    else:
        h = layer.norm1(x + _mha(layer.self_attn, x, x, mask))
        want = layer.norm2(h + ff(h))
    np.testing.assert_allclose(_np(layer(x, src_mask=mask)), _np(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_wiring(norm_first):
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first,
                                       batch_first=True).double()  # fmt: skip
    x, mem = _t(2, 4, 8, grad=False), _t(2, 6, 8, grad=False)

    def ff(h):
        return layer.linear2(F.relu(layer.linear1(h)))

    if norm_first:
        h = x + _mha(layer.self_attn, layer.norm1(x), layer.norm1(x))
        h = h + _mha(layer.multihead_attn, layer.norm2(h), mem)
        want = h + ff(layer.norm3(h))
    else:
        h = layer.norm1(x + _mha(layer.self_attn, x, x))
        h = layer.norm2(h + _mha(layer.multihead_attn, h, mem))
        want = layer.norm3(h + ff(h))
    np.testing.assert_allclose(_np(layer(x, mem)), _np(want), rtol=1e-12, atol=1e-12)


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    assert m.dtype == np.float32
    want = np.where(np.arange(4)[None, :] > np.arange(4)[:, None], -np.inf, 0.0)
    np.testing.assert_array_equal(m, want)


def test_causal_mask_and_is_causal_hint():
    enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = lucid.randn(2, 5, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    y = enc(x, src_mask=mask)
    np.testing.assert_allclose(_np(enc(x, src_mask=mask, is_causal=True)), _np(y), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    x2 = x.detach().clone()
    x2.data[:, -1] += 1.0  # changing the last position must not change earlier outputs
    np.testing.assert_allclose(_np(y)[:, :-1], _np(enc(x2, src_mask=mask))[:, :-1], rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    assert not np.allclose(_np(y)[:, -1], _np(enc(x2, src_mask=mask))[:, -1], rtol=1e-5, atol=1e-8)
    stack = nn.TransformerEncoder(enc, 2)
    np.testing.assert_allclose(_np(stack(x, mask=mask, is_causal=True)), _np(stack(x, mask=mask)),
                               rtol=1e-5, atol=1e-6)  # fmt: skip


def test_key_padding_mask_hides_padded_positions():
    enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = lucid.randn(2, 4, 8)
    pad = lucid.tensor([[False, False, False, True], [False, False, False, False]])
    y = enc(x, src_key_padding_mask=pad)
    x2 = x.detach().clone()
    x2.data[0, 3] += 5.0  # the padded key of sample 0 must not matter to its other positions
    y2 = enc(x2, src_key_padding_mask=pad)
    np.testing.assert_allclose(_np(y)[0, :3], _np(y2)[0, :3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(y)[1], _np(y2)[1], rtol=1e-6, atol=1e-6)
    dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    t = lucid.randn(2, 3, 8)
    a = dec(t, x, memory_key_padding_mask=pad)
    b = dec(t, x2, memory_key_padding_mask=pad)
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    assert not np.allclose(_np(dec(t, x)), _np(dec(t, x2)), rtol=1e-5, atol=1e-8)


def test_encoder_layer_gradcheck():
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    x = _t(3, 1, 4)
    mask = lucid.tensor([[False, True, True], [False, False, True], [False, False, False]])
    assert gradcheck(lambda x: layer(x, src_mask=mask), (x,))
    assert gradcheck(lambda w: layer(x.detach()), (layer.self_attn.in_proj_weight,))


def test_decoder_layer_gradcheck():
    layer = nn.TransformerDecoderLayer(4, 1, 6, dropout=0.0, batch_first=True).double()
    x, mem = _t(1, 2, 4), _t(1, 3, 4)
    assert gradcheck(lambda x, m: layer(x, m), (x, mem))


def test_stacks_copy_layers_and_apply_norm():
    enc_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    stack = nn.TransformerEncoder(enc_layer, 2, norm=nn.LayerNorm(8))
    assert len(stack.layers) == 2 and stack.num_layers == 2
    assert stack.layers[0].linear1.weight is not stack.layers[1].linear1.weight
    np.testing.assert_array_equal(_np(stack.layers[1].linear1.weight),
                                  _np(enc_layer.linear1.weight))  # fmt: skip
    x = lucid.randn(2, 5, 8)
    want = stack.norm(stack.layers[1](stack.layers[0](x)))
    np.testing.assert_allclose(_np(stack(x)), _np(want), rtol=1e-6, atol=1e-6)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, batch_first=True), 2)
    assert dec(lucid.randn(2, 4, 8), x).shape == (2, 4, 8)


def test_transformer_model_shapes_init_and_modes():
    model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.3)
    src, tgt = lucid.randn(5, 2, 8), lucid.randn(4, 2, 8)
    assert model(src, tgt).shape == (4, 2, 8)
    w = model.encoder.layers[0].linear1.weight
    bound = math.sqrt(6.0 / (8 + 16))  # xavier_uniform_ on every matrix, as PyTorch
    assert np.abs(_np(w)).max() <= bound and np.abs(_np(w)).max() > 0.8 * bound
    model.eval()
    np.testing.assert_array_equal(_np(model(src, tgt)), _np(model(src, tgt)))
    model.train()
    lucid.manual_seed(0)
    assert not np.allclose(_np(model(src, tgt)), _np(model(src, tgt)), rtol=1e-5, atol=1e-8)
    bf = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
    assert bf(lucid.randn(2, 5, 8), lucid.randn(2, 3, 8)).shape == (2, 3, 8)
    unbatched = nn.TransformerEncoderLayer(8, 2, 16)
    assert unbatched(lucid.randn(5, 8)).shape == (5, 8)


def test_activation_choices():
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation=lambda t: t * 0.0, dropout=0.0)
    x = lucid.randn(3, 2, 8)
    h = layer.norm1(x + layer.self_attn(x, x, x, need_weights=False)[0])
    want = layer.norm2(h + layer.linear2.bias)  # the feed-forward reduces to linear2's bias
    np.testing.assert_allclose(_np(layer(x)), _np(want), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_transformer_layer_trains():
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.1, norm_first=True)
    layer(lucid.randn(3, 2, 4)).sum().backward()
    assert all(p.grad is not None for p in layer.parameters())


def test_errors_name_the_layer_and_shapes():
    enc = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer expected src of shape "
                                         r"\(N, L, 8\) or \(L, 8\), got \(2, 5, 6\)"):  # fmt: skip
        enc(lucid.randn(2, 5, 6))
    with pytest.raises(RuntimeError, match="TransformerEncoderLayer expected input of dtype"):
        enc(lucid.randn(2, 5, 8, dtype=lucid.float64))
    dec = nn.TransformerDecoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match=r"TransformerDecoderLayer expected memory of shape "
                                         r"\(L, N, 8\)"):  # fmt: skip
        dec(lucid.randn(3, 2, 8), lucid.randn(4, 2, 7))
    model = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        model(lucid.randn(5, 2, 8), lucid.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match=r"feature number of src and tgt must be equal to "
                                           r"d_model \(8\)"):  # fmt: skip
        model(lucid.randn(5, 2, 8), lucid.randn(4, 2, 4))
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        enc(lucid.randn(2, 5, 8), src_mask=lucid.zeros(4, 4))
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.TransformerEncoderLayer(8, 3)


def test_encoder_keeps_pytorchs_attributes():
    # pytorch/examples' word_language_model builds TransformerEncoder(..., enable_nested_tensor
    # by default); programs read these attributes. lucid has no nested-tensor path.
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True, mask_check=False)
    assert (enc.enable_nested_tensor, enc.use_nested_tensor, enc.mask_check) == (True, False, False)
    assert nn.TransformerEncoder(layer, 1).mask_check is True
    flags = [
        nn.TransformerEncoderLayer(8, 2, 16, activation=act).activation_relu_or_gelu
        for act in ("relu", "gelu", F.relu, nn.GELU(), nn.Tanh())
    ]
    assert flags == [1, 2, 1, 2, 0]
    assert enc.layers[0].activation_relu_or_gelu == 1  # the clones keep it
