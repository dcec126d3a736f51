"""Dropout ranks as torch reads them: (N, C) input to dropout2d, unbatched dropout1d/3d, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def _dropped(y: lucid.Tensor) -> np.ndarray:
    return y.numpy() == 0.0


def test_dropout2d_on_2d_input_warns_and_drops_elementwise() -> None:
    x = lucid.ones(64, 32)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d, which is deprecated"):
        y = F.dropout2d(x, 0.5)
    zero = _dropped(y)
    assert 0.3 < zero.mean() < 0.7
    assert not (zero.all(axis=1) | (~zero).all(axis=1)).all(), "rows dropped whole"
    np.testing.assert_allclose(y.numpy()[~zero], 2.0, rtol=0, atol=0)


def test_dropout2d_module_on_2d_input_warns() -> None:
    with pytest.warns(UserWarning, match="use dropout instead"):
        nn.Dropout2d(0.3)(lucid.ones(4, 6))


def test_dropout2d_on_3d_input_is_channelwise_1d_with_torch_warning() -> None:
    with pytest.warns(UserWarning, match=r"interpreted as shape \(N, C, L\)"):
        y = F.dropout2d(lucid.ones(8, 16, 5), 0.5)
    zero = _dropped(y)
    assert (zero.all(axis=2) | (~zero).all(axis=2)).all()
    assert 0 < zero[:, :, 0].sum() < zero[:, :, 0].size


def test_dropout2d_4d_input_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.dropout2d(lucid.ones(4, 8, 3, 3), 0.5)
    zero = _dropped(y).reshape(4, 8, 9)
    assert (zero.all(axis=2) | (~zero).all(axis=2)).all()


def test_dropout3d_on_2d_input_warns_and_reads_it_as_one_sample() -> None:
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout3d"):
        y = F.dropout3d(lucid.ones(32, 6), 0.5)
    zero = _dropped(y)
    assert (zero.all(axis=1) | (~zero).all(axis=1)).all(), "torch drops whole rows here"
    assert y.shape == (32, 6)


def test_dropout1d_on_2d_input_is_unbatched_without_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.dropout1d(lucid.ones(32, 6), 0.5)
    zero = _dropped(y)
    assert (zero.all(axis=1) | (~zero).all(axis=1)).all()


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5)])
def test_dropout1d_rejects_other_ranks(shape: tuple[int, ...]) -> None:
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(lucid.ones(*shape))


def test_feature_dropout_needs_two_dims() -> None:
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.dropout2d(lucid.ones(5))


def test_eval_mode_returns_input_unchanged() -> None:
    x = lucid.ones(4, 6)
    with pytest.warns(UserWarning):
        assert F.dropout2d(x, 0.5, training=False) is x
    with pytest.warns(UserWarning):
        assert F.dropout3d(x, 0.5, training=False) is x


def test_inplace_unbatched_dropout_writes_into_input() -> None:
    x = lucid.ones(16, 6)
    y = F.dropout1d(x, 0.5, inplace=True)
    assert y is x
    assert _dropped(x).any() and (x.numpy() == 2.0).any()
