"""Run a PyTorch program on lucid with only its import lines changed.

    python tools/port_check/port_check.py PROGRAM [ARGS...]              # a script
    python tools/port_check/port_check.py --entry main.py DIR [ARGS...]  # a folder of modules
    python tools/port_check/port_check.py --show PROGRAM                 # print the mapped source

The options come before PROGRAM; everything after it is the program's own arguments.

The program (or every ``.py`` file of the folder, so that its local modules come along) is
copied to a work folder with each import statement rewritten by one mapping, and nothing
else: ``torch`` becomes ``lucid`` (``torch.nn.functional`` -> ``lucid.nn.functional``,
``torch.utils.data`` -> ``lucid.utils.data``), ``torchvision`` becomes ``lucid.data``
(``torchvision.datasets``/``transforms``/``utils`` -> ``lucid.data.datasets``/...) and einops's
torch layers ``einops.layers.torch`` become lucid's, ``lucid.nn.einops``. The names
a program binds stay the same (``import torch`` -> ``import lucid as torch``), and so do its
line numbers, so a traceback points at the original line. Then the copied entry runs as
``python ENTRY ARGS`` runs the original: from the current folder (relative paths in the
arguments and in the program mean what they would), its local modules found next to it. Its
exit status is this script's.

Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["map_imports", "map_module", "port_tree"]

# The modules PyTorch users import from, and where lucid keeps the same names. A key may be
# a submodule of a package that is not mapped (einops's torch layers; einops itself works on
# lucid tensors as it is).
MODULE_MAP = {
    "torch": "lucid",
    "torchvision": "lucid.data",
    "einops.layers.torch": "lucid.nn.einops",
}


def _mapped_prefix(name: str, mapping: Mapping[str, str]) -> str | None:
    """The longest key of ``mapping`` that ``name`` is or lies under, or None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in mapping:
            return prefix
    return None


def map_module(name: str, mapping: Mapping[str, str] = MODULE_MAP) -> str:
    """``torch.nn`` -> ``lucid.nn``, ``torchvision.utils`` -> ``lucid.data.utils``, others kept."""
    prefix = _mapped_prefix(name, mapping)
    if prefix is None:
        return name
    return mapping[prefix] + name[len(prefix) :]


def _mapped_alias(alias: ast.alias, mapping: Mapping[str, str]) -> str:
    """One name of an ``import`` statement, binding the same name the original binds."""
    target = map_module(alias.name, mapping)
    if target == alias.name:
        return alias.name + (f" as {alias.asname}" if alias.asname else "")
    if alias.asname:
        return f"{target} as {alias.asname}"
    top = alias.name.partition(".")[0]
    if top not in mapping:
        # `import einops.layers.torch` binds `einops`: load lucid's layers beside it.
        return f"{alias.name}; import {target}"
    if target == mapping[top]:
        return f"{target} as {top}"
    # `import torch.nn` binds `torch` with `torch.nn` loaded: load the lucid module, then bind.
    return f"{target}; import {mapping[top]} as {top}"


def _mapped_statement(node: ast.Import | ast.ImportFrom, mapping: Mapping[str, str]) -> str | None:
    """The statement's replacement text, or None when it imports nothing that is mapped."""
    if isinstance(node, ast.Import):
        if all(map_module(a.name, mapping) == a.name for a in node.names):
            return None
        return "; ".join(f"import {_mapped_alias(a, mapping)}" for a in node.names)
    if node.level or node.module is None or map_module(node.module, mapping) == node.module:
        return None
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
    return f"from {map_module(node.module, mapping)} import {names}"


def _offset(line_starts: list[int], lineno: int, col: int, lines: list[str]) -> int:
    """A character offset from ast's (1-based line, UTF-8 byte column)."""
    line = lines[lineno - 1]
    return line_starts[lineno - 1] + len(line.encode()[:col].decode())


def map_imports(source: str, mapping: Mapping[str, str] = MODULE_MAP) -> str:
    """``source`` with every torch/torchvision import rewritten; all other text unchanged.

    A statement that spans several lines is replaced by one line followed by as many blank
    continuation lines, so every later line keeps its number. ``mapping`` names the
    distributions to map (default: torch and torchvision).

    >>> map_imports("import torch\\nfrom torch.nn import functional as F\\n")
    'import lucid as torch\\nfrom lucid.nn import functional as F\\n'
    """
    lines = source.splitlines(keepends=True)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))
    edits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            text = _mapped_statement(node, mapping)
            if text is not None:
                start = _offset(line_starts, node.lineno, node.col_offset, lines)
                end_line, end_col = node.end_lineno or node.lineno, node.end_col_offset or 0
                end = _offset(line_starts, end_line, end_col, lines)
                edits.append((start, end, text + " \\\n" * (end_line - node.lineno)))
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def port_tree(program: Path, dest: Path) -> Path:
    """Copy ``program`` (a file, or a folder's files) into ``dest`` with imports mapped.

    Returns the copied entry (the file itself, or ``dest`` for a folder). Files that are not
    Python are copied as they are (a folder's data and configuration come along).
    """
    if program.is_file():
        dest.mkdir(parents=True, exist_ok=True)
        target = dest / program.name
        target.write_text(map_imports(program.read_text()))
        return target
    for path in sorted(program.rglob("*")):
        target = dest / path.relative_to(program)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.suffix == ".py":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(map_imports(path.read_text()))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return dest


def _run(entry: Path, args: list[str]) -> int:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.call([sys.executable, str(entry), *args], env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entry", help="the script to run, inside a folder PROGRAM")
    parser.add_argument("--workdir", type=Path, help="where to copy it (default: a temp dir)")
    parser.add_argument("--show", action="store_true", help="print the mapped source, run nothing")
    parser.add_argument("program", type=Path, help="a PyTorch script, or a folder of them")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    opts = parser.parse_args(argv)
    if opts.show:
        if not opts.program.is_file():
            parser.error(f"--show expects a file, got the folder {opts.program}")
        sys.stdout.write(map_imports(opts.program.read_text()))
        return 0
    if opts.program.is_dir() and not opts.entry:
        parser.error(f"{opts.program} is a folder: name the script to run with --entry")
    workdir = opts.workdir or Path(tempfile.mkdtemp(prefix="port_check_"))
    ported = port_tree(opts.program, workdir)
    entry = ported / opts.entry if opts.program.is_dir() else ported
    print(f"port_check: running {entry}", file=sys.stderr)
    return _run(entry, opts.args)


if __name__ == "__main__":
    sys.exit(main())
