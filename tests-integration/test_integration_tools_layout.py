"""The workspace layout that the tooling relies on (DESIGN.md, CONTRIBUTING.md)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in REPO_ROOT.glob("packages/*/pyproject.toml"))
IGNORED = {".git", ".hatch", "node_modules", "build", "dist", ".venv", "venv"}


def test_layout_all_six_packages_exist() -> None:
    names = [p.name for p in PACKAGES]
    assert names == [
        "lucid-backend-mlx",
        "lucid-core",
        "lucid-data",
        "lucid-models",
        "lucid-nn",
        "lucid-optim",
    ]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_layout_package_has_its_own_metadata(package: Path) -> None:
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    assert project["name"] == package.name
    assert "version" in project and "version" not in project.get("dynamic", [])
    assert (package / "README.md").is_file() and (package / "CHANGELOG.md").is_file()
    typed = list((package / "src").rglob("py.typed"))
    assert typed, f"{package.name} ships no py.typed"
    tests = list((package / "tests").glob("test_*.py"))
    assert tests, f"{package.name} has no tests in {package / 'tests'}"


def test_layout_test_file_basenames_are_unique() -> None:
    """pytest runs with --import-mode=importlib over several tests/ folders: prefix basenames."""
    seen: dict[str, list[str]] = defaultdict(list)
    for path in REPO_ROOT.rglob("test_*.py"):
        parts = set(path.relative_to(REPO_ROOT).parts)
        if not parts & IGNORED:
            seen[path.name].append(path.relative_to(REPO_ROOT).as_posix())
    duplicates = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not duplicates, f"test files share a basename: {duplicates}"
