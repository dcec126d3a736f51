"""Write the parameter-count table of docs/models.md from lucid.models' registry.

The table sits between the ``<!-- zoo-table:start -->`` and ``<!-- zoo-table:end -->`` lines
of docs/models.md: one row per registered builder (family, name, parameters, default input,
where the count is checked, paper). Run ``python tools/gen_model_zoo.py`` after adding or
changing a builder; ``--check`` exits 1 when the committed page differs from the registry
(``test_models_zoo_docs.py`` runs that check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "models.md"
START, END = "<!-- zoo-table:start -->", "<!-- zoo-table:end -->"


def _models() -> object:
    if "lucid.models" not in sys.modules:  # run as a script: the source tree's packages
        for pkg in ("lucid-core", "lucid-nn", "lucid-models"):
            sys.path.insert(0, str(ROOT / "packages" / pkg / "src"))
    import lucid.models

    return lucid.models


def _params(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}K"


def table() -> str:
    """The markdown table of every builder of lucid.models, grouped by family."""
    models = _models()
    names = [n for n in models.list_models()  # type: ignore[attr-defined]
             if models.get_model_factory(n).__module__.startswith("lucid.models.")]  # type: ignore[attr-defined]  # fmt: skip
    infos = [models.model_info(n) for n in names]  # type: ignore[attr-defined]
    infos.sort(key=lambda i: (i.family or "", i.num_params or 0, i.name))
    families = sorted({i.family for i in infos})
    rows = [
        f"{len(infos)} builders in {len(families)} families.",
        "",
        "| family | builder | parameters | exact count | input | count checked against | paper |",
        "| --- | --- | ---: | ---: | --- | --- | --- |",
    ]
    for i in infos:
        size = "x".join(str(s) for s in i.input_size or ())
        rows.append(f"| {i.family} | `{i.name}` | {_params(i.num_params or 0)} | "
                    f"{i.num_params:,} | {size} | {i.reference} | {i.paper} |")  # fmt: skip
    return "\n".join(rows)


def render(page: str) -> str:
    """``page`` with the text between the markers replaced by :func:`table`."""
    head, sep, rest = page.partition(START)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{PAGE}: the markers {START} and {END} are missing")
    return f"{head}{START}\n{table()}\n{END}{tail}"


def stale() -> bool:
    """Whether docs/models.md differs from what the registry gives."""
    page = PAGE.read_text(encoding="utf-8")
    return render(page) != page


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the page is out of date")
    args = parser.parse_args()
    if args.check:
        if stale():
            print(f"{PAGE} is out of date: run python tools/gen_model_zoo.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(render(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
