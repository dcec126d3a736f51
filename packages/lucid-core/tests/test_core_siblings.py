"""``import lucid`` reaches the sibling packages lazily and names the one to install when absent."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import lucid
from lucid import _siblings


def _spec_exists(module: str) -> bool:
    """Whether ``module`` is installed (the missing-sibling finder raises for absent ones)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


ABSENT = sorted(m for m in _siblings.DISTRIBUTIONS if not _spec_exists(m))
PRESENT = sorted(m for m in _siblings.DISTRIBUTIONS if _spec_exists(m))


def test_import_lucid_imports_no_sibling() -> None:
    code = (
        "import sys, lucid; "
        "print(sorted(m for m in sys.modules if m in lucid._siblings.DISTRIBUTIONS))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("module", [m for m in PRESENT if m.count(".") == 1])
def test_installed_sibling_is_an_attribute(module: str) -> None:
    name = module.split(".")[1]
    assert getattr(lucid, name) is importlib.import_module(module)


def test_utils_data_is_an_attribute_of_lucid_utils() -> None:
    if "lucid.utils.data" not in PRESENT:
        with pytest.raises(AttributeError, match="pip install lucid-data"):
            lucid.utils.data  # noqa: B018
        return
    assert lucid.utils.data is importlib.import_module("lucid.utils.data")


@pytest.mark.parametrize("module", ABSENT)
def test_importing_an_absent_sibling_names_its_distribution(module: str) -> None:
    dist = _siblings.DISTRIBUTIONS[module]
    with pytest.raises(ModuleNotFoundError, match=f"pip install {dist}") as info:
        importlib.import_module(module)
    assert info.value.name == module


@pytest.mark.parametrize("module", [m for m in ABSENT if m.count(".") == 1])
def test_absent_sibling_attribute_is_an_attribute_error_naming_it(module: str) -> None:
    name = module.split(".")[1]
    if module in _siblings.STAND_INS:
        assert getattr(lucid, name) is _siblings.STAND_INS[module]
        return
    assert not hasattr(lucid, name)
    with pytest.raises(AttributeError, match=f"pip install {_siblings.DISTRIBUTIONS[module]}"):
        getattr(lucid, name)


def test_unknown_attribute_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'$"):
        lucid.no_such_thing  # noqa: B018
    assert getattr(lucid, "no_such_thing", None) is None


def test_the_finder_is_last_and_only_answers_for_siblings() -> None:
    assert sys.meta_path[-1] is _siblings.MissingSiblingFinder
    assert _siblings.MissingSiblingFinder.find_spec("some_other_package") is None
    with pytest.raises(ModuleNotFoundError, match="no_such_pkg"):
        importlib.import_module("no_such_pkg")


@pytest.mark.skipif("lucid.distributed" in PRESENT, reason="lucid-distributed is installed")
def test_distributed_stand_in_answers_truthfully() -> None:
    dist = lucid.distributed
    assert dist.is_available() is False and dist.is_initialized() is False
    assert not hasattr(dist, "init_process_group")
    with pytest.raises(AttributeError, match="pip install lucid-distributed"):
        dist.all_reduce  # noqa: B018
    with pytest.raises(ImportError, match="pip install lucid-distributed"):
        from lucid.distributed import init_process_group  # noqa: F401
