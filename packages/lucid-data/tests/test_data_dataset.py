"""Dataset, TensorDataset, ConcatDataset, ChainDataset, StackDataset, Subset, random_split."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import data


class Squares(data.Dataset[int]):
    def __init__(self, n: int) -> None:
        self.n = n

    def __getitem__(self, i: int) -> int:
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self) -> int:
        return self.n


class Count(data.IterableDataset[int]):
    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop = start, stop

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(range(self.start, self.stop))

    def __len__(self) -> int:
        return self.stop - self.start


def test_tensor_dataset_rows_and_length() -> None:
    x = lucid.tensor(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = lucid.tensor(np.arange(6))
    ds = data.TensorDataset(x, y)
    assert len(ds) == 6
    xi, yi = ds[4]
    np.testing.assert_array_equal(xi.numpy(), [8.0, 9.0])
    assert yi.item() == 4


def test_tensor_dataset_getitems_matches_getitem() -> None:
    x = lucid.tensor(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = lucid.tensor(np.arange(6))
    ds = data.TensorDataset(x, y, np.arange(6) * 10)
    batch = ds.__getitems__([5, 0, 3])
    assert len(batch) == 3
    for sample, i in zip(batch, [5, 0, 3]):
        np.testing.assert_array_equal(sample[0].numpy(), ds[i][0].numpy())
        assert sample[1].shape == () and sample[1].item() == i
        assert sample[2] == i * 10


def test_tensor_dataset_size_mismatch_names_sizes() -> None:
    with pytest.raises(ValueError, match=r"\[3, 4\]"):
        data.TensorDataset(lucid.zeros(3, 2), lucid.zeros(4))


def test_concat_dataset_indexing_across_parts() -> None:
    ds = data.ConcatDataset([Squares(3), Squares(2)])
    assert len(ds) == 5
    assert [ds[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert ds[-1] == 1
    assert ds.cumulative_sizes == [3, 5]
    with pytest.raises(IndexError):
        ds[5]
    assert len(Squares(2) + Squares(4)) == 6


def test_concat_dataset_rejects_iterable() -> None:
    with pytest.raises(TypeError, match="IterableDataset"):
        data.ConcatDataset([Count(0, 2)])


def test_chain_dataset_chains_streams() -> None:
    assert list(data.ChainDataset([Count(0, 2), Count(5, 7)])) == [0, 1, 5, 6]
    assert list(Count(0, 1) + Count(3, 4)) == [0, 3]


def test_stack_dataset_tuples_and_dicts() -> None:
    assert data.StackDataset(Squares(3), Squares(3))[2] == (4, 4)
    assert data.StackDataset(a=Squares(2), b=Squares(2))[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="Size mismatch"):
        data.StackDataset(Squares(2), Squares(3))


def test_subset_maps_indices_and_forwards_getitems() -> None:
    base = data.TensorDataset(lucid.tensor(np.arange(10)))
    sub = data.Subset(base, [7, 2, 9])
    assert len(sub) == 3
    assert sub[1][0].item() == 2
    assert [s[0].item() for s in sub.__getitems__([2, 0])] == [9, 7]
    plain = data.Subset(Squares(5), [4, 1])
    assert plain.__getitems__([0, 1]) == [16, 1]


def test_random_split_lengths_partition_the_dataset() -> None:
    parts = data.random_split(Squares(10), [3, 7], generator=lucid.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7]
    seen = sorted(i for p in parts for i in p.indices)
    assert seen == list(range(10))


def test_random_split_fractions_hand_out_remainder() -> None:
    parts = data.random_split(
        Squares(11), [0.5, 0.3, 0.2], generator=lucid.Generator().manual_seed(0)
    )
    assert [len(p) for p in parts] == [6, 3, 2]


def test_random_split_reproducible_from_global_seed() -> None:
    lucid.manual_seed(5)
    a = [p.indices for p in data.random_split(Squares(20), [10, 10])]
    lucid.manual_seed(5)
    b = [p.indices for p in data.random_split(Squares(20), [10, 10])]
    lucid.manual_seed(6)
    c = [p.indices for p in data.random_split(Squares(20), [10, 10])]
    assert a == b
    assert a != c


def test_random_split_wrong_sum_is_an_error() -> None:
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        data.random_split(Squares(10), [3, 3])


def test_random_split_zero_length_warns() -> None:
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        data.random_split(Squares(2), [1.0, 0.0])


def test_base_dataset_needs_getitem() -> None:
    with pytest.raises(NotImplementedError):
        data.Dataset()[0]
