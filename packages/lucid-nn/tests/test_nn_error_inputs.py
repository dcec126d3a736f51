"""nn.functional inputs torch rejects (its OpInfo ``error_inputs``): lucid raises the same
exception class with a message naming the bad argument, instead of returning a result."""

from __future__ import annotations

import pytest

import lucid
import lucid.nn.functional as F


def test_rms_norm_needs_a_normalized_shape() -> None:
    with pytest.raises(
        RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"
    ):
        F.rms_norm(lucid.zeros(1, 2, 3), [], None, 1e-5)


def test_max_pool_empty_non_batch_dims() -> None:
    with pytest.raises(
        RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor with optional 0 dim"
    ):
        F.max_pool1d(lucid.zeros(0, 10), kernel_size=1)
    with pytest.raises(
        RuntimeError, match="Expected input's non-batch dimensions to have positive"
    ):
        F.max_pool3d(lucid.zeros(0, 1, 2, 10), kernel_size=1)
    assert F.max_pool1d(lucid.zeros(0, 2, 10), kernel_size=2).shape == (0, 2, 5)


def test_prelu_weight_dims() -> None:
    with pytest.raises(
        RuntimeError,
        match="prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2",
    ):
        F.prelu(lucid.zeros(2, 8, 3), lucid.zeros(2, 4))


def test_rrelu_bounds() -> None:
    with pytest.raises(
        RuntimeError, match="Lower bound should be less than or equal to the upper bound"
    ):
        F.rrelu(lucid.zeros(5, 5), lower=0.3, upper=0.1)


def test_triplet_margin_loss_margin() -> None:
    a = lucid.zeros(3, 4)
    with pytest.raises(ValueError, match="margin must be greater than 0, got -1.0"):
        F.triplet_margin_loss(a, a, a, margin=-1.0)


def test_softshrink_lambda() -> None:
    with pytest.raises(
        RuntimeError, match=r"lambda must be in range \[0,.*input dtype.*found -0\.5"
    ):
        F.softshrink(lucid.zeros(1), lambd=-0.5)


def test_embedding_weight_must_be_2d() -> None:
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(lucid.zeros(1, 1, 1, dtype=lucid.int64), lucid.zeros(2, 2, 2))


def test_huber_loss_delta() -> None:
    x = lucid.zeros(5, 4)
    for delta in (0, -1):
        with pytest.raises(
            RuntimeError, match="huber_loss does not support non-positive values for delta"
        ):
            F.huber_loss(x, x, delta=delta)


def test_adaptive_pool_and_conv_exception_classes() -> None:
    with pytest.raises(RuntimeError, match="argument 'output_size' should contain one int"):
        F.adaptive_avg_pool1d(lucid.zeros(1, 2, 3), ())
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        F.adaptive_avg_pool2d(lucid.zeros(2, 2), (1, 1))
    with pytest.raises(ValueError, match="Input dimension should be at least 4"):
        F.adaptive_max_pool3d(lucid.zeros(2, 2, 2), (1, 1, 1))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv3d(lucid.zeros(1, 1, 4, 4, 4), lucid.zeros(1, 1, 2, 2, 2), stride=2, padding="same")


def test_multi_margin_loss_checks_in_torchs_order() -> None:
    """torch checks p and the weight's dims (ValueError), then the target's size and the
    weight's size, and only then the target's dtype (a float target is Long's error)."""
    x, yf = lucid.zeros(5, 4), lucid.zeros(5)
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, yf, weight=lucid.ones(()))
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, yf, weight=lucid.ones(5, 4))
    with pytest.raises(RuntimeError, match=r"Expected target size \[5\], but got \[5, 4\]"):
        F.multi_margin_loss(x, lucid.zeros(5, 4))
    with pytest.raises(RuntimeError, match=r"inconsistent weight size, expected 4 but got \[5\]"):
        F.multi_margin_loss(x, yf, weight=lucid.ones(5))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(x, yf)
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Bool"):
        F.multilabel_margin_loss(x, lucid.zeros(5, 4, dtype=lucid.bool))


def test_multi_margin_loss_of_one_vector_keeps_a_1d_target_shape() -> None:
    x = lucid.tensor([0.1, 0.4, -0.2, 0.3])
    assert F.multi_margin_loss(x, lucid.tensor([1]), reduction="none").shape == (1,)
    assert F.multi_margin_loss(x, lucid.tensor(1), reduction="none").shape == ()


# torch's messages and check order where its OpInfo error_inputs named them (errors gauge)
def test_nn_functional_messages_follow_torch() -> None:
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        F.hardtanh(lucid.ones(1), 0.5, -0.5)
    with pytest.raises(ValueError, match="^abc is not valid$"):
        F.gaussian_nll_loss(lucid.ones(2, 3), lucid.ones(2, 3), lucid.ones(2, 3), reduction="abc")
    with pytest.raises(RuntimeError, match="anchor 1D, positive 2D, and negative 2D inputs"):
        F.triplet_margin_loss(lucid.ones(3), lucid.ones(3, 4), lucid.ones(3, 4))
    with pytest.raises(RuntimeError, match="Not allow zero-dim input tensor."):
        F.prelu(lucid.tensor(1.0), lucid.ones(2))
    assert F.prelu(lucid.tensor(-1.0), lucid.full((1,), 0.5)).item() == -0.5
    with pytest.raises(
        RuntimeError, match="Expected at least 2 dimensions for input tensor but received 1"
    ):
        F.group_norm(lucid.ones(1), 1)
