"""torchvision's public names, read from its sources with `ast` (torchvision is not imported:
its wheel does not run with this torch). Standard library only.

    pip download torchvision==0.28.0 --no-deps -d /tmp/tv
    python tools/gauges/run.py --only surface --torchvision /tmp/tv/torchvision-0.28.0-*.whl

A module's names are its literal `__all__` when it has one, else every public name it defines
or imports; `from .x import *` adds x's names.
"""

from __future__ import annotations

import ast
from pathlib import Path

# torchvision namespace -> lucid's: port_check maps `torchvision[.x]` to `lucid.data[.x]`;
# the model builders live in lucid-models (`lucid.models`).
TORCHVISION_NAMESPACES = {
    **{
        f"torchvision.{name}": f"lucid.data.{name}"
        for name in (
            "datasets",
            "transforms",
            "transforms.v2",
            "transforms.functional",
            "utils",
            "ops",
            "io",
            "tv_tensors",
        )
    },
    # the path a ported program reaches (lucid.data.models forwards to lucid.models)
    "torchvision.models": "lucid.data.models",
}


def module_file(root: Path, dotted: str) -> Path | None:
    """The source of module `dotted` under `root` (a package's __init__.py or a .py file)."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _literal_all(tree: ast.Module) -> list[str] | None:
    names: list[str] | None = None
    for node in tree.body:
        value = None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value, names = node.value, []
        elif isinstance(node, ast.AugAssign) and getattr(node.target, "id", "") == "__all__":
            value = node.value
        if value is None or names is None:
            continue
        try:
            names += [str(n) for n in ast.literal_eval(value)]
        except ValueError:
            return None  # computed: fall back to the module's definitions
    return names


def _resolve(package: str, module: str | None, level: int) -> str:
    """The absolute name of `from <level dots><module> import ...` inside `package`."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


def public_names(root: Path, dotted: str, seen: set[str] | None = None) -> set[str]:
    """The public names of module `dotted` of the source tree at `root`."""
    seen = set() if seen is None else seen
    if dotted in seen:
        return set()
    seen.add(dotted)
    path = module_file(root, dotted)
    if path is None:
        return set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = _literal_all(tree)
    if declared is not None:
        return {n for n in declared if not n.startswith("_")}
    package = dotted if path.name == "__init__.py" else dotted.rpartition(".")[0]
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = _resolve(package, node.module, node.level)
            if source.split(".")[0] != dotted.split(".")[0]:
                continue  # typing, PIL, torch: not this package's API
            for alias in node.names:
                if alias.name == "*":
                    names |= public_names(root, source, seen)
                elif not alias.name.startswith("_"):
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return {n for n in names if not n.startswith("_")}


def source_root(path: Path, scratch: Path) -> Path:
    """The folder holding `torchvision/`: `path` itself, or a wheel extracted into `scratch`."""
    if path.is_dir():
        return path
    import zipfile

    with zipfile.ZipFile(path) as wheel:
        members = [m for m in wheel.namelist() if m.endswith(".py")]
        wheel.extractall(scratch, members)
    return scratch
