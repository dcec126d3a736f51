"""Repository-wide test setup, loaded by every pytest run from the repository root.

- Each test starts from the same random state: lucid's generators (every backend) and NumPy's
  global generator are seeded before it runs, so its outcome does not depend on which tests ran
  before it or in what order.
- Where the real data sets are, one rule for every package's tests. The data folder is
  `$LUCID_DATA_DIR`, default `<repo>/../shared/data`. `mnist_dir` is the data folder's `mnist/`
  when it holds the four IDX files, else the repository's own copy in `data/mnist`;
  `cifar10_archive` is the data folder's `cifar10/cifar-10-python.tar.gz`. A fixture whose data
  is absent skips its test, saying what it looked for (pytest's `-ra` summary).
- `torch_resnet18`: the torch ResNet-18 builder of `tools/experiments/torch_resnet.py`, the one
  copy that parity tests and the ResNet experiment share (skips without torch).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid

SEED = 0
REPO_ROOT = Path(__file__).resolve().parent
MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
CIFAR10_ARCHIVE = Path("cifar10") / "cifar-10-python.tar.gz"
TORCH_RESNET = REPO_ROOT / "tools" / "experiments" / "torch_resnet.py"


@pytest.fixture(autouse=True)
def _seed_random_state() -> None:
    lucid.manual_seed(SEED)
    np.random.seed(SEED)


def data_folder() -> Path:
    return Path(os.environ.get("LUCID_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))


def mnist_candidates() -> list[Path]:
    return [data_folder() / "mnist", REPO_ROOT / "data" / "mnist"]


@pytest.fixture(scope="session")
def mnist_dir() -> Path:
    """The folder with real MNIST's four IDX .gz files (see the module docstring)."""
    candidates = mnist_candidates()
    for path in candidates:
        if all((path / name).is_file() for name in MNIST_FILES):
            return path
    pytest.skip(
        f"real MNIST is absent: neither {candidates[0]} nor {candidates[1]} holds "
        f"{', '.join(MNIST_FILES)} (set LUCID_DATA_DIR to a folder holding mnist/)"
    )


@pytest.fixture(scope="session")
def cifar10_archive() -> Path:
    path = data_folder() / CIFAR10_ARCHIVE
    if not path.is_file():
        pytest.skip(f"CIFAR-10 is absent: no {path} (set LUCID_DATA_DIR to its parent folder)")
    return path


@pytest.fixture(scope="session")
def torch_resnet18() -> Callable[..., Any]:
    """`torch_resnet18(num_classes=10, cifar=True)`: torchvision's ResNet-18 in plain torch.nn."""
    pytest.importorskip("torch", reason="torch is not installed: run `hatch run parity:test`")
    spec = importlib.util.spec_from_file_location("torch_resnet", TORCH_RESNET)
    assert spec is not None and spec.loader is not None, TORCH_RESNET
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    builder: Callable[..., Any] = module.torch_resnet18
    return builder
