"""Repository-wide test setup, loaded by every pytest run from the repository root.

Each test starts from the same random state: lucid's generators (every backend) and NumPy's
global generator are seeded before it runs, so a test's outcome does not depend on which tests
ran before it or in what order.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid

SEED = 0


@pytest.fixture(autouse=True)
def _seed_random_state() -> None:
    lucid.manual_seed(SEED)
    np.random.seed(SEED)
