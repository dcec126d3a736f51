"""The API reference's pages (``PAGES`` in docs/hooks/api.py) against the public names.

Every name reachable from a package's ``__all__`` must have an entry on some page, under its
own path or as the same object under another public path (``lucid.no_grad`` is
``lucid.autograd.no_grad``), and every function, class, method and property a docstring (a
base class's counts for an override). The docs build (``hatch run docs:build``) checks the
same and that each entry rendered; this test needs no MkDocs.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
ENTRY = re.compile(r"^::: (\S+)$", re.M)
CONSTANT = re.compile(r'<span id="([^"]+)"></span>')


def load_api() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lucid_docs_api", REPO_ROOT / "docs/hooks/api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


api = load_api()


@pytest.fixture(scope="module")
def entries() -> list[str]:
    """Every path the reference pages document, read back from their Markdown."""
    paths: list[str] = []
    for page in api.pages():
        markdown = api.page_markdown(page)
        paths += ENTRY.findall(markdown) + CONSTANT.findall(markdown)
    return paths


def test_docs_every_public_name_has_a_reference_entry(entries: list[str]) -> None:
    documented = set(entries)
    objects = {id(api.resolve(p)) for p in entries if not api.is_constant(api.resolve(p))}

    def covered(path: str) -> bool:
        value = api.resolve(path)
        return path in documented or (not api.is_constant(value) and id(value) in objects)

    missing = sorted(p for p in api.expected_names() if not covered(p))
    assert not missing, f"public names with no entry in docs/hooks/api.py's PAGES: {missing}"


def test_docs_every_entry_resolves_once(entries: list[str]) -> None:
    twice = sorted({p for p in entries if entries.count(p) > 1})
    assert not twice, f"documented more than once: {twice}"
    for path in entries:
        api.resolve(path)  # raises for a path that names nothing


def test_docs_every_function_and_class_has_a_docstring() -> None:
    missing = api.missing_docstrings()
    assert not missing, f"public names without a docstring (add one, PyTorch's words): {missing}"


def test_docs_pages_name_the_distribution_that_ships_them() -> None:
    for page in api.pages():
        for module in api.page_modules(page):
            assert api.page_distribution(module) == page.distribution, (page.slug, module)


def top_module(src: Path) -> str:
    """The outermost package a distribution's ``src`` ships (``lucid``, ``lucid.nn``, ...)."""
    inits = sorted(src.glob("lucid/**/__init__.py"), key=lambda p: (len(p.parts), p))
    return ".".join(inits[0].parent.relative_to(src).parts)


def test_docs_every_installed_distribution_has_a_page() -> None:
    with_pages = {p.distribution for p in api.pages()}
    for src in sorted(REPO_ROOT.glob("packages/*/src")):
        try:
            importlib.import_module(top_module(src))
        except ImportError:
            continue  # not installed in this environment: the site leaves it out
        assert src.parent.name in with_pages, f"{src.parent.name} has no page in api.PAGES"


def test_docs_doctest_lines_are_fenced() -> None:
    text = "Sum.\n\n>>> x = 1\n>>> x + 1\n2\n\nAfter.\n    >>> y\n"
    assert api.fence_doctests(text).splitlines() == [
        "Sum.", "", "```pycon", ">>> x = 1", ">>> x + 1", "2", "```", "", "After.",
        "    ```pycon", "    >>> y", "    ```",
    ]  # fmt: skip
    fenced = "```python\n>>> z\n```"
    assert api.fence_doctests(fenced) == fenced
