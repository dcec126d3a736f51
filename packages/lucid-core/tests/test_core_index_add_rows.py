"""The NumPy backend's ``index_add`` for whole rows (an embedding's gradient): sorted rows summed
per index by ``reduceat`` give ``np.add.at``'s values (to rounding: reduceat sums pairwise),
with repeats, negative indices, several index dims and trailing dims; the other index forms
still go to ``add.at``."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

_CPU = lucid.backends.get_backend("cpu")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("rows", "tail", "index_shape"), [(65, (128,), (12, 64)), (10, (3, 4), (50,)), (7, (2,), (2,))]
)
def test_rows_match_add_at(dtype: str, rows: int, tail: tuple[int, ...],
                           index_shape: tuple[int, ...]) -> None:  # fmt: skip
    rng = np.random.default_rng(0)
    base = rng.standard_normal((rows, *tail)).astype(dtype)
    index = rng.integers(-rows, rows, index_shape)
    values = rng.standard_normal(index_shape + tail).astype(dtype)
    want = base.copy()
    np.add.at(want, index, values)
    got = _CPU.index_add(base, index, values)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-6)
    zeros = np.zeros_like(base)
    want0 = zeros.copy()
    np.add.at(want0, index, values)
    np.testing.assert_allclose(_CPU.index_add(zeros, (index,), values), want0, rtol=1e-6, atol=1e-6)


def test_other_forms_and_errors() -> None:
    base = np.zeros((4, 3), np.float32)
    v = np.ones(3, np.float32)
    got = _CPU.index_add(base, (np.array([1, 1]), np.array([0, 2])), np.ones(2, np.float32))
    assert got[1, 0] == 1 and got[1, 2] == 1 and got.sum() == 2
    np.testing.assert_array_equal(
        _CPU.index_add(base, np.array([2, 2]), v), [[0] * 3] * 2 + [[2] * 3] + [[0] * 3]
    )
    with pytest.raises(IndexError):
        _CPU.index_add(base, np.array([0, 4]), np.ones((2, 3), np.float32))


def test_index_add_copies_and_index_add_owned_adds_in_place() -> None:
    rng = np.random.default_rng(3)
    index = rng.integers(0, 10, (35, 20))
    values = rng.standard_normal((35, 20, 4)).astype(np.float32)
    base = np.zeros((10, 4), np.float32)
    got = _CPU.index_add(base, index, values)
    assert got is not base and not base.any()  # the input is left as it was
    owned = np.zeros((10, 4), np.float32)
    assert _CPU.index_add_owned(owned, index, values) is owned
    np.testing.assert_array_equal(owned, got)
    w = lucid.randn(10, 4, requires_grad=True)  # an embedding's gradient takes that path
    w[lucid.from_numpy(index)].backward(lucid.from_numpy(values))
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), got)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8"])
def test_rows_sum_in_the_arrays_dtype(dtype: str) -> None:
    """``reduceat`` sums in ``out``'s dtype as ``add.at`` does: a logical or for bool (NumPy's
    reduce would give int64, which cannot be added into bool), wrapping for small ints."""
    rng = np.random.default_rng(5)
    index = np.array([0, 0, 3, 0, 3, 1])
    if dtype == "bool":
        base = rng.integers(0, 2, (4, 5)).astype(bool)
        values = rng.integers(0, 2, (6, 5)).astype(bool)
    else:
        base = rng.integers(0, 100, (4, 5)).astype(dtype)
        values = rng.integers(0, 100, (6, 5)).astype(dtype)
    want = base.copy()
    np.add.at(want, index, values)
    got = _CPU.index_add(base, index, values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
