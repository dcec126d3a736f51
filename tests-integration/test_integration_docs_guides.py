"""The guides' code runs: every ```python block of docs/guides/*.md and docs/index.md.

The blocks of one guide run in order in one namespace, in a temporary folder, as a reader
would paste them. Only blocks whose info string is exactly ``python`` run; a block that must
not (PyTorch code, a file excerpt) says so with a title (```python title="train.py"```).
A traceback names the guide's file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import lucid

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGES = [REPO_ROOT / "docs" / "index.md", *sorted((REPO_ROOT / "docs" / "guides").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


def guide_source(text: str) -> str:
    """The python blocks of ``text`` at their own line numbers, the rest blank."""
    lines = [""] * (text.count("\n") + 1)
    for match in BLOCK.finditer(text):
        first = text.count("\n", 0, match.start(1))
        for i, line in enumerate(match.group(1).splitlines()):
            lines[first + i] = line
    return "\n".join(lines)


def test_docs_guide_source_keeps_line_numbers() -> None:
    text = "# T\n\n```python\na = 1\n```\n\n```bash\nls\n```\n```python\nb = a\n```\n"
    assert guide_source(text).splitlines()[3] == "a = 1"
    assert guide_source(text).splitlines()[10] == "b = a"
    assert "ls" not in guide_source(text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_docs_guide_code_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    text = page.read_text(encoding="utf-8")
    if "MNIST(" in text:
        monkeypatch.setenv("MNIST_DIR", str(request.getfixturevalue("mnist_dir")))
    monkeypatch.chdir(tmp_path)
    default_dtype = lucid.get_default_dtype()
    try:
        code = compile(guide_source(text), str(page), "exec")
        exec(code, {"__name__": "__main__"})
    finally:
        lucid.set_default_dtype(default_dtype)
    assert BLOCK.search(text) or page.stem in {"porting"}, f"{page.name} has no python block"
