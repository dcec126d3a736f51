"""Fixtures of lucid-models' tests: ``mnist_small``, a small MNIST in the real IDX format.

The data are the first 512 training and 500 test images of real MNIST (the ``mnist_dir``
fixture of the repository's ``conftest.py``: ``data/mnist`` in a clone), rewritten as gzipped
IDX files in a temporary folder, so a ``lucid-train`` run reads the same files the real command
reads, in a few seconds.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

MNIST_SMALL_SIZES = {"train": 512, "t10k": 500}  # images per IDX file prefix


def _write_idx(path: Path, array: np.ndarray) -> None:
    """IDX: magic (0, 0, 0x08 = ubyte, ndim), big-endian int32 dims, then the bytes."""
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim)
    header += struct.pack(f">{array.ndim}i", *array.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())


@pytest.fixture(scope="session")
def mnist_small(tmp_path_factory: pytest.TempPathFactory, mnist_dir: Path) -> Path:
    """A folder with MNIST's four IDX files, of 512 training and 500 test images."""
    pytest.importorskip("lucid.data")
    from lucid.data.datasets import MNIST

    root = tmp_path_factory.mktemp("mnist")
    for prefix, n in MNIST_SMALL_SIZES.items():
        ds = MNIST(mnist_dir, train=prefix == "train")
        _write_idx(root / f"{prefix}-images-idx3-ubyte.gz", np.asarray(ds.data)[:n])
        _write_idx(root / f"{prefix}-labels-idx1-ubyte.gz", np.asarray(ds.targets)[:n])
    return root
