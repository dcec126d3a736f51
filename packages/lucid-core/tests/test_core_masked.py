"""lucid.masked: torch.masked's reductions on dense tensors (identities, broadcasting masks,
fully masked-out slices, gradients by finite differences, and values against torch)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck

M = lucid.masked
ROWS = np.array(
    [[True, False, True, False], [False, False, False, False], [True, True, True, True]]
)


def _x(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((3, 4))


def test_sum_and_mean_skip_masked_out_elements() -> None:
    x, mask = _x(), ROWS
    np.testing.assert_allclose(
        M.sum(lucid.tensor(x), 1, mask=lucid.tensor(mask)).numpy(),
        np.where(mask, x, 0).sum(1),
        rtol=1e-12,
        atol=1e-12,
    )
    got = M.mean(lucid.tensor(x), 1, mask=lucid.tensor(mask)).numpy()
    np.testing.assert_allclose(got[[0, 2]], [x[0, [0, 2]].mean(), x[2].mean()], 1e-12, 1e-12)
    assert math.isnan(got[1])  # a fully masked-out row has no mean


def test_fully_masked_reductions_give_their_identity() -> None:
    x, none = lucid.tensor(_x()), lucid.zeros(3, 4, dtype=lucid.bool)
    assert M.amax(x, 1, mask=none).tolist() == [-math.inf] * 3
    assert M.amin(x, 1, mask=none).tolist() == [math.inf] * 3
    assert M.prod(x, 1, mask=none).tolist() == [1.0] * 3
    assert M.logsumexp(x, 1, mask=none).tolist() == [-math.inf] * 3
    ints = lucid.tensor([[3, 1], [2, 5]])
    assert M.amax(ints, 1, mask=lucid.tensor([[False, False], [True, False]])).tolist() == [
        lucid.iinfo(lucid.int64).min,
        2,
    ]


def test_a_mask_broadcasts_and_reads_as_bool() -> None:
    x = lucid.tensor(_x())
    row = lucid.tensor([1, 0, 1, 0])  # int mask, fewer dims
    np.testing.assert_allclose(
        M.sum(x, mask=row).item(), float(_x()[:, [0, 2]].sum()), rtol=1e-12, atol=1e-12
    )
    with pytest.raises(IndexError, match="mask dimensionality higher"):
        M.sum(x, mask=lucid.ones(2, 3, 4, dtype=lucid.bool))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        M.sum(x, (1, -1))


def test_sum_of_small_ints_is_int64_and_mean_wants_floats() -> None:
    ints = lucid.tensor([[1, 2], [3, 4]], dtype=lucid.int32)
    assert M.sum(ints, 0).dtype == lucid.int64
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        M.mean(ints)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, m: M.sum(x, 1, mask=m),
        lambda x, m: M.prod(x, (0, 1), mask=m),
        lambda x, m: M.amax(x, 0, mask=m),
        lambda x, m: M.logsumexp(x, 1, mask=m),
        lambda x, m: M.var(x, 1, mask=m, correction=0),
        lambda x, m: M.std(x, 1, mask=m),
        lambda x, m: M.norm(x, 3.0, 1, mask=m),
        lambda x, m: M.softmax(x, 1, mask=m),
        lambda x, m: lucid.where(m, M.log_softmax(x, 0, mask=m), 0.0),  # -inf where out
        lambda x, m: M.normalize(x, 2.0, 1, mask=m),
        lambda x, m: M.cumprod(x, 1, mask=m),
    ],
)
def test_gradients_by_finite_differences(fn: object) -> None:
    mask = lucid.tensor([[True, False, True, True], [True, True, False, True]])
    x = lucid.tensor(_x(1)[:2] + 0.1, requires_grad=True)
    assert gradcheck(lambda t: fn(t, mask), (x,))  # type: ignore[operator]


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("sum", (1,), {"keepdim": True}),
        ("prod", (), {}),
        ("amin", ((0, 1),), {}),
        ("argmax", (1,), {}),
        ("argmin", (0,), {"keepdim": True}),
        ("mean", (0,), {}),
        ("median", (1,), {}),
        ("var", (1,), {"correction": 0}),
        ("std", (None, True), {}),
        ("norm", (1.5, 1), {}),
        ("cumsum", (1,), {}),
        ("softmin", (1,), {}),
        ("normalize", (1.0, 0), {}),
    ],
)
def test_same_values_as_torch(
    name: str, args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    torch = pytest.importorskip("torch")
    x, mask = _x(2), ROWS
    want = getattr(torch.masked, name)(
        torch.tensor(x), *args, mask=torch.tensor(mask), **kwargs
    ).numpy()
    got = getattr(M, name)(lucid.tensor(x), *args, mask=lucid.tensor(mask), **kwargs).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True)
