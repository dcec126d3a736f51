"""Fail when a package imports a sibling it does not declare.

Reads every package's `src/` with `ast` (nothing is imported or installed) and checks:

1. each import of a `lucid.<sub>` module shipped by another distribution is declared in the
   importer's pyproject (`dependencies` or an extra), and no module imports a `lucid.<sub>` that
   no package ships;
2. no module imports a private module or name (`lucid._x`, `lucid.backends._blas`: any dotted
   part that starts with `_`) shipped by another distribution; within one distribution private
   imports are fine;
3. the namespace `__init__.py` files of lucid-core (`lucid/`, `lucid/backends/`, `lucid/utils/`)
   import only what lucid-core ships, and only lucid-core ships them;
4. sibling dependencies are version ranges, never paths or URLs.

Usage: python tools/check_boundaries.py [--root REPO]   (exit 1 and one line per violation)
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _workspace import Package, load_packages, owner_of, requirement_name

CORE = "lucid-core"
NAMESPACE_INITS = ("lucid/__init__.py", "lucid/backends/__init__.py", "lucid/utils/__init__.py")


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    certain: bool = True  # False for `from a import b`: `a.b` may be a module or an attribute


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve_relative(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    base = current.split(".") if is_package else current.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dynamic_import(node: ast.Call) -> str | None:
    """`importlib.import_module("lucid.nn")` or `__import__("lucid.nn")` with a literal name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imports_of(path: Path, src: Path) -> Iterator[Import]:
    """Every module a file imports, `from lucid import nn` counted as `lucid.nn`."""
    current = module_name(path, src)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (Import(alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(node, current, path.name == "__init__.py")
            yield Import(base, node.lineno)
            names = (a.name for a in node.names if a.name != "*")
            yield from (Import(f"{base}.{name}", node.lineno, certain=False) for name in names)
        elif isinstance(node, ast.Call) and (target := _dynamic_import(node)):
            yield Import(target, node.lineno)


def _core_has(module: str, core: Package) -> bool:
    """Whether lucid-core's src has the top-level subpackage or module of `lucid.<x>...`."""
    top = core.src.joinpath(*module.split(".")[:2])
    return top.with_suffix(".py").is_file() or top.is_dir()


def check_file(
    path: Path, imports: list[Import], package: Package, packages: dict[str, Package]
) -> Iterator[Violation]:
    relative = path.relative_to(package.src).as_posix()
    declared = package.declared()
    for imp in imports:
        if imp.module != "lucid" and not imp.module.startswith("lucid."):
            continue
        owner = owner_of(imp.module, packages)
        if owner is None:
            continue  # outside every package's prefixes: not a lucid module at all
        if owner.name == package.name:
            continue
        if relative in NAMESPACE_INITS:
            yield Violation(
                path,
                imp.line,
                f"{relative} imports {imp.module} (shipped by {owner.name}): lucid-core's "
                "namespace __init__ must not import an optional subpackage",
            )
        elif owner.name not in declared:
            yield Violation(
                path,
                imp.line,
                f"{package.name} imports {imp.module}, shipped by {owner.name}, which "
                f'{package.pyproject} does not declare; add "{owner.name}>=X,<Y" to its '
                "dependencies (or an extra), or remove the import",
            )


def is_private(module: str) -> bool:
    """Whether a dotted path has a `_`-prefixed part (dunders such as `__version__` are public)."""
    return any(p.startswith("_") and not p.endswith("__") for p in module.split("."))


def check_private(
    path: Path, imports: list[Import], package: Package, packages: dict[str, Package]
) -> Iterator[Violation]:
    reported: set[tuple[int, str]] = set()
    for imp in imports:
        owner = owner_of(imp.module, packages)
        if owner is None or owner.name == package.name or not is_private(imp.module):
            continue
        if (imp.line, imp.module.rsplit(".", 1)[0]) in reported:
            continue  # `from lucid._x import y`: lucid._x is reported, not each name again
        reported.add((imp.line, imp.module))
        yield Violation(
            path,
            imp.line,
            f"{package.name} imports {imp.module}, private to {owner.name}: import a public "
            f"name instead (or give this one a public name in {owner.name})",
        )


def check_unknown(
    path: Path, imports: list[Import], package: Package, packages: dict[str, Package]
) -> Iterator[Violation]:
    core = packages.get(CORE)
    for imp in imports:
        owner = owner_of(imp.module, packages)
        if imp.certain and owner is core and core is not None and imp.module.startswith("lucid."):
            if not _core_has(imp.module, core):
                yield Violation(
                    path, imp.line, f"{package.name} imports {imp.module}, which no package ships"
                )


def check_layout(package: Package) -> Iterator[Violation]:
    if package.name == CORE:
        return
    for relative in NAMESPACE_INITS:
        if (package.src / relative).exists():
            yield Violation(
                package.src / relative,
                1,
                f"{package.name} ships {relative}: only lucid-core may (it extends the namespace "
                "with pkgutil.extend_path; a second copy would shadow it)",
            )


def check_requirements(package: Package, packages: dict[str, Package]) -> Iterator[Violation]:
    for requirement in package.all_requirements():
        name = requirement_name(requirement)
        if name in packages and ("@" in requirement.split(";")[0] or "<" not in requirement):
            yield Violation(
                package.pyproject,
                1,
                f"{package.name} declares sibling {requirement!r}: use a version range like "
                f'"{name}>=0.1,<0.2", never a path, URL or open-ended bound',
            )


def check(root: Path) -> tuple[list[Violation], int]:
    """All violations in the workspace at root, and the number of files read."""
    packages = load_packages(root)
    violations: list[Violation] = []
    files = 0
    for package in packages.values():
        violations += check_layout(package)
        violations += check_requirements(package, packages)
        for path in sorted(package.src.rglob("*.py")):
            files += 1
            imports = [i for i in imports_of(path, package.src) if i.module.startswith("lucid")]
            violations += check_file(path, imports, package, packages)
            violations += check_private(path, imports, package, packages)
            violations += check_unknown(path, imports, package, packages)
    return violations, files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    violations, files = check(args.root.resolve())
    for violation in violations:
        print(violation)
    if violations:
        print(f"boundary check FAILED: {len(violations)} violation(s) in {files} files")
        return 1
    print(f"boundary check OK: {files} files in {len(load_packages(args.root))} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
