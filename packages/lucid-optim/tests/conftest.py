"""lucid-optim's tests share one table of optimizer cases, ``optim_cases.py``: put this folder
on the import path (pytest's importlib mode adds no test folder) so each test file imports it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
