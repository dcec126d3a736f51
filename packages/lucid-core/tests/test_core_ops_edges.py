"""Op behaviour at the edges torch defines: 0-d tensors with a dim, scatter with a small index,
pow at a zero base, copysign's second input, shifts out of range, view(dtype), unfold, cummax
ties and NaN, scatter_reduce, and the error types torch raises."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import lucid

SCALAR_DIM_OPS = ["sum", "mean", "prod", "amax", "amin", "logsumexp", "cumsum", "cumprod",
                  "softmax", "log_softmax", "argmax", "argmin", "all", "any", "std", "var",
                  "count_nonzero", "logcumsumexp"]  # fmt: skip


@pytest.mark.parametrize("name", SCALAR_DIM_OPS)
@pytest.mark.parametrize("dim", [0, -1])
def test_a_0d_tensor_takes_dim_0_and_minus_1(name: str, dim: int) -> None:
    out = getattr(lucid, name)(lucid.tensor(2.0), dim)
    assert out.shape == ()
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(lucid, name)(lucid.tensor(2.0), 1)


def test_cummax_of_a_0d_tensor_is_0d() -> None:
    values, indices = lucid.cummax(lucid.tensor(2.0), 0)
    assert values.shape == indices.shape == () and indices.item() == 0


def test_scatter_addresses_only_the_index_extent() -> None:
    src = lucid.arange(12.0).reshape(3, 4)
    out = lucid.zeros(3, 4).scatter(1, lucid.tensor([[0, 1], [2, 0]]), src)
    assert out.tolist() == [[0, 1, 0, 0], [5, 0, 4, 0], [0, 0, 0, 0]]
    wide = lucid.zeros(3, 4).scatter(1, lucid.tensor([[0, 1, 2, 3, 0]]), lucid.ones(2, 5))
    assert wide.tolist() == [[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]  # row 0 only
    added = lucid.zeros(3, 4).scatter_add(0, lucid.tensor([[0, 1], [2, 0]]), src)
    assert added.tolist() == [[0, 5, 0, 0], [0, 1, 0, 0], [4, 0, 0, 0]]


def test_a_0d_index_or_src_counts_as_1d_for_a_1d_input() -> None:
    # torch's check counts 0-d as 1-D of one entry; pytorch/tutorials' transforms tutorial
    # one-hot encodes a label with `zeros(10).scatter_(0, tensor(y), value=1)`
    one_hot = lucid.zeros(10).scatter_(0, lucid.tensor(3), value=1)
    assert one_hot.tolist() == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    i = lucid.tensor(2)
    assert lucid.zeros(4).scatter(0, i, lucid.tensor(5.0)).tolist() == [0, 0, 5, 0]
    assert lucid.zeros(4).scatter(0, i, lucid.tensor([5.0, 6.0])).tolist() == [0, 0, 5, 0]
    assert lucid.zeros(4).scatter(0, lucid.tensor([2]), lucid.tensor(5.0)).tolist() == [0, 0, 5, 0]
    assert lucid.ones(4).scatter_add(0, i, lucid.tensor(5.0)).tolist() == [1, 1, 6, 1]
    assert lucid.ones(4).scatter_reduce(0, i, lucid.tensor(5.0), "prod").tolist() == [1, 1, 5, 1]
    picked = lucid.arange(4.0).gather(0, i)
    assert picked.shape == () and picked.item() == 2.0  # the result has the index's shape
    pair = lucid.tensor(7.0).gather(0, lucid.tensor([0, 0]))
    assert pair.tolist() == [7.0, 7.0]
    src = lucid.tensor(5.0, dtype=lucid.float64, requires_grad=True)
    x = lucid.zeros(4, dtype=lucid.float64, requires_grad=True)
    (x.scatter(0, i, src) * lucid.arange(1.0, 5.0, dtype=lucid.float64)).sum().backward()
    assert src.grad is not None and src.grad.shape == () and src.grad.item() == 3.0
    assert x.grad is not None and x.grad.tolist() == [1.0, 2.0, 0.0, 4.0]
    with pytest.raises(RuntimeError, match="same number of dimensions as self tensor"):
        lucid.zeros(3, 4).scatter(0, i, 2.0)  # only for a 1-D input, as torch
    with pytest.raises(RuntimeError, match="same number of dimensions as input tensor"):
        lucid.zeros(3, 4).gather(1, i)


def test_scatter_gradient_reaches_a_larger_src() -> None:
    src = lucid.ones(3, 4, dtype=lucid.float64, requires_grad=True)
    lucid.zeros(3, 4).double().scatter(1, lucid.tensor([[0, 1], [2, 0]]), src * 2).sum().backward()
    assert src.grad is not None
    assert src.grad.tolist() == [[2, 2, 0, 0], [2, 2, 0, 0], [0, 0, 0, 0]]


def test_pow_gradients_at_a_zero_base() -> None:
    base = lucid.tensor([0.0, 0.0, 0.0, 0.0, 2.0], requires_grad=True)
    exp = lucid.tensor([-1.0, 0.0, 0.5, 2.0, -1.0], requires_grad=True)
    (base**exp).sum().backward()
    assert base.grad is not None and exp.grad is not None
    np.testing.assert_allclose(base.grad.numpy(), [-math.inf, 0, math.inf, 0, -0.25],
                               rtol=1e-6, atol=1e-7)  # fmt: skip
    np.testing.assert_allclose(exp.grad.numpy(), [-math.inf, 0, 0, 0, 0.5 * math.log(2)],
                               rtol=1e-6, atol=1e-7)  # fmt: skip


def test_copysign_gives_its_second_input_a_zero_gradient() -> None:
    a = lucid.tensor([1.0, -2.0], requires_grad=True)
    b = lucid.tensor([-1.0, 3.0], requires_grad=True)
    lucid.copysign(a, b).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert a.grad.tolist() == [-1.0, -1.0] and b.grad.tolist() == [0.0, 0.0]


def test_shifts_out_of_range_as_torch() -> None:
    x = lucid.tensor([1, -8, 3], dtype=lucid.int8)
    by = lucid.tensor([8, -1, 1], dtype=lucid.int8)
    assert (x << by).tolist() == [0, 0, 6]
    assert (x >> by).tolist() == [0, -1, 1]
    assert (x << 2).tolist() == [4, -32, 12] and (x >> 9).tolist() == [0, -1, 0]
    assert (1 << lucid.tensor([2, 3])).tolist() == [4, 8]
    assert (lucid.tensor([200], dtype=lucid.uint8) >> 8).tolist() == [0]
    with pytest.raises(NotImplementedError, match="integer"):
        _ = lucid.ones(2) << 1


def test_view_dtype_reinterprets_bits() -> None:
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    bits = x.view(lucid.int32)
    assert bits.tolist() == [1065353216, 1073741824] and not bits.requires_grad
    assert lucid.ones(2, 4, dtype=lucid.int16).view(lucid.int32).shape == (2, 2)
    assert lucid.ones(2, dtype=lucid.int32).view(lucid.int16).shape == (4,)
    with pytest.raises(RuntimeError, match="cannot be 0"):
        lucid.tensor(1.0).view(lucid.int16)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        lucid.ones(3, dtype=lucid.int16).view(lucid.int32)


def test_unfold_windows_and_errors() -> None:
    assert lucid.arange(5.0).unfold(0, 2, 2).tolist() == [[0, 1], [2, 3]]
    assert lucid.ones(2, 3, 4).unfold(1, 2, 1).shape == (2, 2, 4, 2)
    assert lucid.tensor(3.0).unfold(0, 1, 1).tolist() == [3.0]
    with pytest.raises(RuntimeError, match="maximum size"):
        lucid.arange(5.0).unfold(0, 6, 1)
    with pytest.raises(RuntimeError, match="step"):
        lucid.arange(5.0).unfold(0, 2, 0)


def test_cummax_takes_the_last_tie_and_keeps_nan() -> None:
    values, idx = lucid.cummax(lucid.tensor([1.0, 3.0, 3.0, 2.0, 5.0, 5.0]), 0)
    assert values.tolist() == [1, 3, 3, 3, 5, 5] and idx.tolist() == [0, 1, 2, 2, 4, 5]
    _, idx = lucid.cummax(lucid.tensor([1.0, math.nan, 3.0, math.nan, 0.0]), 0)
    assert idx.tolist() == [0, 1, 1, 3, 3]


def test_logcumsumexp_and_logaddexp_do_not_overflow() -> None:
    out = lucid.logcumsumexp(lucid.tensor([0.0, 1000.0, 1.0], dtype=lucid.float64), 0)
    np.testing.assert_allclose(out.numpy(), [0.0, 1000.0, 1000.0], rtol=1e-12, atol=1e-12)
    both = lucid.logaddexp(lucid.tensor([1000.0]), lucid.tensor([1000.0]))
    np.testing.assert_allclose(both.numpy(), [1000.0 + math.log(2)], rtol=1e-6, atol=1e-6)


def test_scatter_reduce_values() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0])
    i, s = lucid.tensor([0, 0, 2]), lucid.tensor([5.0, 7.0, 1.0])
    assert x.scatter_reduce(0, i, s, "amax").tolist() == [7, 2, 3]
    assert x.scatter_reduce(0, i, s, "amin", include_self=False).tolist() == [5, 2, 1]
    assert x.scatter_reduce(0, i, s, "prod").tolist() == [35, 2, 3]
    mean = x.scatter_reduce(0, i, s, "mean").numpy()
    np.testing.assert_allclose(mean, [13 / 3, 2, 2], rtol=1e-6, atol=1e-6)
    ints = lucid.tensor([[1, 2, 3], [4, 5, 6]])
    out = ints.scatter_reduce(1, lucid.tensor([[0, 0], [1, 1]]), lucid.tensor([[3, 4], [5, 7]]),
                              "mean", include_self=False)  # fmt: skip
    assert out.tolist() == [[3, 2, 3], [4, 6, 6]]  # integer means round down
    y = x.clone()
    y.scatter_reduce_(0, i, s, "sum")
    assert y.tolist() == [13, 2, 4]
    with pytest.raises(RuntimeError, match="reduce argument must be either sum"):
        x.scatter_reduce(0, i, s, "median")
    with pytest.raises(RuntimeError, match="add or multiply"):
        x.scatter(0, i, s, reduce="sum")


def test_amax_ties_excluded_self_does_not_take_a_share() -> None:
    s = lucid.tensor([3.0, 5.0], dtype=lucid.float64, requires_grad=True)
    src = lucid.tensor([3.0, 1.0], dtype=lucid.float64, requires_grad=True)
    s.scatter_reduce(0, lucid.tensor([0, 0]), src, "amax", include_self=False).sum().backward()
    assert s.grad is not None and src.grad is not None
    assert src.grad.tolist() == [1.0, 0.0] and s.grad.tolist() == [0.0, 1.0]


BAD_CALLS: dict[str, Any] = {
    "div_rounding_mode": lambda L: L.div(L.ones(2), L.ones(2), rounding_mode="round"),
    "einsum_operands": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)),
    "einsum_subscripts": lambda L: L.einsum("ijk->i", L.ones(2, 3)),
    "norm_order": lambda L: L.ones(2, 3).norm(p="abc"),
    "linspace_steps": lambda L: L.linspace(0, 1, -1),
    "eye_size": lambda L: L.eye(-1),
    "randint_range": lambda L: L.randint(5, 2, (3,)),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_errors_torch_raises_as_runtime_error(name: str) -> None:
    with pytest.raises(RuntimeError):
        BAD_CALLS[name](lucid)


def test_sum_to_size_of_an_empty_size_is_the_sum() -> None:
    """torch's sum_to with a size of (): always ``sum()``, so bool and integer tensors (0-d ones
    too) become int64; a size equal to the shape is the tensor itself."""
    b = lucid.tensor([[True, False, True], [True, True, False]])
    assert b.sum_to_size(()).dtype is lucid.int64 and b.sum_to_size(()).item() == 4
    assert lucid.tensor(True).sum_to_size(()).dtype is lucid.int64
    assert lucid.tensor(3, dtype=lucid.int8).sum_to_size([]).dtype is lucid.int64
    assert b.sum_to_size(1, 3).dtype is lucid.int64
    assert b.sum_to_size(1, 3).tolist() == [[2, 1, 1]]
    assert b.sum_to_size(2, 3) is b
    assert lucid.tensor(2.5).sum_to_size(()).dtype is lucid.float32
    with pytest.raises(RuntimeError, match=r"size \{\[4, 3\]\} is not expandable to size"):
        b.sum_to_size(4, 3)


def test_index_put_accumulate_on_bool_is_a_logical_or() -> None:
    x = lucid.zeros(4, 3, dtype=lucid.bool)
    values = lucid.tensor([[True, False, False], [False, False, True], [False, False, False]])
    out = lucid.index_put(x, (lucid.tensor([0, 0, 2]),), values, accumulate=True)
    assert out.dtype is lucid.bool
    assert out.tolist() == [[True, False, True], [False] * 3, [False] * 3, [False] * 3]
    flat = lucid.index_put(lucid.zeros(3, dtype=lucid.bool), (lucid.tensor([1, 1]),),
                           lucid.tensor([True, True]), accumulate=True)  # fmt: skip
    assert flat.tolist() == [False, True, False]


def test_arange_out_and_integer_steps() -> None:
    """torch's rules: ``out=`` gives the dtype (and keeps its shape when the count fits); int64
    counts the range after truncating to integers, where a fractional step that truncates to
    0 is a ValueError; the other integer dtypes count it unrounded."""
    out = lucid.empty(0, dtype=lucid.float64)
    assert lucid.arange(0, 5, out=out) is out and out.dtype is lucid.float64
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    kept = lucid.zeros(5, 1)
    assert lucid.arange(5, out=kept).shape == (5, 1)
    with pytest.raises(ValueError, match="step must be nonzero"):
        lucid.arange(0, 64, 0.5, out=lucid.empty(0, dtype=lucid.int64))
    with pytest.raises(ValueError, match="step must be nonzero"):
        lucid.arange(0.0, 3.0, 0.4, dtype=lucid.int64)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        lucid.arange(0, 3, 0)
    with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent"):
        lucid.arange(0, -3, 2)
    with pytest.raises(RuntimeError, match="dtype Float does not match dtype of out"):
        lucid.arange(0, 5, dtype=lucid.float32, out=lucid.empty(0, dtype=lucid.float64))
    assert lucid.arange(0.5, 5, 1.5, dtype=lucid.int32).tolist() == [0, 1, 2]
    assert lucid.arange(0.5, 5, 1.5, dtype=lucid.int64).tolist() == [0, 1, 2, 3, 4]
    assert lucid.arange(0, 3, 0.9, dtype=lucid.int16).tolist() == [0, 0, 0, 0]
    with pytest.warns(UserWarning, match="will be resized to a tensor of shape \\(10,\\)"):
        lucid.arange(0, 5, 0.5, out=lucid.zeros(5))
