"""NumPy's ``axis=``/``keepdims=`` on the reductions, as torch's argument parser takes them
(karpathy's nn-zero-to-hero notebooks: ``P /= P.sum(1, keepdims=True)``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import lucid

REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "logsumexp", "std", "var",
              "nansum", "nanmean", "all", "any"]  # fmt: skip


def _x() -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))


@pytest.mark.parametrize("name", REDUCTIONS)
def test_axis_and_keepdims_are_dim_and_keepdim(name: str) -> None:
    x = _x() > 0 if name in ("all", "any") else _x()
    want = getattr(x, name)(1, keepdim=True)
    for got in (
        getattr(x, name)(axis=1, keepdims=True),
        getattr(x, name)(1, keepdims=True),
        getattr(lucid, name)(x, axis=1, keepdims=True),
    ):
        assert got.shape == want.shape == (3, 1)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_values_indices_reductions_and_gradient() -> None:
    x = _x().requires_grad_()
    values, indices = x.max(axis=1, keepdims=True)
    assert values.shape == indices.shape == (3, 1)
    assert lucid.median(x, axis=0).values.shape == (4,)
    x.sum(axis=1, keepdims=True).sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), np.ones((3, 4)), rtol=0, atol=0)


def test_both_spellings_refused_as_torch_refuses() -> None:
    x = _x()
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axis'"):
        x.sum(dim=1, axis=1)
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axis'"):
        lucid.sum(x, 1, axis=1)  # dim given by position
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'keepdims'"):
        x.sum(1, keepdim=True, keepdims=True)


def test_methods_are_the_functions_and_pickle_by_name() -> None:
    assert lucid.Tensor.sum is lucid.sum and lucid.ops.sum is lucid.sum
    assert pickle.loads(pickle.dumps(lucid.sum)) is lucid.sum
    assert "keepdims" not in str(__import__("inspect").signature(lucid.sum))  # torch's names


@pytest.mark.parity
def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    for name in ("sum", "mean", "amax", "logsumexp", "std"):
        want = getattr(torch.tensor(a), name)(axis=0, keepdims=True).numpy()
        got = getattr(lucid.tensor(a), name)(axis=0, keepdims=True).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
