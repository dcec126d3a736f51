"""``tools/port_check/port_check.py`` as a module, for the tests that run real PyTorch programs
with their imports mapped (nanoGPT, word_language_model, the tutorials). Not a test module;
the tests import it from this folder."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def port_check() -> types.ModuleType:
    """The port_check tool, loaded from its file (tools/ is not a package)."""
    path = REPO_ROOT / "tools" / "port_check" / "port_check.py"
    spec = importlib.util.spec_from_file_location("port_check", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
