"""What the tools know about the workspace: its packages, their versions and their sibling deps.

Standard library only, so that CI can run the tools before any environment exists.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(requirement: str) -> str:
    """The normalised project name of a PEP 508 requirement string."""
    match = _NAME.match(requirement)
    if match is None:
        raise ValueError(f"cannot read a project name from requirement {requirement!r}")
    return normalize(match.group(1))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Package:
    """One distribution under packages/."""

    name: str
    version: str
    directory: Path
    dependencies: list[str]
    optional: dict[str, list[str]] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)  # import prefixes it ships, e.g. "lucid.nn"

    @property
    def src(self) -> Path:
        return self.directory / "src"

    @property
    def pyproject(self) -> Path:
        return self.directory / "pyproject.toml"

    @property
    def changelog(self) -> Path:
        return self.directory / "CHANGELOG.md"

    def all_requirements(self) -> list[str]:
        return self.dependencies + [r for reqs in self.optional.values() for r in reqs]

    def declared(self) -> set[str]:
        """Names of every project it declares, in dependencies or any extra."""
        return {requirement_name(r) for r in self.all_requirements()}


def _shipped_modules(wheel: dict[str, object], directory: Path) -> list[str]:
    """Import prefixes the wheel ships, read from hatch's `packages` / `only-include`."""
    paths = wheel.get("only-include") or wheel.get("packages") or []
    if not isinstance(paths, list) or not paths:
        raise ValueError(
            f"{directory / 'pyproject.toml'}: [tool.hatch.build.targets.wheel] must list "
            '`packages` or `only-include` (e.g. only-include = ["src/lucid/nn"])'
        )
    return [".".join(Path(str(p)).relative_to("src").parts) for p in paths]


def load_package(directory: Path) -> Package:
    data = tomllib.loads((directory / "pyproject.toml").read_text())
    project = data["project"]
    wheel = data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {})
    return Package(
        name=normalize(project["name"]),
        version=project["version"],
        directory=directory,
        dependencies=list(project.get("dependencies", [])),
        optional={k: list(v) for k, v in project.get("optional-dependencies", {}).items()},
        modules=_shipped_modules(wheel.get("wheel", {}), directory),
    )


def load_packages(root: Path) -> dict[str, Package]:
    """Every package under root/packages, by normalised name."""
    found = sorted(p.parent for p in (root / "packages").glob("*/pyproject.toml"))
    if not found:
        raise FileNotFoundError(f"no packages/*/pyproject.toml under {root}")
    packages = [load_package(d) for d in found]
    return {p.name: p for p in packages}


def owner_of(module: str, packages: dict[str, Package]) -> Package | None:
    """The package shipping `module`: the one with the longest matching import prefix."""
    best: tuple[int, Package] | None = None
    for package in packages.values():
        for prefix in package.modules:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), package)
    return best[1] if best else None
