"""MkDocs hooks: write the API reference pages from ``api.PAGES`` and make the build strict.

- ``on_config``: import every documented package (griffe then inspects the live modules, so
  ``__all__`` lists computed at import time are seen), lay the ``lucid`` namespace of all
  ``packages/*/src`` out as one merged tree for griffe to walk, put the reference pages and
  every report under ``docs/experiments/`` in the nav, and stop the build on a public name
  without a docstring.
- ``on_files``: add the generated ``reference/*.md`` pages.
- ``on_post_build``: stop the build if an entry has no anchor in its rendered page.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))
import api  # noqa: E402

REFERENCE = "reference"


def _merge(sources: list[Path], target: Path) -> None:
    """Symlink the union of ``sources`` into ``target``; folders present in several are merged."""
    target.mkdir(exist_ok=True)
    names = sorted({c.name for s in sources for c in s.iterdir() if c.name != "__pycache__"})
    for name in names:
        found = [s / name for s in sources if (s / name).exists()]
        if len(found) > 1 and all(f.is_dir() for f in found):
            _merge(found, target / name)
        else:
            (target / name).symlink_to(found[0])


def _namespace_tree(distributions: set[str]) -> str:
    """A temporary folder holding ``lucid/``: every documented distribution's tree, merged."""
    root = Path(tempfile.mkdtemp(prefix="lucid-docs-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    sources = [api.REPO / "packages" / d / "src" / "lucid" for d in sorted(distributions)]
    _merge(sources, root / "lucid")
    return str(root)


def _reference_nav() -> list[Any]:
    return [f"{REFERENCE}/index.md", *({p.title: f"{REFERENCE}/{p.slug}.md"} for p in api.pages())]


def _title(page: Path) -> str:
    first = page.read_text(encoding="utf-8").split("\n", 1)[0]
    return first.lstrip("# ").replace("`", "") if first.startswith("# ") else page.stem


def _experiments_nav(docs: Path) -> list[Any]:
    """Every report under docs/experiments/, each folder's README.md first."""
    pages = sorted(docs.glob("experiments/*/*.md"), key=lambda p: (p.parent, p.stem != "README"))
    return [{_title(p): p.relative_to(docs).as_posix()} for p in pages]


def _set_nav(config: Any) -> None:
    generated = {
        "API reference": _reference_nav(),
        "Experiments": _experiments_nav(Path(config["docs_dir"])),
    }
    items = [i for i in config["nav"] if isinstance(i, dict) and set(i) & set(generated)]
    if len(items) != len(generated):
        raise PluginError(f"mkdocs.yml: the nav needs the entries {sorted(generated)}")
    for item in items:
        (key,) = item
        item[key] = generated[key]


@event_priority(100)  # before mkdocstrings reads its handler options
def on_config(config: Any) -> Any:
    for page in api.pages():
        for module in page.modules:
            importlib.import_module(module)
    missing = api.missing_docstrings()
    if missing:
        raise PluginError(
            f"{len(missing)} public names have no docstring (add one, in PyTorch's words): "
            + ", ".join(missing)
        )
    handler = config["plugins"]["mkdocstrings"].config["handlers"]["python"]
    handler["paths"] = [_namespace_tree({p.distribution for p in api.pages()})]
    _set_nav(config)
    return config


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, f"{REFERENCE}/index.md", content=api.index_markdown()))
    for page in api.pages():
        content = api.page_markdown(page)
        files.append(File.generated(config, f"{REFERENCE}/{page.slug}.md", content=content))
    return files


def on_post_build(config: Any) -> None:
    site = Path(config["site_dir"])
    missing = []
    for page in api.pages():
        html = (site / REFERENCE / page.slug / "index.html").read_text(encoding="utf-8")
        for section in api.sections(page):
            missing += [p for p in section.entries + section.constants if f'id="{p}"' not in html]
    if missing:
        raise PluginError(f"{len(missing)} reference entries were not rendered: {missing}")
