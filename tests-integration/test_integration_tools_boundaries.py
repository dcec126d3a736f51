"""tools/check_boundaries.py: the real workspace is clean, and planted violations are caught.

Tests that plant into a copy of the real workspace compare what the planting adds to what the
untouched copy reports (`BASELINE`), so each checks its own violation whatever lucid-core's
state; `test_tools_boundaries_real_workspace_is_clean` and `..._copy_is_clean` require that
state to be clean. The layer and cycle tests build tiny synthetic workspaces (`tiny`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOL = REPO_ROOT / "tools" / "check_boundaries.py"
sys.path.insert(0, str(TOOL.parent))

import check_boundaries  # noqa: E402

ROOT = "<root>"  # a workspace copy's path, in BASELINE's lines
BASELINE: set[str] = set()  # what the untouched copy reports (nothing once core is clean)


@pytest.fixture(scope="session")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    root = copy_workspace(tmp_path_factory.mktemp("pristine"))
    violations, _ = check_boundaries.check(root)
    return {str(v).replace(str(root), ROOT) for v in violations}


@pytest.fixture
def workspace(tmp_path: Path, baseline: set[str]) -> Path:
    BASELINE.clear()
    BASELINE.update(baseline)
    return copy_workspace(tmp_path)


def copy_workspace(tmp_path: Path) -> Path:
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
    """What planting added: the violations the untouched copy does not have."""
    violations, _ = check_boundaries.check(root)
    return [v.message for v in violations if str(v).replace(str(root), ROOT) not in BASELINE]


def run_tool(root: Path, *args: str) -> tuple[int, list[str]]:
    """The tool's exit status and its output lines, less those the untouched copy prints."""
    result = subprocess.run(
        [sys.executable, str(TOOL), "--root", str(root), *args], capture_output=True, text=True
    )
    lines = result.stdout.splitlines()
    return result.returncode, [x for x in lines if x.replace(str(root), ROOT) not in BASELINE]


def test_tools_boundaries_real_workspace_is_clean() -> None:
    result = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "boundary check OK" in result.stdout


def test_tools_boundaries_copy_is_clean(workspace: Path) -> None:
    violations, _ = check_boundaries.check(workspace)
    assert [str(v) for v in violations] == []


def test_tools_boundaries_catches_undeclared_sibling_import(workspace: Path) -> None:
    # lucid-data declares lucid-core (and lucid-nn as its [nn] extra), not lucid-optim
    planted = plant(workspace, "lucid-data", "lucid/data/_planted.py", "import lucid.optim")
    returncode, lines = run_tool(workspace)
    assert returncode == 1
    assert f"{planted}:2: lucid-data imports lucid.optim, shipped by lucid-optim" in lines[0]
    assert f"boundary check FAILED: {1 + len(BASELINE)} violation(s)" in lines[-1]


@pytest.mark.parametrize(
    "code",
    [
        "from lucid.optim import SGD",
        "from lucid import optim",
        "from .. import optim",
        "from ..optim.lr_scheduler import StepLR",
        "import importlib\nimportlib.import_module('lucid.optim')",
        "def lazy():\n    import lucid.optim.lr_scheduler as S\n    return S",
    ],
)
def test_tools_boundaries_catches_every_import_form(workspace: Path, code: str) -> None:
    plant(workspace, "lucid-data", "lucid/data/_planted.py", code)
    found = messages(workspace)
    assert found and all("lucid-data imports lucid.optim" in m for m in found), found


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
    returncode, lines = run_tool(workspace)
    assert returncode == 1
    line = 1 + code.count("\n") if code.startswith("def") else 2
    assert lines[:-1] == [
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
    plant(workspace, "lucid-core", "lucid/ops/_planted.py", "from lucid._creation import _to_array")
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
    plant(workspace, "lucid-core", "lucid/ops/_planted.py", "import lucid.optim")
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


# -- layers and cycles inside a distribution (tiny synthetic workspaces) -------------------

CORE_MODULES = (  # one empty module per layer, enough for the plants below
    "lucid/__init__.py",
    "lucid/dtypes.py",
    "lucid/utils/__init__.py",
    "lucid/utils/hooks.py",
    "lucid/backends/__init__.py",
    "lucid/backends/_numpy/__init__.py",
    "lucid/_tensor.py",
    "lucid/autograd/__init__.py",
    "lucid/autograd/function.py",
    "lucid/ops/__init__.py",
    "lucid/ops/unary.py",
    "lucid/ops/elementwise.py",
    "lucid/linalg/__init__.py",
)
UP = "move the shared code down or call it through a Tensor method the binder attaches"


def pyproject(name: str, include: str, dependencies: str = "") -> str:
    return textwrap.dedent(f"""\
        [project]
        name = "{name}"
        version = "0.1.0"
        dependencies = [{dependencies}]
        [tool.hatch.build.targets.wheel]
        only-include = ["{include}"]
        """)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """lucid-core with one empty module per layer, and an empty lucid-nn."""
    BASELINE.clear()  # nothing to subtract: the tiny workspace starts clean
    core = tmp_path / "packages" / "lucid-core"
    for relative in CORE_MODULES:
        (core / "src" / relative).parent.mkdir(parents=True, exist_ok=True)
        (core / "src" / relative).write_text('"""Planted."""\n')
    (core / "pyproject.toml").write_text(pyproject("lucid-core", "src/lucid"))
    nn = tmp_path / "packages" / "lucid-nn"
    (nn / "src" / "lucid" / "nn").mkdir(parents=True)
    (nn / "src" / "lucid" / "nn" / "__init__.py").write_text('"""Planted."""\n')
    (nn / "pyproject.toml").write_text(
        pyproject("lucid-nn", "src/lucid/nn", '"lucid-core>=0.1,<0.2"')
    )
    return tmp_path


def test_tools_boundaries_tiny_workspace_is_clean(tiny: Path) -> None:
    assert messages(tiny) == []


@pytest.mark.parametrize(
    ("code", "how"),
    [
        ("from lucid.ops import unary", ""),
        ("import lucid.ops.unary as unary", ""),
        ("from ...ops import unary", ""),  # in lucid/backends/_numpy/__init__.py
        ("import importlib\nimportlib.import_module('lucid.ops.unary')", ""),
        ("def lazy():\n    from lucid.ops import unary\n    return unary", " in a function"),
        ("class Lazy:\n    def f(self):\n        import lucid.ops.unary", " in a function"),
    ],
)  # fmt: skip
def test_tools_boundaries_upward_import_fails(tiny: Path, code: str, how: str) -> None:
    plant(tiny, "lucid-core", "lucid/backends/_numpy/__init__.py", code)
    assert messages(tiny) == [
        "lucid.backends._numpy (layer 1 backends) imports lucid.ops.unary (layer 4 ops), "
        f"lucid.ops (layer 4 ops, the package of lucid.ops.unary){how}: {UP}"
    ]


def test_tools_boundaries_upward_import_names_file_line_and_fails(tiny: Path) -> None:
    planted = plant(tiny, "lucid-core", "lucid/dtypes.py", "def lazy():\n    import lucid")
    returncode, lines = run_tool(tiny)
    assert returncode == 1
    assert lines == [
        f"{planted}:4: lucid.dtypes (layer 0 foundation) imports lucid (layer 6 top) in a "
        f"function: {UP}",
        "boundary check FAILED: 1 violation(s) in 14 files",
    ]


def test_tools_boundaries_reading_a_root_name_imports_the_root(tiny: Path) -> None:
    plant(tiny, "lucid-core", "lucid/ops/unary.py", "from lucid import Tensor")
    assert messages(tiny) == [f"lucid.ops.unary (layer 4 ops) imports lucid (layer 6 top): {UP}"]


@pytest.mark.parametrize(
    "code",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lucid.ops import unary",
        "import typing\nif typing.TYPE_CHECKING:\n    import lucid.linalg",
    ],
)
def test_tools_boundaries_type_checking_import_passes(tiny: Path, code: str) -> None:
    plant(tiny, "lucid-core", "lucid/_tensor.py", code)
    plant(tiny, "lucid-core", "lucid/ops/unary.py", "from lucid import _tensor")
    assert messages(tiny) == []  # neither upward nor a cycle: it never runs


def test_tools_boundaries_type_checking_else_branch_runs(tiny: Path) -> None:
    code = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    import lucid"
    plant(tiny, "lucid-core", "lucid/_tensor.py", code)
    assert messages(tiny) == [f"lucid._tensor (layer 2 tensor) imports lucid (layer 6 top): {UP}"]


def test_tools_boundaries_ancestor_package_of_a_lower_module_is_seen(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were lucid/utils/__init__.py in the tensor layer (it was, while it imported to_args),
    # importing the foundation module lucid.utils.hooks would run it: an upward import.
    monkeypatch.setitem(
        check_boundaries.CORE_LAYERS, "lucid.utils.__init__", check_boundaries.TENSOR
    )
    plant(tiny, "lucid-core", "lucid/backends/__init__.py", "from lucid.utils import hooks")
    assert messages(tiny) == [
        "lucid.backends (layer 1 backends) imports lucid.utils (layer 2 tensor, the package "
        f"of lucid.utils.hooks): {UP}"
    ]


def test_tools_boundaries_unknown_core_module_fails(tiny: Path) -> None:
    plant(tiny, "lucid-core", "lucid/newthing.py", "")
    assert messages(tiny) == [
        "lucid.newthing is in no layer: add it to the layer table in tools/check_boundaries.py "
        "(CORE_LAYERS)"
    ]


def test_tools_boundaries_two_module_cycle_in_one_layer_fails(tiny: Path) -> None:
    plant(tiny, "lucid-core", "lucid/ops/unary.py", "from lucid.ops import elementwise")
    plant(tiny, "lucid-core", "lucid/ops/elementwise.py", "def f():\n    from . import unary")
    found = messages(tiny)
    assert len(found) == 1, found
    assert found[0].startswith("import cycle in lucid-core (2 modules): ")
    loops = (
        "lucid.ops.elementwise -> lucid.ops.unary (lucid/ops/elementwise.py:4, in a function) "
        "-> lucid.ops.elementwise (lucid/ops/unary.py:3)",
        "lucid.ops.unary -> lucid.ops.elementwise (lucid/ops/unary.py:3) "
        "-> lucid.ops.unary (lucid/ops/elementwise.py:4, in a function)",
    )
    assert any(loop in found[0] for loop in loops), found


def test_tools_boundaries_cycles_report(tiny: Path) -> None:
    plant(tiny, "lucid-core", "lucid/ops/unary.py", "from lucid.ops import elementwise")
    plant(tiny, "lucid-core", "lucid/ops/elementwise.py", "from lucid.ops import unary")
    returncode, lines = run_tool(tiny, "--cycles")
    assert returncode == 1
    assert "lucid-core: 1 import cycle(s), enforced" in lines
    assert "  cycle of 2 modules: lucid.ops.elementwise, lucid.ops.unary" in lines
    assert "lucid-nn: no import cycle(s), enforced" in lines


def test_tools_boundaries_own_package_is_no_cycle_but_its_names_are(tiny: Path) -> None:
    # the package's __init__ has run before its submodules: importing a sibling is no cycle
    plant(tiny, "lucid-core", "lucid/ops/__init__.py", "from lucid.ops import unary")
    plant(tiny, "lucid-core", "lucid/ops/unary.py", "from lucid.ops import elementwise")
    assert messages(tiny) == []
    # reading a name the __init__ defines is one
    plant(tiny, "lucid-core", "lucid/ops/elementwise.py", "from lucid.ops import add")
    found = messages(tiny)
    assert len(found) == 1 and "import cycle in lucid-core (3 modules)" in found[0], found


def test_tools_boundaries_cycle_in_another_distribution_fails(tiny: Path) -> None:
    plant(tiny, "lucid-nn", "lucid/nn/a.py", "from lucid.nn import b")
    plant(tiny, "lucid-nn", "lucid/nn/b.py", "def f():\n    import lucid.nn.a")
    found = messages(tiny)
    assert len(found) == 1 and found[0].startswith("import cycle in lucid-nn (2 modules)")


def test_tools_boundaries_cross_distribution_imports_make_no_core_edge(tiny: Path) -> None:
    plant(tiny, "lucid-nn", "lucid/nn/a.py", "import lucid.linalg\nfrom lucid import Tensor")
    plant(tiny, "lucid-core", "lucid/linalg/__init__.py", "from lucid.ops import unary")
    assert messages(tiny) == []


def test_tools_boundaries_allowed_cycles_are_notes_except_in_core(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check_boundaries, "CYCLES_ALLOWED", frozenset({"lucid-nn", "lucid-core"}))
    plant(tiny, "lucid-nn", "lucid/nn/a.py", "from lucid.nn import b")
    plant(tiny, "lucid-nn", "lucid/nn/b.py", "from lucid.nn import a")
    report = check_boundaries.analyse(tiny)
    assert report.violations == []
    assert [n.message[:36] for n in report.notes] == ["import cycle in lucid-nn (2 modules)"]
    plant(tiny, "lucid-core", "lucid/ops/unary.py", "from lucid.ops import elementwise")
    plant(tiny, "lucid-core", "lucid/ops/elementwise.py", "from lucid.ops import unary")
    report = check_boundaries.analyse(tiny)
    assert [v.message[:38] for v in report.violations] == ["import cycle in lucid-core (2 modules)"]
