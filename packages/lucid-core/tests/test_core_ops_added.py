"""Ops added to close torch's surface (issue 29): what the op-table samples cannot say (shapes
as arguments, error messages, NumPy references for quantile/histogram/kron)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def test_broadcast_shapes_follows_numpy_and_rejects_mismatches() -> None:
    assert lucid.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert lucid.broadcast_shapes() == ()
    assert lucid.broadcast_shapes((0, 1), (4,)) == np.broadcast_shapes((0, 1), (4,))
    with pytest.raises(RuntimeError, match="Shape mismatch"):
        lucid.broadcast_shapes((2, 1), (3, 2))


@pytest.mark.parametrize("how", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(how: str) -> None:
    a = np.random.default_rng(0).standard_normal((4, 7))
    q = np.array([0.0, 0.1, 0.5, 0.93, 1.0])
    got = lucid.quantile(lucid.tensor(a), lucid.tensor(q), dim=1, interpolation=how)
    np.testing.assert_allclose(got.numpy(), np.quantile(a, q, axis=1, method=how),
                               rtol=1e-12, atol=1e-12)  # fmt: skip


def test_quantile_errors_name_the_problem() -> None:
    x = lucid.randn(5)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        lucid.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="float or double"):
        lucid.quantile(lucid.arange(5), 0.5)
    with pytest.raises(RuntimeError, match="non-empty"):
        lucid.quantile(lucid.zeros(0), 0.5)


def test_histogram_and_kron_match_numpy() -> None:
    a = np.random.default_rng(1).standard_normal(50)
    hist, edges = lucid.histogram(lucid.tensor(a), 6, range=(-1.5, 2.0))
    want, want_edges = np.histogram(a, 6, range=(-1.5, 2.0))
    np.testing.assert_array_equal(hist.numpy(), want)
    np.testing.assert_allclose(edges.numpy(), want_edges, rtol=1e-12, atol=1e-12)
    b = np.arange(6.0).reshape(2, 3)
    c = np.arange(4.0).reshape(2, 1, 2)
    np.testing.assert_array_equal(lucid.kron(lucid.tensor(b), lucid.tensor(c)).numpy(),
                                  np.kron(b, c))  # fmt: skip


def test_select_and_splits_reject_bad_arguments() -> None:
    x = lucid.zeros(3, 4)
    with pytest.raises(IndexError, match="out of range"):
        lucid.select(x, 0, 3)
    with pytest.raises(RuntimeError, match="not divisible"):
        lucid.hsplit(x, 3)
    with pytest.raises(RuntimeError, match="at least 3 dimension"):
        lucid.dsplit(x, 2)
    with pytest.raises(RuntimeError, match="rotation dims"):
        lucid.rot90(x, 1, [0, 0])
