"""Data-loading throughput: lucid.data.DataLoader vs a plain NumPy loop, MNIST and CIFAR-10.

Images/s (median of --repeats runs) through DataLoader(batch_size=64, shuffle=True) with 0 and
2 workers, with ToTensor+Normalize and with RandomCrop+HorizontalFlip+ToTensor+Normalize,
against a hand-written NumPy loop doing the same work on the same uint8 arrays. The data come
from --data-dir (default: $LUCID_DATA_DIR or ../shared/data next to the repository).

    PYTHONPATH=packages/lucid-core/src:packages/lucid-data/src python tools/bench/bench_data.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import lucid
from lucid.data import DataLoader
from lucid.data import transforms as T
from lucid.data.datasets import CIFAR10, MNIST

REPO = Path(__file__).resolve().parents[2]
BATCH = 64


def _default_data_dir() -> Path:
    return Path(os.environ.get("LUCID_DATA_DIR", REPO.parent / "shared" / "data"))


def _rate(batches: Iterable[Any], limit: int) -> float:
    """Images per second over the first ``limit`` batches (after one warm-up batch)."""
    it = iter(batches)
    first = next(it)
    n, start = 0, time.perf_counter()
    for i, batch in enumerate(it):
        n += len(batch[0])
        if i + 1 >= limit:
            break
    del first
    return n / (time.perf_counter() - start)


def numpy_loop(data: np.ndarray, targets: np.ndarray, mean: Any, std: Any, crop: int) -> Any:
    """The reference: shuffle, fancy-index, (pad + per-image crop + flip), scale, normalise."""
    rng = np.random.default_rng(0)
    chw = data.ndim == 4
    m = np.asarray(mean, np.float32).reshape(-1, 1, 1)
    s = np.asarray(std, np.float32).reshape(-1, 1, 1)
    perm = rng.permutation(len(data))
    for start in range(0, len(perm), BATCH):
        idx = perm[start : start + BATCH]
        x = data[idx]
        x = np.moveaxis(x, -1, 1) if chw else x[:, None]
        if crop:
            h, w = x.shape[-2:]
            padded = np.pad(x, ((0, 0), (0, 0), (crop, crop), (crop, crop)))
            tops = rng.integers(0, 2 * crop + 1, len(x))
            lefts = rng.integers(0, 2 * crop + 1, len(x))
            x = np.stack([p[:, t : t + h, l : l + w] for p, t, l in zip(padded, tops, lefts)])
            flip = rng.random(len(x)) < 0.5
            x[flip] = x[flip, ..., ::-1]
        out = x.astype(np.float32) * np.float32(1 / 255)
        yield (out - m) / s, targets[idx]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=_default_data_dir())
    parser.add_argument("--batches", type=int, default=200, help="batches timed per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="*", default=[0, 2])
    args = parser.parse_args()
    lucid.manual_seed(0)

    suites = []
    mnist_dir = args.data_dir / "mnist"
    if not mnist_dir.is_dir():
        mnist_dir = REPO / "data" / "mnist"
    suites.append(("MNIST", MNIST(mnist_dir), (0.1307,), (0.3081,), 28, 2))
    cifar_dir = args.data_dir / "cifar10"
    if (cifar_dir / "cifar-10-python.tar.gz").is_file() or (
        cifar_dir / CIFAR10.base_folder
    ).is_dir():
        mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
        suites.append(("CIFAR-10", CIFAR10(cifar_dir), mean, std, 32, 4))
    else:
        print(f"CIFAR-10 skipped: no archive in {cifar_dir}")

    print(f"batch {BATCH}, {args.batches} batches per run, median of {args.repeats} runs")
    print("(the runs of each row group are interleaved, so machine noise hits all alike)")
    print(f"{'dataset':9} {'transforms':22} {'loader':14} {'images/s':>10} {'vs numpy':>9}")
    for name, ds, mean, std, size, pad in suites:
        for label, crop in (("ToTensor+Normalize", 0), ("RandomCrop+Flip", pad)):
            steps: list[Any] = [T.ToTensor(), T.Normalize(mean, std)]
            if crop:
                steps = [T.RandomCrop(size, padding=crop), T.RandomHorizontalFlip(), *steps]
            ds.transform = T.Compose(steps)
            variants: dict[str, Callable[[], Iterable[Any]]] = {
                "numpy loop": partial(numpy_loop, ds.data, ds.targets, mean, std, crop)
            }
            for workers in args.workers:
                loader = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers)
                variants[f"{workers} workers"] = partial(iter, loader)
            rates: dict[str, list[float]] = {tag: [] for tag in variants}
            for _ in range(args.repeats):
                for tag, make in variants.items():
                    rates[tag].append(_rate(make(), args.batches))
            base = statistics.median(rates["numpy loop"])
            for tag, values in rates.items():
                rate = statistics.median(values)
                print(f"{name:9} {label:22} {tag:14} {rate:10,.0f} {rate / base:9.2f}")


if __name__ == "__main__":
    main()
