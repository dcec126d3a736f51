"""The integration tests' optional peers; the data fixtures are the repository's conftest.py.

Fixtures skip (with the reason in pytest's `-ra` summary) when what they need is absent:

- `torch`: the torch module (parity tests; `hatch run parity:test` installs it).
- `mlx`: the `mlx.core` module (MLX backend tests).
"""

from __future__ import annotations

from types import ModuleType

import pytest


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
