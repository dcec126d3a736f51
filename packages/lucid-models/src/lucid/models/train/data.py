"""Datasets for ``lucid-train``: read the standard files, normalise once, batch fast."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

import lucid
from lucid.data import DataLoader, DistributedSampler, StackedSamples
from lucid.data import datasets as ds

# name -> (dataset class, channel means, channel stds, number of classes)
_SPECS: dict[str, tuple[Any, tuple[float, ...], tuple[float, ...], int]] = {
    "mnist": (ds.MNIST, (0.1307,), (0.3081,), 10),
    "fashion-mnist": (ds.FashionMNIST, (0.2860,), (0.3530,), 10),
    "cifar10": (ds.CIFAR10, (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616), 10),
    "cifar100": (ds.CIFAR100, (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762), 100),
}


def image_size(name: str) -> int:
    """The side of the dataset's square images (28 for the MNISTs, 32 for the CIFARs)."""
    return 28 if "mnist" in name else 32


def num_classes(name: str) -> int:
    return _SPECS[name][3]


def in_channels(name: str) -> int:
    return len(_SPECS[name][1])


def resolve_root(name: str, root: Path | None) -> Path:
    """The data folder: the given one, else ./data/<name>, else $LUCID_DATA_DIR/<name>."""
    if root is not None:
        return root
    folder = name.replace("-", "_") if name != "fashion-mnist" else "fashion-mnist"
    local = Path("data") / folder
    if local.exists():
        return local
    env = os.environ.get("LUCID_DATA_DIR")
    if env and (Path(env) / folder).exists():
        return Path(env) / folder
    raise FileNotFoundError(
        f"no data folder for {name}: pass --data-root, or put the files in {local} "
        "(or set LUCID_DATA_DIR)"
    )


def _as_nchw(images: np.ndarray) -> np.ndarray:
    if images.ndim == 3:  # MNIST: (N, 28, 28)
        return np.asarray(images[:, None])
    return np.asarray(images.transpose(0, 3, 1, 2))  # CIFAR: (N, 32, 32, 3) HWC -> CHW


def _normalised(images: np.ndarray, mean: tuple[float, ...], std: tuple[float, ...]) -> Any:
    """``(images / 255 - mean) / std`` as a contiguous float32 NCHW array (in place in it)."""
    src = _as_nchw(images)
    x = np.empty(src.shape, dtype=np.float32)
    np.divide(src, np.float32(255.0), out=x, dtype=np.float32)
    np.subtract(x, np.asarray(mean, np.float32).reshape(1, -1, 1, 1), out=x)
    np.divide(x, np.asarray(std, np.float32).reshape(1, -1, 1, 1), out=x)
    return x


class _Images:
    """The uint8 images and their labels, normalised a batch at a time (``__getitems__``).

    Normalising the whole training set up front made a 188 MB float32 copy of MNIST (600 MB of
    CIFAR-10) whose first touch cost 2-5 s of the README's ~19 s LeNet-5 run on this VM (slow
    page faults); a batch of 64 takes ~30 us. The values are the same bits either way.
    """

    def __init__(self, images: np.ndarray, labels: np.ndarray, mean: Any, std: Any) -> None:
        self.images, self.labels, self.mean, self.std = images, labels, mean, std

    def __len__(self) -> int:
        return len(self.images)

    def arrays(self, idx: Any) -> tuple[Any, Any]:
        """Normalised images ``(n, C, H, W)`` and labels of the samples ``idx``."""
        return _normalised(self.images[idx], self.mean, self.std), self.labels[idx]

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        x, y = self.arrays(np.asarray([i]))
        return lucid.from_numpy(x[0]), lucid.tensor(y[0])

    def __getitems__(self, idx: list[int]) -> StackedSamples:
        x, y = self.arrays(np.asarray(idx, dtype=np.int64))
        return StackedSamples(lucid.from_numpy(x), lucid.from_numpy(y))


class _Augmented:
    """Random crop (pad 4) + horizontal flip on a normalised NCHW array, per batch."""

    def __init__(self, base: _Images) -> None:
        self.base = base

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, i: int) -> Any:
        return self.__getitems__([i])[0]

    def __getitems__(self, idx: list[int]) -> list[tuple[Any, Any]]:
        rng = lucid.random.default_generator.numpy_rng
        x, y = self.base.arrays(np.asarray(idx, dtype=np.int64))
        n, _, h, w = x.shape
        padded = np.pad(x, ((0, 0), (0, 0), (4, 4), (4, 4)))
        dy, dx = rng.integers(0, 9, n), rng.integers(0, 9, n)
        flip = rng.random(n) < 0.5
        out = np.empty_like(x)
        for k in range(n):
            crop = padded[k, :, dy[k] : dy[k] + h, dx[k] : dx[k] + w]
            out[k] = crop[:, :, ::-1] if flip[k] else crop
        return [(out[k], y[k]) for k in range(n)]


def loaders(cfg: Any, rank: int = 0, world: int = 1) -> tuple[DataLoader[Any], DataLoader[Any]]:
    """The training loader (rank ``rank``'s shard of each epoch when ``world`` > 1) and the
    test loader."""
    cls, mean, std, _ = _SPECS[cfg.dataset]
    root = resolve_root(cfg.dataset, cfg.data_root)
    try:
        train_set, test_set = cls(root, train=True), cls(root, train=False)
    except RuntimeError as exc:  # the dataset classes' "Dataset not found: ..."
        raise FileNotFoundError(f"no {cfg.dataset} data in {root}: {exc}") from None
    x_train, y_train = np.asarray(train_set.data), np.asarray(train_set.targets, np.int64)
    if cfg.subset:
        x_train, y_train = x_train[: cfg.subset], y_train[: cfg.subset]
    train = _Images(x_train, y_train, mean, std)
    test = _Images(np.asarray(test_set.data), np.asarray(test_set.targets, np.int64), mean, std)
    generator = lucid.Generator().manual_seed(cfg.seed)
    train_ds: Any = _Augmented(train) if cfg.augment else train
    shard = _shard(train_ds, cfg.seed, rank, world)
    train_loader: DataLoader[Any] = DataLoader(
        train_ds, batch_size=cfg.batch_size, shuffle=shard is None, sampler=shard,
        num_workers=cfg.workers, generator=generator, drop_last=False,
    )  # fmt: skip
    test_loader: DataLoader[Any] = DataLoader(
        test, batch_size=max(cfg.batch_size, 500), shuffle=False
    )
    return train_loader, test_loader


def _shard(dataset: Any, seed: int, rank: int, world: int) -> DistributedSampler | None:
    """Rank ``rank``'s part of each epoch: every ``world``-th image of an order seeded by
    ``seed`` + epoch, the same on every rank (padded so every rank takes as many steps)."""
    if world == 1:
        return None
    return DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=seed)


def start_epoch(loader: DataLoader[Any], epoch: int) -> None:
    """Give a sharded loader epoch ``epoch``'s order (``DistributedSampler.set_epoch``)."""
    if isinstance(loader.sampler, DistributedSampler):
        loader.sampler.set_epoch(epoch)
