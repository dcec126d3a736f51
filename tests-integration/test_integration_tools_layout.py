"""The workspace layout that the tooling relies on (DESIGN.md, CONTRIBUTING.md)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in REPO_ROOT.glob("packages/*/pyproject.toml"))
IGNORED = {".git", ".hatch", "node_modules", "build", "dist", ".venv", "venv"}


def test_layout_every_package_exists() -> None:
    names = [p.name for p in PACKAGES]
    assert names == [
        "lucid-backend-mlx",
        "lucid-core",
        "lucid-data",
        "lucid-distributed",
        "lucid-models",
        "lucid-nn",
        "lucid-onnx",
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


def _sibling_closure(name: str, extras: list[str], projects: dict[str, dict]) -> set[str]:
    """The package and every sibling it declares (with the given extras), transitively."""
    found, todo = set(), [(name, extras)]
    while todo:
        current, wanted = todo.pop()
        if current in found:
            continue
        found.add(current)
        project = projects[current]
        requirements = list(project.get("dependencies", []))
        for extra in wanted:
            requirements += project.get("optional-dependencies", {}).get(extra, [])
        for requirement in requirements:
            dep = requirement.split(";")[0].split("[")[0].split(">")[0].split("<")[0].strip()
            if dep in projects:
                todo.append((dep, []))
    return found


def test_layout_isolation_envs_hold_exactly_the_declared_siblings() -> None:
    projects = {
        p.name: tomllib.loads((p / "pyproject.toml").read_text())["project"] for p in PACKAGES
    }
    envs = tomllib.loads((REPO_ROOT / "hatch.toml").read_text())["envs"]
    covered = set()
    for env_name, env in envs.items():
        if not env_name.startswith("iso-"):
            continue
        members = [m if isinstance(m, dict) else {"path": m} for m in env["workspace"]["members"]]
        names = {Path(m["path"]).name for m in members}
        main = members[0]
        package = Path(main["path"]).name
        expected = _sibling_closure(package, list(main.get("features", [])), projects)
        assert names == expected, f"{env_name} should hold exactly {sorted(expected)}"
        assert f"packages/{package}/tests" in env.get("scripts", {}).get("test", "")
        covered.add(package)
    assert covered == set(projects), f"packages without an isolation env: {set(projects) - covered}"
