"""The guides' code runs: every ```python block of docs/guides/*.md and docs/index.md.

The blocks of one guide run in order in one namespace, in a temporary folder, as a reader
would paste them. Only blocks whose info string is exactly ``python`` run; a block that must
not (PyTorch code, a file excerpt) says so with a title (```python title="train.py"```).
A traceback names the guide's file and line.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import lucid

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGES = [REPO_ROOT / "docs" / "index.md", *sorted((REPO_ROOT / "docs" / "guides").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)
IMPORT = re.compile(r"^\s*(?:import|from) (lucid\.[\w.]+)", re.M)
# Distributions a guide may need that an environment may lack: its test then skips.
OPTIONAL = ("lucid.distributed", "lucid.onnx")


def guide_source(text: str) -> str:
    """The python blocks of ``text`` at their own line numbers, the rest blank."""
    lines = [""] * (text.count("\n") + 1)
    for match in BLOCK.finditer(text):
        first = text.count("\n", 0, match.start(1))
        for i, line in enumerate(match.group(1).splitlines()):
            lines[first + i] = line
    return "\n".join(lines)


def missing_modules(source: str) -> list[str]:
    """The optional lucid subpackages that ``source`` imports and this environment lacks."""
    missing = []
    imported = set(IMPORT.findall(source))
    for name in sorted(n for n in imported if n.startswith(OPTIONAL)):
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:  # lucid's finder names the distribution to install
            found = False
        if not found:
            missing.append(name)
    return missing


def test_docs_guide_source_keeps_line_numbers() -> None:
    text = "# T\n\n```python\na = 1\n```\n\n```bash\nls\n```\n```python\nb = a\n```\n"
    assert guide_source(text).splitlines()[3] == "a = 1"
    assert guide_source(text).splitlines()[10] == "b = a"
    assert "ls" not in guide_source(text)
    assert missing_modules("import lucid.nn as nn\nfrom lucid.nope import x\n") == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_docs_guide_code_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    text = page.read_text(encoding="utf-8")
    source = guide_source(text)
    missing = missing_modules(source)
    if missing:
        pytest.skip(f"{page.name} needs {missing}, not installed here")
    if "MNIST(" in text:
        monkeypatch.setenv("MNIST_DIR", str(request.getfixturevalue("mnist_dir")))
    monkeypatch.chdir(tmp_path)
    default_dtype = lucid.get_default_dtype()
    try:
        code = compile(source, str(page), "exec")
        exec(code, {"__name__": "__main__"})
    finally:
        lucid.set_default_dtype(default_dtype)
