"""Release helper: bump one package, keep dependants' ranges and CHANGELOGs honest, tag it.

    python tools/release.py bump lucid-core minor -m "Tensor.foo renamed to bar" [--dry-run]
    python tools/release.py check

Version policy (semantic versioning): while a package's major version is 0, a minor bump is
the breaking one (0.1.x -> 0.2.0); from 1.0 on, a major bump is. Dependants declare siblings as
`>=FLOOR,<NEXT_BREAKING` (`lucid-core>=0.1,<0.2`), so a non-breaking bump needs nothing else,
and a breaking bump moves every dependant's range to the new series (`>=0.2,<0.3`). Those
dependants then need a release of their own; `bump` lists them.

`bump` rewrites the package's version, prepends a CHANGELOG entry (or turns a top
`## Unreleased` section into the new version), rewrites dependants' ranges on a breaking bump,
commits exactly those files and creates the annotated tag `<package>-v<version>`.
`--dry-run` prints the diffs and git commands and changes nothing. `--no-git` edits files only.

`check` verifies that each package's version equals its CHANGELOG's top version entry and that
every sibling range admits the sibling's current version.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import re
import shlex
import subprocess
import sys
from pathlib import Path

from _workspace import Package, load_packages, normalize, requirement_name

BUMPS = ("major", "minor", "patch")
_VERSION_LINE = re.compile(r'^(version\s*=\s*")([^"]+)(")', re.M)
_ENTRY = re.compile(r"^## +\[?([^\]\s]+)\]?", re.M)
_CLAUSE = re.compile(r"\s*(~=|==|!=|<=|>=|<|>)\s*([0-9][0-9.]*)\s*")


def parse_version(text: str) -> tuple[int, ...]:
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", text):
        raise ValueError(f"expected a release version like 1.2.3, got {text!r}")
    return tuple(int(p) for p in text.split("."))


def _padded(version: tuple[int, ...], n: int) -> tuple[int, ...]:
    return version + (0,) * (n - len(version))


def bumped(version: str, part: str) -> str:
    major, minor, patch = _padded(parse_version(version), 3)[:3]
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    if part == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ValueError(f"expected one of {', '.join(BUMPS)}, got {part!r}")


def is_breaking(old: str, new: str) -> bool:
    """Whether old -> new leaves the range that dependants declare."""
    return series(old) != series(new)


def series(version: str) -> tuple[int, ...]:
    """The compatible series: (major,) from 1.0 on, (0, minor) before."""
    major, minor = _padded(parse_version(version), 2)[:2]
    return (major,) if major > 0 else (0, minor)


def compatible_range(version: str) -> str:
    """`>=0.2,<0.3` for 0.2.x, `>=1.4,<2` for 1.4.x."""
    major, minor = _padded(parse_version(version), 2)[:2]
    upper = f"{major + 1}" if major > 0 else f"0.{minor + 1}"
    return f">={major}.{minor},<{upper}"


def admits(specifier: str, version: str) -> bool:
    """Whether a comma-separated specifier (`>=0.1,<0.2`) admits version."""
    have = parse_version(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = _CLAUSE.fullmatch(clause)
        if match is None:
            raise ValueError(f"unsupported version clause {clause!r} in {specifier!r}")
        op, bound_text = match.groups()
        bound = parse_version(bound_text)
        n = max(len(have), len(bound))
        a, b = _padded(have, n), _padded(bound, n)
        ok = {
            ">=": a >= b,
            ">": a > b,
            "<=": a <= b,
            "<": a < b,
            "==": a == b,
            "!=": a != b,
            "~=": a >= b and have[: len(bound) - 1] == bound[:-1],
        }[op]
        if not ok:
            return False
    return True


def split_requirement(requirement: str) -> tuple[str, str, str]:
    """(name with extras, specifier, '; marker' or '') of a PEP 508 string."""
    body, sep, marker = requirement.partition(";")
    match = re.match(r"\s*([A-Za-z0-9._-]+(?:\[[^\]]*\])?)\s*(.*)", body)
    if match is None:
        raise ValueError(f"cannot parse requirement {requirement!r}")
    return match.group(1), match.group(2).strip(), (sep + marker if sep else "")


def changelog_top(text: str) -> str | None:
    """The version of the first `## ` entry that is not `Unreleased`."""
    for match in _ENTRY.finditer(text):
        if match.group(1).lower() != "unreleased":
            return match.group(1)
    return None


def new_changelog(text: str, version: str, notes: list[str], today: str) -> str:
    """Text with a `## version - today` entry on top: an `## Unreleased` section becomes it."""
    heading = f"## {version} - {today}\n\n"
    bullets = "".join(f"- {note}\n" for note in notes)
    unreleased = re.search(r"^## +\[?unreleased\]?.*\n+", text, re.M | re.I)
    if unreleased:
        return text[: unreleased.start()] + heading + bullets + text[unreleased.end() :]
    entry = heading + (bullets or f"- Release {version}.\n") + "\n"
    first = _ENTRY.search(text)
    if first is None:
        return text.rstrip("\n") + "\n\n" + entry
    return text[: first.start()] + entry + text[first.start() :]


def retarget_dependants(pyproject: str, dependency: str, new_range: str) -> str:
    """Rewrite every requirement on `dependency` in a pyproject's text to `new_range`."""

    def replace(match: re.Match[str]) -> str:
        name, _, marker = split_requirement(match.group(2))
        if requirement_name(name) != dependency:
            return match.group(0)
        return f"{match.group(1)}{name}{new_range}{marker}{match.group(3)}"

    return re.sub(r"""(["'])([A-Za-z0-9][^"']*)(["'])""", replace, pyproject)


def plan_bump(
    root: Path, name: str, part: str, notes: list[str], today: str
) -> tuple[str, dict[Path, tuple[str, str]], list[str]]:
    """The new version, {file: (old text, new text)}, and the dependants to release next."""
    packages = load_packages(root)
    package = packages.get(normalize(name))
    if package is None:
        raise SystemExit(f"unknown package {name!r}; expected one of {', '.join(packages)}")
    new = bumped(package.version, part)
    edits: dict[Path, tuple[str, str]] = {}
    old_toml = package.pyproject.read_text()
    edits[package.pyproject] = (old_toml, _VERSION_LINE.sub(rf"\g<1>{new}\g<3>", old_toml, 1))
    old_log = package.changelog.read_text() if package.changelog.exists() else "# Changelog\n"
    edits[package.changelog] = (old_log, new_changelog(old_log, new, notes, today))
    dependants: list[str] = []
    if is_breaking(package.version, new):
        for other in packages.values():
            if other.name != package.name and package.name in other.declared():
                text = other.pyproject.read_text()
                edits[other.pyproject] = (
                    text,
                    retarget_dependants(text, package.name, compatible_range(new)),
                )
                dependants.append(other.name)
    return new, edits, dependants


def git(root: Path, *args: str, dry_run: bool) -> None:
    print("$ " + shlex.join(["git", *args]))
    if not dry_run:
        subprocess.run(["git", *args], cwd=root, check=True)


def bump(args: argparse.Namespace) -> int:
    root: Path = args.root
    today = args.date or datetime.date.today().isoformat()
    new, edits, dependants = plan_bump(root, args.package, args.part, args.message, today)
    name = normalize(args.package)
    tag = f"{name}-v{new}"
    print(f"{name}: {load_packages(root)[name].version} -> {new} ({args.part}); tag {tag}")
    for path, (old, text) in edits.items():
        rel = path.relative_to(root).as_posix()
        sys.stdout.writelines(
            difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), f"a/{rel}", f"b/{rel}"
            )
        )
        if not args.dry_run:
            path.write_text(text)
    if not args.no_git:
        files = [p.relative_to(root).as_posix() for p in edits]
        git(root, "add", "--", *files, dry_run=args.dry_run)
        git(root, "commit", "-m", f"Release {name} {new}", "--", *files, dry_run=args.dry_run)
        git(root, "tag", "-a", tag, "-m", f"{name} {new}", dry_run=args.dry_run)
    if dependants:
        print(
            f"breaking bump: ranges moved in {', '.join(dependants)}; release those next "
            f"(python tools/release.py bump <package> patch)"
        )
    if args.dry_run:
        print("dry run: nothing was changed")
    return 0


def problems(packages: dict[str, Package]) -> list[str]:
    found: list[str] = []
    for package in packages.values():
        top = changelog_top(package.changelog.read_text()) if package.changelog.exists() else None
        if top != package.version:
            found.append(
                f"{package.name}: version {package.version} but {package.changelog} top entry is "
                f"{top or 'missing'}; add a '## {package.version} - YYYY-MM-DD' entry"
            )
        for requirement in package.all_requirements():
            dep = packages.get(requirement_name(requirement))
            if dep is None:
                continue
            _, specifier, _ = split_requirement(requirement)
            if not specifier or not admits(specifier, dep.version):
                found.append(
                    f"{package.name}: requires {requirement!r}, which does not admit "
                    f"{dep.name} {dep.version}; use {dep.name}{compatible_range(dep.version)}"
                )
    return found


def check(args: argparse.Namespace) -> int:
    packages = load_packages(args.root)
    found = problems(packages)
    for problem in found:
        print(problem)
    if found:
        print(f"release check FAILED: {len(found)} problem(s)")
        return 1
    versions = ", ".join(f"{p.name} {p.version}" for p in packages.values())
    print(f"release check OK: {versions}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("bump", help="bump one package's version, changelog, tag")
    b.add_argument("package")
    b.add_argument("part", choices=BUMPS)
    b.add_argument("-m", "--message", action="append", default=[], help="a CHANGELOG bullet")
    b.add_argument("--date", help="date of the CHANGELOG entry (default: today)")
    b.add_argument("--dry-run", action="store_true", help="print what would change; change nothing")
    b.add_argument("--no-git", action="store_true", help="edit files but do not commit or tag")
    b.set_defaults(func=bump)
    c = commands.add_parser("check", help="versions match CHANGELOGs; sibling ranges admit them")
    c.set_defaults(func=check)
    args = parser.parse_args(argv)
    args.root = args.root.resolve()
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
