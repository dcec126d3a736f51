"""Integers as torch's int arguments take them: NumPy integers and 0-d integer tensors or arrays
where an int size, dim or count goes (``lucid.zeros(np.prod(shape))``, ``x.sum(np.int64(1))``);
the parity test against torch is lucid-nn's ``test_nn_integer_like_arguments_parity.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.ops._util import index_int, normalize_dim


@pytest.mark.parametrize(
    "value", [3, np.int64(3), np.int32(3), np.uint8(3), np.array(3), lucid.tensor(3)]
)
def test_one_integer_is_an_int(value: Any) -> None:
    got = index_int(value)
    assert got == 3 and type(got) is int
    assert normalize_dim(value, 4) == 3 and type(normalize_dim(value, 4)) is int


@pytest.mark.parametrize(
    "value", [(3,), [3, 4], np.array([3]), lucid.tensor([3]), 3.0, lucid.tensor(3.0), None]
)
def test_what_is_not_one_integer_is_none(value: Any) -> None:
    assert index_int(value) is None


@pytest.mark.parametrize("value", [np.int64(3), np.int32(3), np.array(3), lucid.tensor(3)])
def test_sizes_dims_and_counts(value: Any) -> None:
    x = lucid.ones(2, 3, 4)
    assert lucid.zeros(value).shape == (3,)
    assert lucid.empty(value, 2).shape == (3, 2)
    assert x.sum(value - 2).shape == (2, 4)
    assert x.squeeze(value - 3).shape == (2, 3, 4)
    assert [t.shape for t in x.split(value - 2, 1)] == [(2, 1, 4)] * 3
    assert [t.shape[1] for t in x.chunk(value, 1)] == [1, 1, 1]
    assert [t.shape[2] for t in lucid.tensor_split(x, value, dim=2)] == [2, 1, 1]
    assert x.index_select(value - 3, lucid.zeros(1, dtype=lucid.int64)).shape == (1, 3, 4)
    assert lucid.multinomial(lucid.ones(4), value).shape == (3,)


def test_a_float_size_is_still_refused() -> None:
    with pytest.raises(TypeError, match="must be tuple of ints"):
        lucid.zeros(np.float64(3.0))
    with pytest.raises(TypeError):
        lucid.ones(2, 3).sum(1.0)


def test_the_ops_the_gauge_found_take_a_numpy_integer() -> None:
    """tools/gauges' ``intargs`` found these refusing a NumPy integer (7 December 2026): each
    gives what it gives for the int."""
    a = lucid.tensor([[2.0, 1.0], [0.5, 3.0]])
    x = lucid.tensor([1.5, 2.5, 4.0])
    pairs = [
        (lambda n: lucid.linalg.matrix_power(a, n), 3),
        (lambda n: lucid.linalg.vector_norm(x, ord=n), 3),
        (lambda n: lucid.linalg.norm(x, ord=n), 0),
        (lambda n: lucid.polygamma(n, x), 2),
        (lambda n: lucid.special.polygamma(n, x), 1),
        (lambda n: lucid.mvlgamma(x, n), 2),
        (lambda n: lucid.nonzero_static(a, size=n), 3),
    ]
    for call, n in pairs:
        want = call(n).numpy()
        for value in (np.int64(n), np.int32(n)):
            np.testing.assert_allclose(call(value).numpy(), want, rtol=0, atol=0)
    with pytest.raises(TypeError):
        lucid.polygamma(1.0, x)  # a float is still refused


@pytest.mark.parametrize("exponent", [True, False, np.bool_(True)])
def test_a_bool_exponent_is_one_or_zero(exponent: Any) -> None:
    """``x ** True`` is ``x ** 1`` (torch); it reached NumPy's power as a bool before."""
    x = lucid.tensor([2.0, 3.0])
    got = x**exponent
    assert got.dtype == lucid.float32
    np.testing.assert_allclose(got.numpy(), [2.0, 3.0] if exponent else [1.0, 1.0], rtol=0, atol=0)
    n = lucid.tensor([2, 3])
    assert (n ** bool(exponent)).tolist() == ([2, 3] if exponent else [1, 1])


def test_size_takes_integer_likes_as_ints_and_refuses_the_rest() -> None:
    # torch.Size([torch.tensor(2), np.int64(3), True, -1]) is torch.Size([2, 3, 1, -1]).
    size = lucid.Size([lucid.tensor(2), np.int64(3), True, -1])
    assert size == (2, 3, 1, -1)
    assert all(type(s) is int for s in size)
    assert lucid.Size() == ()
    assert lucid.zeros(2, 3).shape[1:] == lucid.Size([3])
    with pytest.raises(TypeError, match=r"iterable of 'int' \(item 1 is 'float'\)"):
        lucid.Size([2, 3.0])
    with pytest.raises(TypeError, match=r"item 0 is 'Tensor'"):
        lucid.Size([lucid.tensor(2.0)])
