"""sort, argsort, topk, kthvalue, median, unique, nonzero, searchsorted, bucketize."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck

NAN = float("nan")


def test_sort_is_stable_both_ways_and_nan_is_largest() -> None:
    x = lucid.tensor([2.0, NAN, 1.0, 2.0, 1.0])
    v, i = lucid.sort(x)
    assert i.tolist() == [2, 4, 0, 3, 1]
    np.testing.assert_array_equal(v.numpy(), [1, 1, 2, 2, NAN])
    v, i = lucid.sort(x, descending=True)
    assert i.tolist() == [1, 0, 3, 2, 4]
    np.testing.assert_array_equal(v.numpy(), [NAN, 2, 2, 1, 1])
    assert x.argsort(descending=True).tolist() == [1, 0, 3, 2, 4]


def test_sort_along_dims_and_integer_and_bool_inputs() -> None:
    a = np.random.default_rng(0).standard_normal((3, 4, 5))
    for d in range(3):
        v, i = lucid.tensor(a).sort(d)
        np.testing.assert_array_equal(v.numpy(), np.sort(a, axis=d))
        np.testing.assert_array_equal(i.numpy(), np.argsort(a, axis=d, kind="stable"))
    ints = lucid.tensor([3, 1, 2], dtype=lucid.uint8)
    assert ints.sort(descending=True).values.tolist() == [3, 2, 1]
    assert lucid.tensor([True, False, True]).sort().values.tolist() == [False, True, True]
    zero = lucid.tensor(5.0).sort()
    assert zero.values.item() == 5.0 and zero.indices.item() == 0


def test_topk_and_kthvalue() -> None:
    x = lucid.tensor([[1.0, 5.0, 3.0, 4.0], [0.0, -1.0, 8.0, 2.0]])
    v, i = x.topk(2)
    assert v.tolist() == [[5.0, 4.0], [8.0, 2.0]] and i.tolist() == [[1, 3], [2, 3]]
    v, i = lucid.topk(x, 3, dim=1, largest=False)
    assert v.tolist() == [[1.0, 3.0, 4.0], [-1.0, 0.0, 2.0]]
    assert lucid.topk(x, 1, dim=0).indices.tolist() == [[0, 0, 1, 0]]
    v, i = x.kthvalue(2, 1)
    assert v.tolist() == [3.0, 0.0] and i.tolist() == [2, 0]
    assert x.kthvalue(1, 0, keepdim=True).values.shape == (1, 4)
    with pytest.raises(RuntimeError, match="k out of range"):
        x.topk(5)
    with pytest.raises(RuntimeError, match="k out of range"):
        x.kthvalue(0)


def test_median_is_the_lower_median_and_propagates_nan() -> None:
    x = lucid.tensor([[4.0, 1.0, 3.0, 2.0], [1.0, NAN, 7.0, 0.0]])
    v, i = x.median(1)
    assert v.numpy()[0] == 2.0 and i.tolist()[0] == 3
    assert np.isnan(v.numpy()[1]) and i.tolist()[1] == 1
    v, i = lucid.nanmedian(x, 1)
    assert v.tolist() == [2.0, 1.0] and i.tolist() == [3, 0]
    assert lucid.tensor([3, 9, 1]).median().item() == 3
    assert np.isnan(x.median().item())
    assert lucid.nanmedian(lucid.tensor([NAN, NAN]), 0).values.isnan().item()
    with pytest.raises(RuntimeError, match="cannot be empty"):
        lucid.zeros(0).median()


def test_unique() -> None:
    x = lucid.tensor([[3, 1], [1, 2]])
    assert lucid.unique(x).tolist() == [1, 2, 3]
    u, inv, cnt = lucid.unique(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [[2, 0], [0, 1]] and cnt.tolist() == [2, 1, 1]
    assert inv.dtype is lucid.int64
    rows = lucid.tensor([[1, 2], [0, 5], [1, 2]])
    u, inv = lucid.unique(rows, dim=0, return_inverse=True)
    assert u.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 0, 1]


def test_nonzero() -> None:
    x = lucid.tensor([[0.0, 2.0], [3.0, 0.0]])
    assert x.nonzero().tolist() == [[0, 1], [1, 0]]
    r, c = lucid.nonzero(x, as_tuple=True)
    assert r.tolist() == [0, 1] and c.tolist() == [1, 0]
    assert lucid.nonzero(lucid.zeros(3)).shape == (0, 1)
    assert lucid.nonzero(lucid.tensor(3.0)).shape == (1, 0)
    np.testing.assert_array_equal(x[x.nonzero(as_tuple=True)].numpy(), [2.0, 3.0])


def test_searchsorted_and_bucketize() -> None:
    seq = lucid.tensor([1, 3, 5, 7, 9])
    vals = lucid.tensor([[3, 6, 9], [3, 0, 10]])
    assert lucid.searchsorted(seq, vals).tolist() == [[1, 3, 4], [1, 0, 5]]
    assert lucid.searchsorted(seq, vals, right=True).tolist() == [[2, 3, 5], [2, 0, 5]]
    assert lucid.searchsorted(seq, vals, side="right").tolist() == [[2, 3, 5], [2, 0, 5]]
    assert lucid.searchsorted(seq, 4).item() == 2
    rows = lucid.tensor([[1, 3, 5], [2, 4, 6]])
    assert lucid.searchsorted(rows, lucid.tensor([[3], [3]]), right=True).tolist() == [[2], [1]]
    out = lucid.searchsorted(seq, vals, out_int32=True)
    assert out.dtype is lucid.int32
    unsorted = lucid.tensor([9, 1, 5])
    assert lucid.searchsorted(unsorted, 4, sorter=lucid.tensor([1, 2, 0])).item() == 1
    assert lucid.bucketize(
        lucid.tensor([0.5, 3.0, 10.0]), lucid.tensor([1.0, 3.0, 5.0])
    ).tolist() == [0, 1, 3]
    with pytest.raises(RuntimeError, match="opposites"):
        lucid.searchsorted(seq, vals, right=True, side="left")


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.sort(1).values,
        lambda t: t.sort(0, descending=True).values,
        lambda t: t.topk(2, 1).values,
        lambda t: t.kthvalue(2, 0).values,
        lambda t: t.median(1).values,
        lambda t: t.median(),
        lambda t: lucid.nanmedian(t, 0, keepdim=True).values,
    ],
)
def test_value_gradients_go_to_selected_elements(fn: object) -> None:
    lucid.manual_seed(0)
    x = lucid.randn(3, 4, dtype=lucid.float64, requires_grad=True)
    assert gradcheck(fn, x)  # type: ignore[arg-type]
    assert gradgradcheck(fn, x)  # type: ignore[arg-type]


def test_median_gradient_is_one_hot() -> None:
    x = lucid.tensor([4.0, 1.0, 3.0, 2.0], requires_grad=True)
    x.median().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]
