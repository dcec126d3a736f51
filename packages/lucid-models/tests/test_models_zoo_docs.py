"""docs/models.md's parameter-count table is the registry's (tools/gen_model_zoo.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "gen_model_zoo.py"


def _tool() -> Any:
    if not TOOL.is_file() or not (ROOT / "docs" / "models.md").is_file():
        pytest.skip("not in a clone of the repository (tools/ and docs/ are not shipped)")
    spec = importlib.util.spec_from_file_location("gen_model_zoo", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_model_zoo_page_is_generated_from_the_registry() -> None:
    assert not _tool().stale(), "docs/models.md is out of date: run python tools/gen_model_zoo.py"


def test_model_zoo_table_lists_every_builder() -> None:
    import lucid.models as models

    table = _tool().table()
    for name in models.list_models():
        if models.get_model_factory(name).__module__.startswith("lucid.models."):
            info = models.model_info(name)
            assert f"| `{name}` |" in table and f"{info.num_params:,}" in table
