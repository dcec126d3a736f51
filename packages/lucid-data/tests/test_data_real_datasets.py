"""The real MNIST and CIFAR-10 files.

The ``mnist_dir`` and ``cifar10_archive`` fixtures (the repository's ``conftest.py``) say where
they are: MNIST is always found in a clone (``data/mnist``); CIFAR-10 tests skip without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data import DataLoader
from lucid.data import transforms as T
from lucid.data.datasets import CIFAR10, MNIST

TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]


def test_real_mnist(mnist_dir: Path) -> None:
    train, test = MNIST(mnist_dir), MNIST(mnist_dir, train=False)
    assert train.data.shape == (60000, 28, 28) and len(test) == 10000
    assert np.bincount(train.targets).tolist() == TRAIN_COUNTS
    assert train.data.float().mean().item() / 255 == pytest.approx(0.1307, abs=1e-4, rel=0)
    assert train.targets[:5].tolist() == [5, 0, 4, 1, 9]
    train.transform = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])
    x, y = next(iter(DataLoader(train, batch_size=256)))
    assert x.shape == (256, 1, 28, 28) and x.dtype == lucid.float32
    assert abs(float(x.numpy().mean())) < 0.1


def test_real_cifar10_read_once_from_the_archive(cifar10_archive: Path) -> None:
    test = CIFAR10(cifar10_archive.parent, train=False)
    assert test.data.shape == (10000, 32, 32, 3) and test.data.dtype == np.uint8
    assert np.bincount(test.targets).tolist() == [1000] * 10
    assert test.classes == "airplane automobile bird cat deer dog frog horse ship truck".split()
    assert 0.4 < test.data.mean() / 255 < 0.55
