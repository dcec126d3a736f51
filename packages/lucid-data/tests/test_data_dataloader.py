"""DataLoader in the main process: batching, options, seeding, iterable datasets."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import lucid
from lucid.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    TensorDataset,
)
from lucid.data import transforms as T


def make_ds(n: int = 10) -> TensorDataset:
    return TensorDataset(
        lucid.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2)), lucid.tensor(np.arange(n))
    )


class PlainList(Dataset[tuple[np.ndarray, int]]):
    """No __getitems__: exercises the per-sample path."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __getitem__(self, i: int) -> tuple[np.ndarray, int]:
        return np.full(3, i, np.float32), i

    def __len__(self) -> int:
        return self.n


class Stream(IterableDataset[int]):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.n))


def labels(loader: DataLoader) -> list[list[int]]:  # type: ignore[type-arg]
    return [b[1].numpy().tolist() for b in loader]


def test_batches_in_order_with_last_partial() -> None:
    loader = DataLoader(make_ds(10), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    assert [b[0].shape for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][1].dtype == lucid.int64


def test_drop_last() -> None:
    loader = DataLoader(make_ds(10), batch_size=4, drop_last=True)
    assert len(loader) == 2 and labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_per_sample_path_collates_the_same() -> None:
    ((x, y),) = list(DataLoader(PlainList(3), batch_size=3))
    assert x.shape == (3, 3) and y.numpy().tolist() == [0, 1, 2]


def test_shuffle_is_a_permutation_reproducible_from_the_global_seed() -> None:
    loader = DataLoader(make_ds(20), batch_size=5, shuffle=True)
    lucid.manual_seed(0)
    a = labels(loader)
    lucid.manual_seed(0)
    b = labels(loader)
    c = labels(loader)
    assert a == b
    assert sorted(sum(a, [])) == list(range(20))
    assert a != c  # the next epoch has another order
    assert sum(a, []) != list(range(20))


def test_generator_argument_fixes_the_order() -> None:
    def run(seed: int) -> list[list[int]]:
        g = lucid.Generator().manual_seed(seed)
        return labels(DataLoader(make_ds(20), batch_size=5, shuffle=True, generator=g))

    lucid.manual_seed(1)
    a = run(4)
    lucid.manual_seed(2)
    assert run(4) == a


def test_random_transforms_reproducible_and_different_per_batch() -> None:
    ds = PlainList(8)

    class Noisy(Dataset[np.ndarray]):
        def __getitem__(self, i: int) -> np.ndarray:
            return lucid.random.default_generator.numpy_rng.random(2)

        def __len__(self) -> int:
            return 8

    loader = DataLoader(Noisy(), batch_size=2)
    lucid.manual_seed(3)
    a = [b.numpy() for b in loader]
    lucid.manual_seed(3)
    b = [b.numpy() for b in loader]
    np.testing.assert_array_equal(np.stack(a), np.stack(b))
    assert not np.allclose(a[0], a[1], rtol=1e-5, atol=1e-8)
    assert len(ds) == 8


def test_fetching_does_not_consume_the_global_stream() -> None:
    """Each batch runs under its own seed: the caller's stream only pays the base seed."""
    lucid.manual_seed(9)
    list(DataLoader(PlainList(4), batch_size=2, collate_fn=lambda b: lucid.rand(1)))
    after_loader = lucid.random.default_generator.numpy_rng.random()
    lucid.manual_seed(9)
    list(DataLoader(PlainList(4), batch_size=2))
    assert lucid.random.default_generator.numpy_rng.random() == after_loader


def test_batch_sampler_and_sampler_options() -> None:
    bs = BatchSampler(SequentialSampler(range(6)), 4, False)
    assert labels(DataLoader(make_ds(6), batch_sampler=bs)) == [[0, 1, 2, 3], [4, 5]]
    loader = DataLoader(make_ds(6), batch_size=3, sampler=[5, 4, 3, 2, 1, 0])
    assert labels(loader) == [[5, 4, 3], [2, 1, 0]]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
        ({"batch_sampler": [[0]], "shuffle": True}, "batch_sampler option is mutually exclusive"),
        ({"sampler": [0, 1], "shuffle": True}, "sampler option is mutually exclusive with shuffle"),
        ({"num_workers": -1}, "num_workers option should be non-negative"),
        ({"timeout": -1}, "timeout option should be non-negative"),
        ({"prefetch_factor": 2}, "prefetch_factor option could only be specified"),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"batch_size": None, "drop_last": True}, "mutually exclusive with drop_last"),
        ({"multiprocessing_context": "nonsense", "num_workers": 1}, "valid start method"),
    ],
)
def test_invalid_options(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message):
        DataLoader(make_ds(4), **kwargs)


def test_attributes_are_frozen_after_init() -> None:
    loader = DataLoader(make_ds(4), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after"):
        loader.batch_size = 3


def test_batch_size_none_converts_without_batching() -> None:
    out = list(DataLoader(PlainList(2), batch_size=None))
    assert len(out) == 2
    x, y = out[1]
    assert isinstance(x, lucid.Tensor) and x.shape == (3,) and y == 1


def test_custom_collate_fn_gets_the_list_of_samples() -> None:
    seen = []
    loader = DataLoader(PlainList(4), batch_size=2, collate_fn=lambda b: seen.append(b) or len(b))
    assert list(loader) == [2, 2]
    assert seen[0][1][1] == 1


def test_iterable_dataset_single_process() -> None:
    loader = DataLoader(Stream(7), batch_size=3)
    assert [b.numpy().tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    loader = DataLoader(Stream(7), batch_size=3, drop_last=True)
    assert [b.numpy().tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]  # ints stay ints


def test_iterable_dataset_rejects_shuffle_and_samplers() -> None:
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])
    with pytest.raises(TypeError):
        len(DataLoader(Stream(3)))


def test_vision_style_transform_batch_path_matches_per_sample() -> None:
    """A Compose of batchable transforms applied to a batch equals image-by-image results."""
    imgs = np.random.default_rng(0).integers(0, 256, (6, 5, 5, 3), dtype=np.uint8)
    t = T.Compose([T.CenterCrop(3), T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.2))])
    batched = t.batch(imgs).numpy()
    single = np.stack([t(im).numpy() for im in imgs])
    np.testing.assert_allclose(batched, single, rtol=1e-6, atol=1e-6)


def test_dataloader_takes_pin_memory_device_and_in_order() -> None:
    """torch's keyword-only ``pin_memory_device`` and ``in_order``: accepted, batches in
    order either way (one of the orders ``in_order=False`` allows)."""
    data = list(range(6))
    for in_order in (True, False):
        loader = lucid.utils.data.DataLoader(data, batch_size=2, pin_memory_device="",
                                             in_order=in_order)  # fmt: skip
        assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
        assert loader.in_order is in_order
