"""Samplers: sequential, random, subset, weighted, batch and distributed."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)


def test_sequential_sampler() -> None:
    s = SequentialSampler(range(4))
    assert list(s) == [0, 1, 2, 3]
    assert len(s) == 4


def test_random_sampler_is_a_permutation_and_reproducible() -> None:
    lucid.manual_seed(0)
    a = list(RandomSampler(range(50)))
    lucid.manual_seed(0)
    b = list(RandomSampler(range(50)))
    assert sorted(a) == list(range(50))
    assert a == b
    assert a != list(range(50))
    assert list(RandomSampler(range(50))) != b  # the stream moves on


def test_random_sampler_uses_its_generator_not_the_global_one() -> None:
    g1, g2 = lucid.Generator().manual_seed(3), lucid.Generator().manual_seed(3)
    lucid.manual_seed(0)
    a = list(RandomSampler(range(30), generator=g1))
    lucid.manual_seed(1)
    b = list(RandomSampler(range(30), generator=g2))
    assert a == b


def test_random_sampler_num_samples_beyond_length_repeats_permutations() -> None:
    out = list(RandomSampler(range(4), num_samples=10))
    assert len(out) == 10
    assert sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:8]) == [0, 1, 2, 3]


def test_random_sampler_with_replacement() -> None:
    out = list(RandomSampler(range(3), replacement=True, num_samples=300))
    assert len(out) == 300 and set(out) == {0, 1, 2}


def test_random_sampler_with_replacement_is_lazy() -> None:
    # makemore's "infinite" loader: num_samples=int(1e10) must not be drawn up front.
    lucid.manual_seed(0)
    it = iter(RandomSampler(range(5), replacement=True, num_samples=int(1e10)))
    first = [next(it) for _ in range(100)]
    assert all(0 <= i < 5 for i in first) and len(set(first)) == 5
    out = list(RandomSampler(range(5), replacement=True, num_samples=70))
    assert len(out) == 70


def test_random_sampler_validates() -> None:
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(3), replacement=1)  # type: ignore[arg-type]


def test_subset_random_sampler() -> None:
    out = list(SubsetRandomSampler([10, 20, 30]))
    assert sorted(out) == [10, 20, 30]


def test_weighted_random_sampler_follows_weights() -> None:
    lucid.manual_seed(0)
    out = np.array(list(WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=4000)))
    counts = np.bincount(out, minlength=3)
    assert counts[0] == 0
    assert 2.6 < counts[2] / counts[1] < 3.4


def test_weighted_random_sampler_without_replacement() -> None:
    out = list(WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False))
    assert sorted(out) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([1.0, -1.0], 2)


def test_batch_sampler_groups_and_drops_last() -> None:
    assert list(BatchSampler(range(5), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3
    assert len(BatchSampler(range(5), 2, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(5), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(range(5), 2, 1)  # type: ignore[arg-type]


def test_distributed_sampler_shards_cover_the_data_with_padding() -> None:
    shards = [list(DistributedSampler(range(10), 3, r, shuffle=False)) for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert all(len(DistributedSampler(range(10), 3, r)) == 4 for r in range(3))


def test_distributed_sampler_drop_last() -> None:
    shards = [
        list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)
    ]
    assert [len(s) for s in shards] == [3, 3, 3]
    assert len(set(sum(shards, []))) == 9


def test_distributed_sampler_shuffle_shared_across_ranks_and_changes_per_epoch() -> None:
    def shards(epoch: int) -> list[list[int]]:
        out = []
        for r in range(2):
            s = DistributedSampler(range(20), 2, r, shuffle=True, seed=7)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    e0, e1 = shards(0), shards(1)
    assert sorted(e0[0] + e0[1]) == list(range(20))  # same permutation on both ranks
    assert e0 != e1
    assert e0 == shards(0)


def test_distributed_sampler_invalid_rank() -> None:
    with pytest.raises(
        ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    ):
        DistributedSampler(range(4), num_replicas=2, rank=2)


def test_distributed_sampler_reads_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    s = DistributedSampler(range(8), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (4, 3, [3, 7])
