"""Dropout ranks vs PyTorch: the same warnings (category and wording) and mask shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _warnings(fn, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = fn(x, 0.5)
    return [(w.category, str(w.message)) for w in caught], y


def _pattern(y: np.ndarray) -> tuple[bool, bool]:
    """(some row mixes kept and dropped, every row is all-or-nothing) of a 2-D result."""
    zero = y == 0
    whole = zero.all(axis=1) | (~zero).all(axis=1)
    return bool((~whole).any()), bool(whole.all())


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
@pytest.mark.parametrize("shape", [(64, 32), (8, 16, 5), (2, 4, 3, 3), (2, 3, 4, 2, 2)])
def test_warnings_match_torch(name: str, shape: tuple[int, ...]) -> None:
    try:
        want, _ = _warnings(getattr(torch.nn.functional, name), torch.ones(shape))
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)[:30]):
            getattr(F, name)(lucid.ones(*shape), 0.5)
        return
    got, _ = _warnings(getattr(F, name), lucid.ones(*shape))
    assert got == want


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
def test_two_dim_masks_match_torch(name: str) -> None:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(torch.nn.functional, name)(torch.ones(64, 32), 0.5).numpy()
        got = getattr(F, name)(lucid.ones(64, 32), 0.5).numpy()
    assert _pattern(got) == _pattern(want)
    np.testing.assert_allclose(np.unique(got), np.unique(want), rtol=0, atol=0)
