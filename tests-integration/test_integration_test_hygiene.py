"""Every float comparison in the test suite states both of its tolerances.

A relative tolerance alone fails on values near zero (and on sums whose order changes with the
BLAS thread count); an absolute one alone says nothing about large values. The check parses each
test file with `ast` and lists every comparison call that does not name both, as file:line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# Comparison function name -> the keywords that carry its relative and absolute tolerance.
# `allclose`/`isclose` cover np.*, lucid.* and Tensor methods; `assert_close` is torch.testing's.
TOLERANCE_KEYWORDS = {
    "assert_allclose": ("rtol", "atol"),
    "allclose": ("rtol", "atol"),
    "isclose": ("rtol", "atol"),
    "assert_close": ("rtol", "atol"),
    "approx": ("rel", "abs"),
}
MATH_ISCLOSE_KEYWORDS = ("rel_tol", "abs_tol")
# Where the tolerances may also be passed by position (allclose/isclose are also Tensor methods,
# whose positions differ: they must name them).
FIRST_TOLERANCE_POSITION = {"assert_allclose": 2, "approx": 1}
# Test helpers that forward `**kwargs` to a comparison: their call sites are checked instead.
FORWARDING_HELPERS: dict[str, tuple[str, str]] = {}


def hygiene_files() -> list[Path]:
    roots = [REPO_ROOT / "tests-integration", *sorted((REPO_ROOT / "packages").glob("*/tests"))]
    files = [path for root in roots for path in sorted(root.rglob("*.py"))]
    return [REPO_ROOT / "conftest.py", *files]


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _enclosing_functions(tree: ast.AST) -> Iterator[tuple[ast.Call, str | None]]:
    """Each call in `tree` with the name of the function it is written in (None at top level)."""

    def walk(node: ast.AST, owner: str | None) -> Iterator[tuple[ast.Call, str | None]]:
        for child in ast.iter_child_nodes(node):
            is_function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            inner = child.name if is_function else owner
            if isinstance(child, ast.Call):
                yield child, owner
            yield from walk(child, inner)

    return walk(tree, None)


def _is_math_isclose(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "isclose"
        and isinstance(func.value, ast.Name)
        and func.value.id == "math"
    )


def missing_tolerances(call: ast.Call, owner: str | None) -> list[str]:
    """The tolerance keywords `call` should name and does not ([] when it is not a comparison)."""
    name = _called_name(call)
    wanted = TOLERANCE_KEYWORDS.get(name or "") or FORWARDING_HELPERS.get(name or "")
    if _is_math_isclose(call):
        wanted = MATH_ISCLOSE_KEYWORDS
    if wanted is None:
        return []
    given = {keyword.arg for keyword in call.keywords}
    first = FIRST_TOLERANCE_POSITION.get(name or "")
    if first is not None:
        given.update(wanted[: max(0, len(call.args) - first)])
    if None in given and owner in FORWARDING_HELPERS:
        return []  # a helper's own `**kwargs` forwarding; its callers are checked
    return [keyword for keyword in wanted if keyword not in given]


def untoleranced_comparisons(path: Path) -> list[str]:
    """`file:line: name(...) lacks ...` for each comparison in `path` missing a tolerance."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    problems = []
    for call, owner in _enclosing_functions(tree):
        missing = missing_tolerances(call, owner)
        if missing:
            problems.append(f"{shown}:{call.lineno}: {_called_name(call)}(...) lacks {missing}")
    return problems


def test_every_float_comparison_names_rtol_and_atol() -> None:
    problems = [line for path in hygiene_files() for line in untoleranced_comparisons(path)]
    assert not problems, "comparisons without an explicit tolerance pair:\n" + "\n".join(problems)


def test_check_finds_planted_comparisons(tmp_path: Path) -> None:
    planted = tmp_path / "test_planted.py"
    planted.write_text(
        "import math\n"
        "import numpy as np\n"
        "import pytest\n"
        "def test_bad(a, b, tol):\n"
        "    np.testing.assert_allclose(a, b, rtol=1e-12)\n"
        "    assert np.allclose(a, b)\n"
        "    assert a == pytest.approx(b, abs=1e-9)\n"
        "    np.testing.assert_allclose(a, b, **tol)\n"
        "    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)\n"
        "    assert a == pytest.approx(b, rel=1e-6, abs=1e-12)\n"
        "    assert math.isclose(a, b, rel_tol=1e-9)\n"
        "    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)\n"
        "    np.testing.assert_allclose(a, b, 1e-12, 1e-12)\n"
        "    np.testing.assert_allclose(a, b, 1e-12)\n"
    )
    assert untoleranced_comparisons(planted) == [
        f"{planted}:5: assert_allclose(...) lacks ['atol']",
        f"{planted}:6: allclose(...) lacks ['rtol', 'atol']",
        f"{planted}:7: approx(...) lacks ['rel']",
        f"{planted}:8: assert_allclose(...) lacks ['rtol', 'atol']",
        f"{planted}:11: isclose(...) lacks ['abs_tol']",
        f"{planted}:14: assert_allclose(...) lacks ['atol']",
    ]
