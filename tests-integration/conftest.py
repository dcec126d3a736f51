"""The integration tests' optional peers; the data fixtures are the repository's conftest.py.

Fixtures skip (with the reason in pytest's `-ra` summary) when what they need is absent:

- `torch`: the torch module (parity tests; `hatch run parity:test` installs it).
- `mlx`: the `mlx.core` module (MLX backend tests).

`one_thread` (not autouse: a module asks for it with ``pytest.mark.usefixtures``) runs a test
at one thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

import lucid


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


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Compiled and eager compared at one thread: at two, a mid-sized product's route (OpenBLAS's
    threads, numba's, one thread) follows the runtime of the last parallel work, and a replay,
    which runs fewer or fused ops, can meet another route than eager did, with other last bits
    (docs/guides/compile.md)."""
    before = lucid.get_num_threads()
    lucid.set_num_threads(1)
    yield
    lucid.set_num_threads(before)
