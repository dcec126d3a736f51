"""tools/check_boundaries.py: the real workspace is clean, and planted violations are caught."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOL = REPO_ROOT / "tools" / "check_boundaries.py"
sys.path.insert(0, str(TOOL.parent))

import check_boundaries  # noqa: E402


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of every package's pyproject.toml and src/ (no tests, no caches)."""
    for pyproject in REPO_ROOT.glob("packages/*/pyproject.toml"):
        target = tmp_path / pyproject.parent.relative_to(REPO_ROOT)
        target.mkdir(parents=True)
        shutil.copy(pyproject, target)
        if (pyproject.parent / "src").is_dir():
            shutil.copytree(
                pyproject.parent / "src",
                target / "src",
                ignore=shutil.ignore_patterns("__pycache__"),
            )
    core = tmp_path / "packages" / "lucid-core" / "src" / "lucid"
    for init in (core / "__init__.py", core / "backends" / "__init__.py"):
        init.parent.mkdir(parents=True, exist_ok=True)
        init.touch()
    return tmp_path


def plant(root: Path, package: str, relative: str, code: str) -> Path:
    path = root / "packages" / package / "src" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write("\n" + code + "\n")
    return path


def messages(root: Path) -> list[str]:
    violations, _ = check_boundaries.check(root)
    return [v.message for v in violations]


def test_tools_boundaries_real_workspace_is_clean() -> None:
    result = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "boundary check OK" in result.stdout


def test_tools_boundaries_copy_is_clean(workspace: Path) -> None:
    assert messages(workspace) == []


def test_tools_boundaries_catches_undeclared_sibling_import(workspace: Path) -> None:
    planted = plant(workspace, "lucid-optim", "lucid/optim/_planted.py", "import lucid.nn")
    result = subprocess.run(
        [sys.executable, str(TOOL), "--root", str(workspace)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert f"{planted}:2: lucid-optim imports lucid.nn, shipped by lucid-nn" in result.stdout
    assert "boundary check FAILED: 1 violation(s)" in result.stdout


@pytest.mark.parametrize(
    "code",
    [
        "from lucid.nn import Linear",
        "from lucid import nn",
        "from .. import nn",
        "from ..nn.functional import relu",
        "import importlib\nimportlib.import_module('lucid.nn')",
        "def lazy():\n    import lucid.nn.functional as F\n    return F",
    ],
)
def test_tools_boundaries_catches_every_import_form(workspace: Path, code: str) -> None:
    plant(workspace, "lucid-data", "lucid/data/_planted.py", code)
    found = messages(workspace)
    assert found and all("lucid-data imports lucid.nn" in m for m in found), found


def test_tools_boundaries_allows_declared_siblings_and_extras(workspace: Path) -> None:
    plant(workspace, "lucid-models", "lucid/models/_planted.py", "import lucid.nn")
    plant(workspace, "lucid-models", "lucid/models/_planted_train.py", "import lucid.optim")
    plant(workspace, "lucid-nn", "lucid/nn/_planted.py", "from lucid import Tensor")
    assert messages(workspace) == []


@pytest.mark.parametrize(
    ("code", "module"),
    [
        ("from lucid._creation import _to_array", "lucid._creation"),
        ("import lucid._tensor", "lucid._tensor"),
        ("from lucid import _tensor", "lucid._tensor"),
        ("from lucid.backends import _blas", "lucid.backends._blas"),
        ("from lucid.backends._blas import blas_threads as threads", "lucid.backends._blas"),
        ("def lazy():\n    from lucid.autograd import _engine_planted\n    return 1",
         "lucid.autograd._engine_planted"),
    ],
)  # fmt: skip
def test_tools_boundaries_catches_private_import_from_another_package(
    workspace: Path, code: str, module: str
) -> None:
    planted = plant(workspace, "lucid-nn", "lucid/nn/_planted.py", code)
    result = subprocess.run(
        [sys.executable, str(TOOL), "--root", str(workspace)], capture_output=True, text=True
    )
    assert result.returncode == 1
    line = 1 + code.count("\n") if code.startswith("def") else 2
    assert result.stdout.splitlines()[:-1] == [
        f"{planted}:{line}: lucid-nn imports {module}, private to lucid-core: import a public "
        "name instead (or give this one a public name in lucid-core)"
    ]


def test_tools_boundaries_catches_private_import_of_a_declared_sibling(workspace: Path) -> None:
    plant(workspace, "lucid-models", "lucid/models/_planted.py", "from lucid.nn import _hooks")
    assert messages(workspace) == [
        "lucid-models imports lucid.nn._hooks, private to lucid-nn: import a public name "
        "instead (or give this one a public name in lucid-nn)"
    ]


def test_tools_boundaries_allows_private_imports_within_a_package_and_dunders(
    workspace: Path,
) -> None:
    plant(workspace, "lucid-nn", "lucid/nn/_planted.py", "from lucid.nn import _hooks")
    plant(workspace, "lucid-core", "lucid/_planted.py", "from lucid._creation import _to_array")
    plant(workspace, "lucid-optim", "lucid/optim/_planted.py", "from lucid import __version__")
    assert messages(workspace) == []


def test_tools_boundaries_core_init_must_not_import_optional_subpackage(workspace: Path) -> None:
    plant(workspace, "lucid-core", "lucid/__init__.py", "from lucid import nn")
    found = messages(workspace)
    assert found == [
        "lucid/__init__.py imports lucid.nn (shipped by lucid-nn): lucid-core's namespace "
        "__init__ must not import an optional subpackage"
    ]


def test_tools_boundaries_core_backends_init_must_not_import_the_plugin(workspace: Path) -> None:
    plant(workspace, "lucid-core", "lucid/backends/__init__.py", "from . import mlx")
    assert any(
        "lucid/backends/__init__.py imports lucid.backends.mlx" in m for m in messages(workspace)
    )


def test_tools_boundaries_core_imports_no_sibling_anywhere(workspace: Path) -> None:
    plant(workspace, "lucid-core", "lucid/_planted.py", "import lucid.optim")
    found = messages(workspace)
    assert found and "lucid-core imports lucid.optim" in found[0]


@pytest.mark.parametrize("init", ["lucid/__init__.py", "lucid/utils/__init__.py"])
def test_tools_boundaries_only_core_ships_the_namespace_init(workspace: Path, init: str) -> None:
    plant(workspace, "lucid-data", init, "")
    assert any(f"lucid-data ships {init}" in m for m in messages(workspace))


def test_tools_boundaries_unknown_lucid_module_is_reported(workspace: Path) -> None:
    plant(workspace, "lucid-nn", "lucid/nn/_planted.py", "import lucid.vision")
    assert messages(workspace) == ["lucid-nn imports lucid.vision, which no package ships"]


def test_tools_boundaries_sibling_declared_by_path_is_reported(workspace: Path) -> None:
    pyproject = workspace / "packages" / "lucid-optim" / "pyproject.toml"
    text = pyproject.read_text().replace(
        '"lucid-core>=0.1,<0.2"', '"lucid-core @ file:///somewhere/lucid-core"'
    )
    pyproject.write_text(text)
    assert any("declares sibling 'lucid-core @ file:" in m for m in messages(workspace))
