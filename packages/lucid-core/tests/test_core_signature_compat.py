"""Call forms torch accepts that lucid refused or read differently (issue 29's samples):
``flip(x, dims=...)`` and the old positional ``unbiased`` of ``var_mean``/``std_mean``."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

X = np.arange(6.0).reshape(2, 3) ** 1.5


def test_flip_takes_torchs_dims_keyword() -> None:
    x = lucid.tensor(X)
    np.testing.assert_array_equal(lucid.flip(x, dims=[0]).numpy(), X[::-1])
    np.testing.assert_array_equal(x.flip(dims=(0, 1)).numpy(), X[::-1, ::-1])
    np.testing.assert_array_equal(x.flip(1).numpy(), X[:, ::-1])  # the positional forms stay
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        lucid.flip(x, 0, dims=[1])


@pytest.mark.parametrize("unbiased, ddof", [(True, 1), (False, 0)])
def test_var_mean_and_std_mean_read_a_bool_as_unbiased(unbiased: bool, ddof: int) -> None:
    x = lucid.tensor(X)
    v, m = lucid.var_mean(x, unbiased)
    s, m2 = lucid.std_mean(x, unbiased)
    for got, want in ((v, X.var(ddof=ddof)), (s, X.std(ddof=ddof)), (m, X.mean()), (m2, X.mean())):
        assert got.shape == ()
        np.testing.assert_allclose(got.item(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parity
def test_the_call_forms_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x, t = lucid.tensor(X), torch.tensor(X)
    np.testing.assert_array_equal(lucid.flip(x, dims=[1]).numpy(), torch.flip(t, dims=[1]).numpy())
    for fn in ("var_mean", "std_mean"):
        for unbiased in (True, False):
            ours, theirs = getattr(lucid, fn)(x, unbiased), getattr(torch, fn)(t, unbiased)
            for a, b in zip(ours, theirs):
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
