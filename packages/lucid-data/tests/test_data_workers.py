"""DataLoader with worker processes: equivalence, seeding, failures, timeouts, shutdown."""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info
from lucid.data import dataloader as dl
from lucid.data import transforms as T

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="these tests use fork workers"
)


class Images(Dataset[tuple[Any, int]]):
    """uint8 HWC images through a (random) transform, one Python call per sample."""

    def __init__(self, n: int, transform: Any = None) -> None:
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, (n, 8, 8, 3), dtype=np.uint8)
        self.transform = transform

    def __getitem__(self, i: int) -> tuple[Any, int]:
        img = self.images[i]
        return (self.transform(img) if self.transform else img), i

    def __len__(self) -> int:
        return len(self.images)


class Failing(Dataset[int]):
    def __getitem__(self, i: int) -> int:
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i

    def __len__(self) -> int:
        return 8


class Dying(Dataset[int]):
    def __getitem__(self, i: int) -> int:
        if i == 3:
            os._exit(7)
        return i

    def __len__(self) -> int:
        return 8


class Slow(Dataset[int]):
    def __getitem__(self, i: int) -> int:
        if i >= 2:
            time.sleep(30)
        return i

    def __len__(self) -> int:
        return 4


class WhoAmI(Dataset[tuple[int, int, int]]):
    def __getitem__(self, i: int) -> tuple[int, int, int]:
        info = get_worker_info()
        assert info is not None
        return info.id, info.seed, os.getpid()

    def __len__(self) -> int:
        return 8


class Shards(IterableDataset[int]):
    """Splits range(n) between workers with get_worker_info()."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def augment() -> T.Compose:
    return T.Compose([T.RandomCrop(6, padding=1), T.RandomHorizontalFlip(), T.ToTensor()])


_baseline: set[int] = set()  # child processes that existed before the running test


def new_children() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None} - _baseline


def no_workers_left() -> bool:
    deadline = time.monotonic() + 10
    while new_children():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def epoch(loader: DataLoader) -> list[np.ndarray]:  # type: ignore[type-arg]
    return [np.concatenate([b[0].numpy().ravel(), b[1].numpy().ravel()]) for b in loader]


@pytest.fixture(autouse=True)
def _no_leftover_workers() -> Iterator[None]:
    _baseline.clear()
    _baseline.update(p.pid for p in multiprocessing.active_children() if p.pid is not None)
    yield
    if new_children():  # only then pay for a full collection (slow with torch imported)
        gc.collect()
    assert no_workers_left(), "a DataLoader worker outlived its test"


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
def test_same_batches_with_and_without_workers_including_random_transforms() -> None:
    ds = Images(20, augment())
    results = []
    for workers in (0, 2, 3):
        lucid.manual_seed(123)
        loader = DataLoader(ds, batch_size=3, shuffle=True, num_workers=workers)
        results.append(epoch(loader) + epoch(loader))  # two epochs
    for other in results[1:]:
        assert len(other) == len(results[0])
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    first, second = results[0][:7], results[0][7:]
    assert not all(np.array_equal(a, b) for a, b in zip(first, second))


def test_tensor_dataset_with_workers_delivers_in_order() -> None:
    ds = TensorDataset(lucid.tensor(np.arange(50)))
    loader = DataLoader(ds, batch_size=4, num_workers=2, prefetch_factor=3)
    assert np.concatenate([b[0].numpy() for b in loader]).tolist() == list(range(50))


def test_more_workers_than_cpus_warns_as_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    ds = TensorDataset(lucid.tensor(np.arange(6)))
    monkeypatch.setattr(dl, "_usable_cpus", lambda: (1, True))
    with pytest.warns(UserWarning, match="will create 2 worker processes in total. Our suggested"):
        assert len(list(DataLoader(ds, batch_size=3, num_workers=2))) == 2
    monkeypatch.setattr(dl, "_usable_cpus", lambda: (2, True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(DataLoader(ds, batch_size=3, num_workers=2))) == 2


def test_pin_memory_without_accelerator_warns_as_torch() -> None:
    ds = TensorDataset(lucid.tensor(np.arange(6)))
    if lucid.accelerator.is_available():
        pytest.skip("an accelerator is present: pinning is not refused")
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accel"):
        assert len(list(DataLoader(ds, batch_size=3, pin_memory=True))) == 2


def test_workers_are_processes_with_distinct_seeds() -> None:
    seen = []
    loader = DataLoader(WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=seen.append)
    ids, seeds, pids = (np.concatenate([t.numpy() for t in col]) for col in zip(*loader))
    assert set(ids.tolist()) == {0, 1}
    assert os.getpid() not in pids.tolist()
    by_worker = {int(i): int(s) for i, s in zip(ids, seeds)}
    assert by_worker[0] != by_worker[1]
    assert get_worker_info() is None


def test_worker_init_fn_sees_worker_ids_and_random_state_differs() -> None:
    ds = Images(8)

    def init(worker_id: int) -> None:
        info = get_worker_info()
        assert info is not None and info.id == worker_id and info.num_workers == 2
        np.save(os.path.join(tmp, f"w{worker_id}.npy"), lucid.rand(3).numpy())

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        list(DataLoader(ds, batch_size=2, num_workers=2, worker_init_fn=init))
        a, b = np.load(os.path.join(tmp, "w0.npy")), np.load(os.path.join(tmp, "w1.npy"))
    assert not np.allclose(a, b, rtol=1e-5, atol=1e-8)


class NumpyNoise(Dataset[float]):
    def __getitem__(self, i: int) -> float:
        return float(np.random.rand())

    def __len__(self) -> int:
        return 8


def test_workers_do_not_repeat_the_global_numpy_stream() -> None:
    values = np.concatenate(
        [b.numpy() for b in DataLoader(NumpyNoise(), batch_size=2, num_workers=2)]
    )
    assert len(set(values.tolist())) == 8


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
def test_iterable_dataset_split_across_workers() -> None:
    loader = DataLoader(Shards(23), batch_size=4, num_workers=3)
    values = np.concatenate([b.numpy() for b in loader]).tolist()
    assert sorted(values) == list(range(23))


def test_worker_exception_is_reraised_with_the_worker_traceback() -> None:
    loader = DataLoader(Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    text = str(info.value)
    assert "Caught ValueError in DataLoader worker process" in text
    assert "Original Traceback" in text and "bad sample 5" in text and "__getitem__" in text


def test_exception_in_worker_init_fn_is_reraised() -> None:
    def init(worker_id: int) -> None:
        raise KeyError("no such thing")

    with pytest.raises(KeyError) as info:
        list(DataLoader(Images(4), batch_size=2, num_workers=1, worker_init_fn=init))
    text = str(info.value)
    assert text.startswith("Caught KeyError in DataLoader worker process 0")
    assert "in init" in text and "no such thing" in text


def test_unpicklable_batch_is_an_error_not_a_hang() -> None:
    loader = DataLoader(Images(4), batch_size=2, num_workers=1, collate_fn=lambda b: lambda: 0)
    with pytest.raises(Exception, match=r"in DataLoader worker process 0 \(sending a batch\)"):
        list(loader)


def test_dead_worker_gives_a_clear_error() -> None:
    loader = DataLoader(Dying(), batch_size=2, num_workers=2)
    with pytest.raises(
        RuntimeError, match=r"DataLoader worker \(pid \d+ exit code 7\) exited unexpectedly"
    ):
        list(loader)


def test_timeout_gives_a_clear_error_instead_of_a_hang() -> None:
    loader = DataLoader(Slow(), batch_size=2, num_workers=1, timeout=1.0)
    start = time.monotonic()
    it = iter(loader)
    assert next(it).numpy().tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1.0 seconds"):
        next(it)
    assert time.monotonic() - start < 15


def test_break_and_del_stop_the_workers() -> None:
    loader = DataLoader(Images(40), batch_size=2, num_workers=2)
    for _ in loader:
        assert len(new_children()) == 2
        break
    assert no_workers_left()
    it = iter(loader)
    next(it)
    del it
    assert no_workers_left()


def test_workers_stop_at_the_end_of_an_epoch() -> None:
    list(DataLoader(Images(6), batch_size=2, num_workers=2))
    assert no_workers_left()


def test_persistent_workers_survive_epochs_and_stop_with_the_loader() -> None:
    loader = DataLoader(WhoAmI(), batch_size=2, num_workers=2, persistent_workers=True)
    pids1 = {int(p) for b in loader for p in b[2].numpy()}
    pids2 = {int(p) for b in loader for p in b[2].numpy()}
    assert pids1 == pids2 and len(pids1) == 2
    assert new_children() == pids1
    it = iter(loader)
    next(it)  # abandon an epoch half-way: the next one must still be complete
    del it
    assert len(list(loader)) == 4
    del loader  # plain reference counting frees the loader and with it the pool: no gc needed
    assert no_workers_left()


def test_persistent_pool_that_lost_a_worker_is_replaced() -> None:
    loader = DataLoader(WhoAmI(), batch_size=2, num_workers=2, persistent_workers=True)
    pids = {int(p) for b in loader for p in b[2].numpy()}
    victim = next(p for p in multiprocessing.active_children() if p.pid in pids)
    victim.kill()
    victim.join()
    new_pids = {int(p) for b in loader for p in b[2].numpy()}
    assert len(new_pids) == 2 and not new_pids & pids
    del loader


def test_persistent_workers_give_the_same_batches_as_fresh_ones() -> None:
    ds = Images(12, augment())
    lucid.manual_seed(7)
    fresh = DataLoader(ds, batch_size=4, shuffle=True, num_workers=0)
    a = epoch(fresh) + epoch(fresh)
    lucid.manual_seed(7)
    persistent = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, persistent_workers=True)
    b = epoch(persistent) + epoch(persistent)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_prefetch_is_bounded(tmp_path: Any) -> None:
    """At most prefetch_factor * num_workers batches are fetched ahead of the consumer."""

    class Logged(Dataset[int]):
        def __getitem__(self, i: int) -> int:
            with open(tmp_path / f"{i}", "w"):
                pass
            return i

        def __len__(self) -> int:
            return 40

    it = iter(DataLoader(Logged(), batch_size=1, num_workers=2, prefetch_factor=2))
    next(it)
    deadline = time.monotonic() + 5
    while len(list(tmp_path.iterdir())) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)  # workers prefetch ahead of the consumer...
    time.sleep(0.5)  # ...and then stop: one consumed + 2 per worker in flight
    assert len(list(tmp_path.iterdir())) == 1 + 2 * 2
    del it


def test_prefetch_continues_while_large_batches_wait_to_be_read(tmp_path: Any) -> None:
    """Large batches (beyond a pipe's buffer) must not stall workers while the main is busy."""

    class LoggedBig(Dataset[np.ndarray]):
        def __getitem__(self, i: int) -> np.ndarray:
            (tmp_path / f"{i}").touch()
            return np.full((3, 128, 128), i, np.float32)  # 192 KiB per sample

        def __len__(self) -> int:
            return 40

    it = iter(DataLoader(LoggedBig(), batch_size=1, num_workers=2, prefetch_factor=2))
    first = next(it)
    deadline = time.monotonic() + 5
    while len(list(tmp_path.iterdir())) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(tmp_path.iterdir())) == 1 + 2 * 2
    assert [next(it).numpy()[0, 0, 0, 0] for _ in range(3)] == [1, 2, 3]
    assert first.numpy()[0, 0, 0, 0] == 0
    del it


def test_spawn_context_works_with_picklable_datasets() -> None:
    ds = TensorDataset(lucid.tensor(np.arange(10)))
    loader = DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context="spawn")
    assert np.concatenate([b[0].numpy() for b in loader]).tolist() == list(range(10))


def test_spawn_context_with_an_unpicklable_collate_fn_says_so() -> None:
    ds = TensorDataset(lucid.tensor(np.arange(4)))
    loader = DataLoader(ds, num_workers=1, collate_fn=lambda b: b, multiprocessing_context="spawn")
    with pytest.raises(RuntimeError, match="workers started with 'spawn' need a picklable dataset"):
        iter(loader)


def test_spawn_workers_give_the_same_augmented_batches(tmp_path: Any) -> None:
    """Under spawn nothing is inherited: the seeds alone must make the batches match."""
    import gzip
    import struct

    from lucid.data.datasets import MNIST

    rng = np.random.default_rng(0)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (24, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, 24, dtype=np.uint8),
    }
    for stem, arr in arrays.items():
        head = struct.pack(">BBBB", 0, 0, 8, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
        (tmp_path / f"{stem}.gz").write_bytes(gzip.compress(head + arr.tobytes()))
    ds = MNIST(tmp_path, transform=T.Compose([T.RandomCrop(28, padding=2), T.ToTensor()]))
    results = []
    for workers in (0, 2):
        lucid.manual_seed(11)
        context = "spawn" if workers else None
        loader = DataLoader(
            ds, batch_size=5, shuffle=True, num_workers=workers, multiprocessing_context=context
        )
        results.append(epoch(loader))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
