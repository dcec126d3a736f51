"""Layer behaviour: bad-input errors, running statistics, dropout, embedding, losses."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def _np(t: lucid.Tensor) -> np.ndarray:
    return t.detach().numpy()


# -- errors ---------------------------------------------------------------------------------------
def test_linear_names_layer_and_shapes_on_bad_input() -> None:
    with pytest.raises(ValueError, match=r"Linear expected input with 3 features in the last dim, got \(8, 5\)"):  # fmt: skip  # noqa: E501
        nn.Linear(3, 2)(lucid.randn(8, 5))
    with pytest.raises(
        RuntimeError, match="Linear expected input of dtype lucid.float32.*got lucid.float64"
    ):
        nn.Linear(3, 2)(lucid.randn(8, 3, dtype=lucid.float64))
    with pytest.raises(TypeError, match="Linear expected a lucid.Tensor"):
        nn.Linear(3, 2)(np.zeros((8, 3)))


def test_norm_layers_name_layer_and_shapes_on_bad_input() -> None:
    with pytest.raises(ValueError, match=r"BatchNorm2d expected input with 3 channels, got \(8, 1, 28, 28\)"):  # fmt: skip  # noqa: E501
        nn.BatchNorm2d(3)(lucid.randn(8, 1, 28, 28))
    with pytest.raises(ValueError, match="BatchNorm1d expected 2D or 3D input, got 4D"):
        nn.BatchNorm1d(3)(lucid.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"LayerNorm expected input with trailing shape \(4,\)"):
        nn.LayerNorm(4)(lucid.randn(2, 3))
    with pytest.raises(ValueError, match="GroupNorm expected input with 4 channels"):
        nn.GroupNorm(2, 4)(lucid.randn(2, 3, 5))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(lucid.randn(1, 3))
    with pytest.raises(ValueError, match="Bilinear expected inputs with 3 and 2 features"):
        nn.Bilinear(3, 2, 4)(lucid.randn(5, 3), lucid.randn(5, 3))


def test_layernorm_without_bias_has_only_a_weight() -> None:
    ln = nn.LayerNorm(4, bias=False)
    assert ln.bias is None and list(ln.state_dict()) == ["weight"]
    assert repr(ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)"
    assert repr(nn.LayerNorm(4)).endswith("elementwise_affine=True, bias=True)")
    x = lucid.randn(3, 4)
    with lucid.no_grad():
        ln.weight.fill_(2.0)
    np.testing.assert_allclose(_np(ln(x)), 2 * _np(F.layer_norm(x, (4,))), rtol=1e-5, atol=1e-6)


def test_loss_and_index_errors() -> None:
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(lucid.randn(2, 5), lucid.tensor([0, 5]))
    with pytest.raises(ValueError, match="expected target of shape"):
        F.cross_entropy(lucid.randn(2, 5), lucid.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(lucid.tensor([1.5]), lucid.tensor([1.0]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(lucid.randn(2), lucid.randn(2), reduction="avg")
    with pytest.raises(IndexError, match="index out of range"):
        nn.Embedding(4, 2)(lucid.tensor([4]))
    with pytest.raises(RuntimeError, match="integer dtype"):
        nn.Embedding(4, 2)(lucid.tensor([1.0]))


# -- batch norm -----------------------------------------------------------------------------------
def test_batchnorm_updates_running_stats_with_momentum_and_unbiased_var() -> None:
    bn = nn.BatchNorm1d(2, momentum=0.5)
    x = lucid.tensor([[1.0, 10.0], [3.0, 10.0], [5.0, 16.0]])
    y = bn(x)
    np.testing.assert_allclose(_np(y).mean(0), 0.0, atol=1e-6, rtol=1e-7)
    np.testing.assert_allclose(_np(bn.running_mean), [0.5 * 3.0, 0.5 * 12.0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        _np(bn.running_var), [0.5 + 0.5 * 4.0, 0.5 + 0.5 * 12.0], rtol=1e-6, atol=1e-6
    )
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    y = bn(x)
    expect = (_np(x) - _np(bn.running_mean)) / np.sqrt(_np(bn.running_var) + 1e-5)
    np.testing.assert_allclose(_np(y), expect, rtol=1e-5, atol=1e-6)
    assert int(bn.num_batches_tracked.item()) == 1  # eval leaves the statistics alone


def test_batchnorm_momentum_none_is_a_cumulative_average() -> None:
    bn = nn.BatchNorm1d(1, momentum=None)
    for v in (2.0, 4.0, 9.0):
        bn(lucid.tensor([[v - 1], [v + 1]]))
    np.testing.assert_allclose(_np(bn.running_mean), [5.0], rtol=1e-6, atol=1e-6)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval() -> None:
    bn = nn.BatchNorm2d(2, track_running_stats=False, affine=False).eval()
    assert bn.running_mean is None and list(bn.parameters()) == []
    x = lucid.randn(4, 2, 3, 3) * 3 + 1
    y = _np(bn(x))
    np.testing.assert_allclose(y.mean((0, 2, 3)), 0.0, atol=1e-5, rtol=1e-7)
    np.testing.assert_allclose(y.std((0, 2, 3)), 1.0, atol=1e-3, rtol=1e-7)


def test_batchnorm_3d_input_for_1d_and_5d_for_3d() -> None:
    assert nn.BatchNorm1d(3)(lucid.randn(2, 3, 7)).shape == (2, 3, 7)
    assert nn.BatchNorm3d(3)(lucid.randn(2, 3, 2, 2, 2)).shape == (2, 3, 2, 2, 2)


def test_instance_norm_unbatched_and_running_stats() -> None:
    m = nn.InstanceNorm1d(3, track_running_stats=True, momentum=1.0)
    x = lucid.randn(2, 3, 5)
    y = _np(m(x))
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-5, rtol=1e-7)
    np.testing.assert_allclose(_np(m.running_mean), _np(x).mean(-1).mean(0), rtol=1e-4, atol=1e-6)
    assert nn.InstanceNorm2d(3)(lucid.randn(3, 4, 4)).shape == (3, 4, 4)


# -- dropout --------------------------------------------------------------------------------------
def test_dropout_scales_kept_units_and_is_identity_in_eval() -> None:
    lucid.manual_seed(0)
    d = nn.Dropout(0.25)
    x = lucid.ones(200, 200)
    y = _np(d(x))
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6, atol=1e-6)
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_masks_follow_manual_seed() -> None:
    x = lucid.ones(4, 5)
    lucid.manual_seed(3)
    a = _np(F.dropout(x, 0.5))
    lucid.manual_seed(3)
    b = _np(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, b)


def test_dropout2d_zeros_whole_channels() -> None:
    lucid.manual_seed(1)
    y = _np(nn.Dropout2d(0.5)(lucid.ones(8, 16, 3, 3)))
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))


def test_alpha_dropout_keeps_mean_and_variance() -> None:
    lucid.manual_seed(2)
    x = lucid.randn(500, 400)
    y = _np(nn.AlphaDropout(0.2).train()(x))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.02
    assert nn.AlphaDropout(0.2).eval()(x) is x


# -- embedding, flatten, misc layers --------------------------------------------------------------
def test_embedding_lookup_padding_and_from_pretrained() -> None:
    emb = nn.Embedding(5, 3, padding_idx=1)
    np.testing.assert_array_equal(_np(emb.weight)[1], 0.0)
    out = emb(lucid.tensor([[0, 1], [4, 4]]))
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(_np(out)[1, 0], _np(emb.weight)[4])
    w = lucid.arange(6, dtype=lucid.float32).reshape(3, 2)
    pre = nn.Embedding.from_pretrained(w)
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(_np(pre(lucid.tensor([2]))), [[4.0, 5.0]])


def test_embedding_max_norm_renormalises_used_rows_in_place() -> None:
    w = lucid.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    emb = nn.Embedding.from_pretrained(w, max_norm=1.0)
    emb(lucid.tensor([0, 1]))
    norms = np.linalg.norm(_np(emb.weight), axis=1)
    np.testing.assert_allclose(norms[:2], [1.0, 0.5], rtol=1e-5, atol=1e-6)
    assert norms[2] == pytest.approx(10.0, rel=1e-6, abs=1e-12)  # unused rows are untouched


def test_one_hot() -> None:
    oh = F.one_hot(lucid.tensor([0, 2, 1]))
    assert oh.dtype == lucid.int64
    np.testing.assert_array_equal(_np(oh), np.eye(3)[[0, 2, 1]])
    assert F.one_hot(lucid.tensor([[1]]), 4).shape == (1, 1, 4)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(lucid.tensor([3]), 3)


def test_flatten_unflatten_identity() -> None:
    x = lucid.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)
    assert nn.Unflatten(1, (-1, 4))(lucid.randn(2, 12)).shape == (2, 3, 4)
    assert nn.Identity(54, unused="x")(x) is x


def test_prelu_layer_learns_its_slope() -> None:
    m = nn.PReLU(3)
    assert m.weight.shape == (3,) and float(m.weight[0].item()) == 0.25
    x = lucid.tensor([[-1.0, -2.0, 3.0]])
    np.testing.assert_allclose(_np(m(x)), [[-0.25, -0.5, 3.0]], rtol=1e-7, atol=1e-7)
    m(x).sum().backward()
    np.testing.assert_allclose(_np(m.weight.grad), [-1.0, -2.0, 0.0], rtol=1e-7, atol=1e-7)


def test_activation_values_at_known_points() -> None:
    x = lucid.tensor([-2.0, 0.5, 7.0])
    np.testing.assert_allclose(_np(F.relu6(x)), [0.0, 0.5, 6.0], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(_np(F.leaky_relu(x, 0.1)), [-0.2, 0.5, 7.0], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(
        _np(F.hardsigmoid(x)), [1 / 6, 0.5 / 6 + 0.5, 1.0], rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        _np(F.softplus(x)), np.log1p(np.exp([-2.0, 0.5, 7.0])), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(_np(F.elu(x)), [math.expm1(-2.0), 0.5, 7.0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        _np(F.logsigmoid(lucid.tensor([-200.0]))), [-200.0], rtol=1e-7, atol=1e-7
    )


def test_inplace_activation_writes_into_its_input_without_autograd() -> None:
    x = lucid.tensor([-1.0, 2.0])
    y = nn.ReLU(inplace=True)(x)
    assert y is x
    np.testing.assert_array_equal(_np(x), [0.0, 2.0])
    a = lucid.tensor([-1.0, 2.0], requires_grad=True)
    out = F.relu(a * 1, inplace=True)
    out.sum().backward()
    np.testing.assert_array_equal(_np(a.grad), [0.0, 1.0])


# -- losses ---------------------------------------------------------------------------------------
def test_cross_entropy_known_value_and_reductions() -> None:
    logits = lucid.zeros(2, 4)
    target = lucid.tensor([0, 3])
    assert float(F.cross_entropy(logits, target).item()) == pytest.approx(
        math.log(4), rel=1e-6, abs=1e-12
    )
    none = F.cross_entropy(logits, target, reduction="none")
    assert none.shape == (2,)
    assert float(F.cross_entropy(logits, target, reduction="sum").item()) == pytest.approx(
        2 * math.log(4), rel=1e-6, abs=1e-12
    )
    ig = F.cross_entropy(lucid.tensor([[5.0, 0.0], [0.0, 0.0]]), lucid.tensor([-100, 0]))
    assert float(ig.item()) == pytest.approx(math.log(2), rel=1e-6, abs=1e-12)
    # unbatched (C,) logits with a scalar target
    assert F.cross_entropy(lucid.zeros(3), lucid.tensor(1)).shape == ()


def test_cross_entropy_keeps_float32() -> None:
    loss = nn.CrossEntropyLoss()(lucid.randn(4, 3, requires_grad=True), lucid.tensor([0, 1, 2, 0]))
    assert loss.dtype == lucid.float32


def test_regression_losses_known_values() -> None:
    a = lucid.tensor([0.0, 2.0, -3.0])
    b = lucid.zeros(3)
    assert float(nn.MSELoss()(a, b).item()) == pytest.approx(13 / 3, rel=1e-6, abs=1e-12)
    assert float(nn.L1Loss(reduction="sum")(a, b).item()) == pytest.approx(5.0, rel=1e-6, abs=1e-12)
    assert float(nn.SmoothL1Loss(reduction="sum")(a, b).item()) == pytest.approx(
        1.5 + 2.5, rel=1e-6, abs=1e-12
    )
    assert float(nn.HuberLoss(delta=2.0, reduction="sum")(a, b).item()) == pytest.approx(
        2 + 4, rel=1e-6, abs=1e-12
    )
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(lucid.zeros(3, 1), lucid.zeros(3))


def test_kl_div_zero_target_contributes_zero() -> None:
    logp = lucid.log(lucid.tensor([[0.5, 0.5]]))
    t = lucid.tensor([[1.0, 0.0]])
    assert float(F.kl_div(logp, t, reduction="batchmean").item()) == pytest.approx(
        math.log(2), rel=1e-6, abs=1e-12
    )
