"""tools/release.py: version bumps, dependants' ranges, CHANGELOG entries, tags, and `check`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOL = REPO_ROOT / "tools" / "release.py"
sys.path.insert(0, str(TOOL.parent))

import release  # noqa: E402

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Release Test",
    "GIT_AUTHOR_EMAIL": "release@example.invalid",
    "GIT_COMMITTER_NAME": "Release Test",
    "GIT_COMMITTER_EMAIL": "release@example.invalid",
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding a copy of every package's pyproject.toml and CHANGELOG.md."""
    for pyproject in REPO_ROOT.glob("packages/*/pyproject.toml"):
        target = tmp_path / pyproject.parent.relative_to(REPO_ROOT)
        target.mkdir(parents=True)
        shutil.copy(pyproject, target)
        shutil.copy(pyproject.parent / "CHANGELOG.md", target)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "initial")
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), "--root", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )


def version_of(root: Path, package: str) -> str:
    return release.load_packages(root)[package].version


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.glob("packages/*/*") if p.is_file()}


def test_tools_release_check_passes_on_the_real_workspace() -> None:
    result = subprocess.run([sys.executable, str(TOOL), "check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "release check OK" in result.stdout


def test_tools_release_dry_run_prints_the_plan_and_changes_nothing(repo: Path) -> None:
    before = snapshot(repo)
    result = run(repo, "bump", "lucid-core", "minor", "-m", "Renamed x.", "--dry-run")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "lucid-core: 0.1.0 -> 0.2.0 (minor); tag lucid-core-v0.2.0" in out
    assert '+version = "0.2.0"' in out
    assert "+## 0.2.0 - " in out and "+- Renamed x." in out
    assert '-    "lucid-core>=0.1,<0.2",\n+    "lucid-core>=0.2,<0.3",' in out
    assert "$ git tag -a lucid-core-v0.2.0 -m 'lucid-core 0.2.0'" in out
    assert "dry run: nothing was changed" in out
    assert snapshot(repo) == before
    assert git(repo, "tag", "-l") == ""


def test_tools_release_breaking_bump_moves_dependants_and_tags(repo: Path) -> None:
    result = run(repo, "bump", "lucid-core", "minor", "-m", "Renamed x.", "--date", "2027-01-02")
    assert result.returncode == 0, result.stderr
    assert version_of(repo, "lucid-core") == "0.2.0"
    packages = release.load_packages(repo)
    for name in ("lucid-nn", "lucid-optim", "lucid-data", "lucid-backend-mlx", "lucid-models"):
        assert "lucid-core>=0.2,<0.3" in packages[name].dependencies, name
        assert packages[name].version == "0.1.0", "dependants are released separately"
    mlx_deps = packages["lucid-backend-mlx"].dependencies
    assert "mlx[cpu]>=0.25; sys_platform == 'linux'" in mlx_deps, "other requirements untouched"
    log = (repo / "packages/lucid-core/CHANGELOG.md").read_text()
    assert log.index("## 0.2.0 - 2027-01-02\n\n- Renamed x.\n") < log.index("## 0.1.0")
    assert git(repo, "tag", "-l").split() == ["lucid-core-v0.2.0"]
    assert git(repo, "status", "--porcelain") == "", "every edited file is committed"
    assert "Release lucid-core 0.2.0" in git(repo, "log", "-1", "--format=%s")
    assert run(repo, "check").returncode == 0


def test_tools_release_patch_bump_leaves_dependants_alone(repo: Path) -> None:
    result = run(repo, "bump", "lucid-nn", "patch")
    assert result.returncode == 0, result.stderr
    assert version_of(repo, "lucid-nn") == "0.1.1"
    assert "lucid-nn>=0.1,<0.2" in release.load_packages(repo)["lucid-models"].dependencies
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["packages/lucid-nn/CHANGELOG.md", "packages/lucid-nn/pyproject.toml"]
    assert git(repo, "tag", "-l").split() == ["lucid-nn-v0.1.1"]


def test_tools_release_major_bump_of_a_zero_version_goes_to_one(repo: Path) -> None:
    assert run(repo, "bump", "lucid-nn", "major", "--no-git").returncode == 0
    assert version_of(repo, "lucid-nn") == "1.0.0"
    models = release.load_packages(repo)["lucid-models"]
    assert "lucid-nn>=1.0,<2" in models.dependencies
    assert git(repo, "tag", "-l") == ""


def test_tools_release_unreleased_section_becomes_the_version(repo: Path) -> None:
    log = repo / "packages/lucid-optim/CHANGELOG.md"
    # A changelog of its own (the real one may hold an Unreleased section already).
    log.write_text(
        "# Changelog\n\n## Unreleased\n\n- Added Lion.\n\n## 0.1.0 - 2026-11-30\n\n- First.\n"
    )
    assert run(repo, "check").returncode == 0, "an Unreleased section does not break check"
    assert (
        run(repo, "bump", "lucid-optim", "patch", "--no-git", "--date", "2027-01-02").returncode
        == 0
    )
    new = log.read_text()
    assert "Unreleased" not in new
    assert "## 0.1.1 - 2027-01-02\n\n- Added Lion.\n\n## 0.1.0" in new


def test_tools_release_check_catches_version_without_changelog_entry(repo: Path) -> None:
    pyproject = repo / "packages/lucid-data/pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.1.1"'))
    result = run(repo, "check")
    assert result.returncode == 1
    assert "lucid-data: version 0.1.1 but" in result.stdout
    assert "top entry is 0.1.0" in result.stdout


def test_tools_release_check_catches_a_range_that_excludes_the_sibling(repo: Path) -> None:
    pyproject = repo / "packages/lucid-models/pyproject.toml"
    text = pyproject.read_text().replace('"lucid-nn>=0.1,<0.2"', '"lucid-nn>=0.2,<0.3"')
    pyproject.write_text(text)
    result = run(repo, "check")
    assert result.returncode == 1
    assert "lucid-models: requires 'lucid-nn>=0.2,<0.3', which does not admit lucid-nn 0.1.0" in (
        result.stdout
    )


def test_tools_release_unknown_package_is_a_clear_error(repo: Path) -> None:
    result = run(repo, "bump", "lucid-vision", "patch", "--dry-run")
    assert result.returncode != 0
    assert "unknown package 'lucid-vision'; expected one of" in result.stderr


@pytest.mark.parametrize(
    ("specifier", "version", "expected"),
    [
        (">=0.1,<0.2", "0.1.0", True),
        (">=0.1,<0.2", "0.1.9", True),
        (">=0.1,<0.2", "0.2.0", False),
        (">=0.1,<0.2", "0.0.9", False),
        (">=1.0,<2", "1.7.3", True),
        ("~=1.4", "1.9", True),
        ("~=1.4.2", "1.5.0", False),
        ("==0.1.0", "0.1", True),
        ("!=0.1.1", "0.1.1", False),
    ],
)
def test_tools_release_admits(specifier: str, version: str, expected: bool) -> None:
    assert release.admits(specifier, version) is expected


@pytest.mark.parametrize(
    ("version", "part", "new", "breaking", "new_range"),
    [
        ("0.1.0", "patch", "0.1.1", False, ">=0.1,<0.2"),
        ("0.1.3", "minor", "0.2.0", True, ">=0.2,<0.3"),
        ("0.4.1", "major", "1.0.0", True, ">=1.0,<2"),
        ("1.2.3", "minor", "1.3.0", False, ">=1.3,<2"),
        ("1.2.3", "major", "2.0.0", True, ">=2.0,<3"),
    ],
)
def test_tools_release_version_policy(
    version: str, part: str, new: str, breaking: bool, new_range: str
) -> None:
    assert release.bumped(version, part) == new
    assert release.is_breaking(version, new) is breaking
    assert release.compatible_range(new) == new_range
    assert release.admits(new_range, new)
