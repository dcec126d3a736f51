"""The shared integration harness: where the real data is, and the optional peers.

Fixtures skip (with the reason in pytest's `-ra` summary) when what they need is absent:

- `data_dir`: `$LUCID_DATA_DIR`, default `<repo>/../shared/data`.
- `mnist_dir`: `data_dir/mnist` (else the repository's `data/mnist`) with the four IDX .gz files.
- `cifar10_archive`: `data_dir/cifar10/cifar-10-python.tar.gz`.
- `torch`: the torch module (parity tests; `hatch run parity:test` installs it).
- `mlx`: the `mlx.core` module (MLX backend tests).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
CIFAR10_ARCHIVE = Path("cifar10") / "cifar-10-python.tar.gz"


def default_data_dir() -> Path:
    return Path(os.environ.get("LUCID_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = default_data_dir()
    if not path.is_dir():
        pytest.skip(f"data folder {path} is absent (set LUCID_DATA_DIR to the folder with mnist/)")
    return path


@pytest.fixture(scope="session")
def mnist_dir() -> Path:
    """`$LUCID_DATA_DIR/mnist`, else the repository's own copy in `data/mnist`."""
    candidates = [default_data_dir() / "mnist", REPO_ROOT / "data" / "mnist"]
    for path in candidates:
        if all((path / name).is_file() for name in MNIST_FILES):
            return path
    pytest.skip(
        f"real MNIST is absent: neither {candidates[0]} nor {candidates[1]} holds "
        f"{', '.join(MNIST_FILES)} (set LUCID_DATA_DIR to a folder holding mnist/)"
    )


@pytest.fixture(scope="session")
def cifar10_archive(data_dir: Path) -> Path:
    path = data_dir / CIFAR10_ARCHIVE
    if not path.is_file():
        pytest.skip(f"CIFAR-10 is absent: no {path} (set LUCID_DATA_DIR to its parent folder)")
    return path


@pytest.fixture(scope="session")
def torch() -> ModuleType:
    return pytest.importorskip(
        "torch", reason="torch is not installed: run `hatch run parity:test`"
    )


@pytest.fixture(scope="session")
def mlx() -> ModuleType:
    return pytest.importorskip(
        "mlx.core", reason="mlx is not installed (pip install lucid-backend-mlx)"
    )
