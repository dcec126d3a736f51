"""What every gauge shares, with no torch and no lucid import: unit-testable in any env.

- `Leaf`: an output reduced to what is compared (an array with its dtype name, a Python
  scalar, or a repr), so that torch's and lucid's results meet on neutral ground.
- `compare_outputs` / `compare_grads`: the verdict on one sample (`pass`, `shape`, `dtype`,
  `value`, `gradient`), with a one-line detail.
- `exception_kind`: whether lucid's exception means the name is missing or the call failed.
- `parse_deliberate` / `Deliberate`: the list of deliberate differences in docs/differences.md.
- `check_floors`: the numbers that may only rise.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# The sample verdicts, worst first: a sample is classified by the first check that fails.
KINDS = ("missing", "error", "shape", "dtype", "value", "gradient", "pass")
# Float tolerances: lucid computes in NumPy float32 where torch may accumulate differently
# (pairwise sums, BLAS, vectorised transcendentals), so the bound is looser than torch's own.
RTOL = 1e-3
ATOL = 1e-4


@dataclass(frozen=True)
class Leaf:
    """One compared piece of an output.

    kind: "array" (value is an ndarray, dtype the framework-neutral name such as "float32"),
    "scalar" (value is a Python bool/int/float, dtype its type name), "none", or "other"
    (value is a repr: equal reprs pass).
    """

    kind: str
    value: Any
    dtype: str = ""

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape; () for anything that is not an array."""
        return tuple(self.value.shape) if self.kind == "array" else ()


@dataclass
class Verdict:
    """A sample's classification and why."""

    kind: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"verdict kind must be one of {KINDS}, got {self.kind!r}")


def dtype_name(dtype: object) -> str:
    """`torch.float32`, `lucid.float32`, `np.dtype('float32')` -> "float32"."""
    text = str(dtype)
    for prefix in ("torch.", "lucid.", "dtype(", "<class 'numpy."):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = text.strip("')>\"")
    return {"bool_": "bool", "float": "float64", "int": "int64"}.get(text, text)


def _values_close(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> str:
    """'' when close, else a short description of the largest difference."""
    if expected.size == 0:
        return ""
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        bad = expected != got
        if not bad.any():
            return ""
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        return f"at {where}: torch {expected[where]!r}, lucid {got[where]!r}"
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return ""
    where = tuple(int(i) for i in np.argwhere(~ok)[0])
    count = int((~ok).sum())
    return f"{count} of {e.size} differ; at {where}: torch {e[where]:.6g}, lucid {g[where]:.6g}"


def compare_leaf(expected: Leaf, got: Leaf, rtol: float = RTOL, atol: float = ATOL) -> Verdict:
    """Compare one leaf of torch's result (expected) with lucid's (got)."""
    if expected.kind != got.kind:
        # A 0-d array and a Python scalar are different types in torch (Tensor vs number).
        return Verdict("dtype", f"torch gives {expected.kind}, lucid gives {got.kind}")
    if expected.kind == "none":
        return Verdict("pass")
    if expected.kind == "other":
        if expected.value == got.value:
            return Verdict("pass")
        return Verdict("value", f"torch {expected.value[:60]}, lucid {got.value[:60]}")
    if expected.kind == "scalar":
        if expected.dtype != got.dtype:
            return Verdict("dtype", f"torch {expected.dtype}, lucid {got.dtype}")
        e, g = expected.value, got.value
        if isinstance(e, float) or isinstance(g, float):
            same = (math.isnan(e) and math.isnan(g)) or math.isclose(
                g, e, rel_tol=rtol, abs_tol=atol
            )
        else:
            same = e == g
        return Verdict("pass") if same else Verdict("value", f"torch {e!r}, lucid {g!r}")
    if expected.shape != got.shape:
        return Verdict("shape", f"torch {expected.shape}, lucid {got.shape}")
    if expected.dtype != got.dtype:
        return Verdict("dtype", f"torch {expected.dtype}, lucid {got.dtype}")
    diff = _values_close(np.asarray(expected.value), np.asarray(got.value), rtol, atol)
    return Verdict("value", diff) if diff else Verdict("pass")


def _compare_meta(expected: Leaf, got: Leaf) -> Verdict:
    """Kinds, shapes and dtypes only (a random op's values are not comparable)."""
    if expected.kind != got.kind:
        return Verdict("dtype", f"torch gives {expected.kind}, lucid gives {got.kind}")
    if expected.shape != got.shape:
        return Verdict("shape", f"torch {expected.shape}, lucid {got.shape}")
    if expected.dtype != got.dtype:
        return Verdict("dtype", f"torch {expected.dtype}, lucid {got.dtype}")
    return Verdict("pass")


def compare_outputs(
    expected: Sequence[Leaf],
    got: Sequence[Leaf],
    *,
    values: bool = True,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Verdict:
    """Compare flattened results; `values=False` (a random op) checks only shapes and dtypes.

    The worst leaf verdict wins (shape before dtype before value); a different number of
    leaves is a shape mismatch.
    """
    if len(expected) != len(got):
        return Verdict("shape", f"torch returns {len(expected)} values, lucid {len(got)}")
    worst = Verdict("pass")
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        verdict = compare_leaf(e, g, rtol, atol) if values else _compare_meta(e, g)
        if KINDS.index(verdict.kind) < KINDS.index(worst.kind):
            prefix = f"output {i}: " if len(expected) > 1 else ""
            worst = Verdict(verdict.kind, prefix + verdict.detail)
    return worst


def compare_grads(
    expected: Sequence[np.ndarray | None],
    got: Sequence[np.ndarray | None],
    names: Sequence[str] | None = None,
    *,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Verdict:
    """Input gradients: None (unused input) counts as zeros; any difference is `gradient`."""
    if len(expected) != len(got):
        return Verdict("gradient", f"torch gives {len(expected)} gradients, lucid {len(got)}")
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        label = names[i] if names else f"input {i}"
        if e is None and g is None:
            continue
        if e is None or g is None:
            present = e if e is not None else g
            assert present is not None
            if not np.any(present):
                continue
            who = "torch" if e is None else "lucid"
            return Verdict("gradient", f"{label}: {who} gives no gradient")
        if e.shape != g.shape:
            return Verdict("gradient", f"{label}: shape torch {e.shape}, lucid {g.shape}")
        diff = _values_close(e, g, rtol, atol)
        if diff:
            return Verdict("gradient", f"{label}: {diff}")
    return Verdict("pass")


def exception_kind(exc: BaseException, lucid_roots: Iterable[str] = ("lucid",)) -> str:
    """ "missing" when `exc` says lucid lacks the attribute the call reached for, else "error".

    An AttributeError whose object is a lucid module, class or Tensor means the name does not
    exist; any other exception is a failing call.
    """
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)
        owner = getattr(obj, "__name__", None) if isinstance(obj, type) else None
        module = getattr(type(obj), "__module__", "") or ""
        if hasattr(obj, "__path__") or type(obj).__name__ == "module":
            module = getattr(obj, "__name__", "")
        elif owner is not None:
            module = getattr(obj, "__module__", "")
        if any(module == r or module.startswith(r + ".") for r in lucid_roots):
            return "missing"
    return "error"


def short_error(exc: BaseException, limit: int = 160) -> str:
    """`TypeError: message` on one line, cut to `limit` characters."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_signature(detail: str) -> str:
    """A detail with numbers and quoted values blanked, to group similar failures."""
    text = re.sub(r"\d+", "N", detail)
    text = re.sub(r"'[^']*'", "'_'", text)
    return text[:100]


# --- deliberate differences ----------------------------------------------------------------

DELIBERATE_FENCE = "gauge-deliberate"


@dataclass
class Deliberate:
    """Name patterns (fnmatch, torch's qualified names) that differ on purpose, with reasons."""

    entries: list[tuple[str, str]] = field(default_factory=list)

    def reason(self, name: str) -> str | None:
        """The reason `name` differs on purpose, or None when it is not listed."""
        for pattern, why in self.entries:
            if fnmatch.fnmatchcase(name, pattern):
                return why
        return None


def parse_deliberate(markdown: str) -> Deliberate:
    """Read the ```gauge-deliberate fenced blocks: `pattern  reason` per line (# comments).

    Raises ValueError on a line without a reason, so the list cannot silently hide a name.
    """
    entries: list[tuple[str, str]] = []
    inside = False
    for number, raw in enumerate(markdown.splitlines(), 1):
        line = raw.strip()
        if line.startswith("```"):
            inside = not inside and line[3:].strip() == DELIBERATE_FENCE
            continue
        if not inside or not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) < 2 or not parts[1].strip():
            raise ValueError(
                f"docs/differences.md:{number}: a deliberate difference needs "
                f"'<torch name pattern>  <reason>', got {line!r}"
            )
        entries.append((parts[0], parts[1].strip()))
    return Deliberate(entries)


def load_deliberate(path: Path) -> Deliberate:
    """The deliberate list of the differences page at `path` (empty when it is absent)."""
    return parse_deliberate(path.read_text()) if path.is_file() else Deliberate()


# --- floors ----------------------------------------------------------------------------------


def check_floors(numbers: Mapping[str, float], floors: Mapping[str, float]) -> list[str]:
    """One line per floor that `numbers` falls below (or does not report)."""
    failures = []
    for key, floor in sorted(floors.items()):
        value = numbers.get(key)
        if value is None:
            failures.append(f"{key}: not measured (floor {floor})")
        elif value < floor:
            failures.append(f"{key}: {value} is below its floor {floor}")
    return failures


def raised_floors(numbers: Mapping[str, float], floors: Mapping[str, float]) -> dict[str, float]:
    """The floors after a run: each is the larger of the old floor and the new number."""
    return {key: max(floor, numbers.get(key, floor)) for key, floor in floors.items()}


def write_json(path: Path, data: object) -> None:
    """Write `data` as indented JSON (sorted keys, so diffs stay small)."""
    path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")


def percent(part: int, whole: int) -> float:
    """`part` of `whole` in percent, one decimal (0.0 for an empty whole)."""
    return round(100.0 * part / whole, 1) if whole else 0.0


# --- the gap list ----------------------------------------------------------------------------


def top_gaps(report: Mapping[str, Any], limit: int = 40) -> list[str]:
    """The gaps worth closing first, as lines: missing ops by the samples they would unlock,
    then failing samples of present ops, modules, error inputs lucid accepts, and surface."""
    lines: list[str] = []
    ops = report.get("opinfo", {}).get("ops", [])

    def label(o: Mapping[str, Any]) -> str:
        return o["torch"] + (f" ({o['variant']})" if o.get("variant") else "")

    def lacking(o: Mapping[str, Any]) -> str:
        names = {e["detail"] for e in o["examples"] if e["kind"] == "missing"}
        return "; ".join(sorted(names))[:120]

    missing = sorted(
        (
            (o["counts"].get("missing", 0), label(o), lacking(o))
            for o in ops
            if o["counts"].get("missing")
        ),
        key=lambda m: (-m[0], m[1]),
    )
    if missing:
        lines.append(f"OpInfo: missing ops by samples they would unlock ({len(missing)} ops)")
        lines += [f"  {n:5d}  {name}: {why}" for n, name, why in missing[:limit]]
    failing = []
    for o in ops:
        for kind in ("error", "shape", "dtype", "value", "gradient"):
            count = o["counts"].get(kind, 0)
            if count:
                example = next((e for e in o["examples"] if e["kind"] == kind), None)
                detail = (
                    f"{example['dtype']} {example['sample']}: {example['detail']}"
                    if (example)
                    else ""
                )
                failing.append((count, label(o), kind, detail))
    if failing:
        failing.sort(key=lambda f: (-f[0], f[1]))
        lines.append(f"OpInfo: failing samples of present ops ({len(failing)} op/kind pairs)")
        lines += [
            f"  {n:5d}  {name} [{kind}] {detail[:150]}" for n, name, kind, detail in failing[:limit]
        ]
    modules = [m for m in report.get("modules", {}).get("modules", []) if m["status"] != "pass"]
    if modules:
        lines.append(f"ModuleInfo: modules not passing every sample ({len(modules)})")
        for m in modules[:limit]:
            detail = m["examples"][0]["detail"][:120] if m["examples"] else ""
            lines.append(f"  {m['module']} [{m['status']}] {m['counts']} {detail}")
    returned = [
        (o["counts"].get("returned", 0), o)
        for o in report.get("errors", {}).get("ops", [])
        if o["counts"].get("returned") or o["counts"].get("other_class")
    ]
    if returned:
        returned.sort(key=lambda r: (-r[0], r[1]["torch"]))
        lines.append(
            f"Error inputs: ops that return a result or raise another class ({len(returned)})"
        )
        for _, o in returned[:limit]:
            worst = sorted(o["examples"], key=lambda e: e["outcome"] != "returned")
            detail = worst[0]["detail"][:130] if worst else ""
            lines.append(f"  {o['torch']} {o['counts']} {detail}")
    for ns, v in report.get("surface", {}).get("namespaces", {}).items():
        if v["missing"]:
            shown = ", ".join(v["missing"][:limit])
            lines.append(f"Surface {ns}: {len(v['missing'])} missing: {shown}")
    for ns, v in report.get("signature", {}).get("namespaces", {}).items():
        if v["mismatch"]:
            lines.append(f"Signatures {ns}: {len(v['mismatch'])} differ from torch's")
            for name, issues in list(v["mismatch"].items())[:limit]:
                lines.append(f"  {name}: {'; '.join(issues)[:150]}")
    for ns, v in report.get("signature", {}).get("out", {}).items():
        if v["lacking"]:
            shown = ", ".join(v["lacking"][:limit])
            lines.append(f"out= {ns}: {len(v['lacking'])} functions lack torch's out=: {shown}")
    return lines


# --- signatures --------------------------------------------------------------------------------

POSITIONAL_ONLY, POSITIONAL, KEYWORD_ONLY, VAR_POSITIONAL, VAR_KEYWORD = (
    "positional-only",
    "positional",
    "keyword-only",
    "*args",
    "**kwargs",
)
NO_DEFAULT = "<required>"
# Parameters not compared: lucid has no `out=` on most ops (docs/differences.md) and no
# layouts or pinned memory; `self` of a method.
IGNORED_PARAMETERS = ("out", "layout", "pin_memory", "self")
SIGNATURE_ISSUES = ("missing", "order", "keyword-only", "required", "default")


@dataclass(frozen=True)
class Param:
    """One parameter: its name, kind (one of the five above) and default as text
    (NO_DEFAULT when required); `torch.`/`lucid.` prefixes are dropped from defaults."""

    name: str
    kind: str
    default: str = NO_DEFAULT


def default_text(value: object) -> str:
    """A default as comparable text: `torch.float32` and `lucid.float32` read `float32`,
    numbers their float repr, strings quoted."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(float(value))
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list | tuple):  # dim=[-2, -1] and dims=(-2, -1) are one default
        return "(" + ", ".join(default_text(v) for v in value) + ")"
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__  # a function or class default (activation=F.relu)
    text = repr(value)
    return re.sub(r"\b(torch|lucid)\.", "", text)


def _doc_default(text: str) -> str:
    text = text.strip()
    if re.fullmatch(r"[\d.eE+\-*/() ]+", text) and re.search(r"\d", text):
        try:  # arithmetic such as 1./8
            return repr(float(eval(text, {"__builtins__": {}})))  # noqa: S307
        except (SyntaxError, ZeroDivisionError, TypeError, ValueError):
            pass
    try:
        return repr(float(text)) if text not in ("True", "False", "None") else text
    except ValueError:
        pass
    if text[:1] in "\"'":
        return repr(text.strip("\"'"))
    if text[:1] in "[(" and text[-1:] in "])":
        return "(" + ", ".join(_doc_default(p) for p in _split_top(text[1:-1])) + ")"
    return re.sub(r"\b(torch|lucid)\.", "", text)


def _split_top(text: str) -> list[str]:
    """`text` split at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def parse_doc_signature(line: str, name: str) -> list[Param] | None:
    """The parameters of a docstring signature line such as
    `add(input, other, *, alpha=1, out=None) -> Tensor` (None when `line` is not one)."""
    match = re.match(rf"\s*(?:[\w.]+\.)?{re.escape(name)}\((.*)\)\s*->", line)
    if match is None:
        return None
    params: list[Param] = []
    kind = POSITIONAL
    for part in _split_top(match.group(1).replace("\\*", "*")):
        if part == "*":
            kind = KEYWORD_ONLY
            continue
        if part == "/":
            params = [Param(p.name, POSITIONAL_ONLY, p.default) for p in params]
            continue
        if part.startswith("**"):
            params.append(Param(part[2:].split(":")[0].strip(), VAR_KEYWORD))
            continue
        if part.startswith("*"):
            params.append(Param(part[1:].split(":")[0].strip(), VAR_POSITIONAL))
            kind = KEYWORD_ONLY
            continue
        head, eq, default = part.partition("=")
        pname = head.split(":")[0].strip()
        if not pname.isidentifier():
            return None
        params.append(Param(pname, kind, _doc_default(default) if eq else NO_DEFAULT))
    return params


def doc_signatures(doc: str, name: str) -> list[list[Param]]:
    """Every overload a docstring lists (each a line `name(...) -> ...`)."""
    found = []
    for line in doc.splitlines():
        parsed = parse_doc_signature(line, name)
        if parsed is not None:
            found.append(parsed)
    return found


def _same_default(torch_default: str, lucid_default: str) -> bool:
    if torch_default == lucid_default or lucid_default == "None":
        return True  # lucid's None stands for torch's default value (a sentinel)
    if torch_default.strip("'") == lucid_default.strip("'"):
        return True  # a function default against its name (activation=relu, 'relu')
    if torch_default.startswith("(") and not lucid_default.startswith("("):
        # torch's `int[2] stride=1` reads (1.0, 1.0); a scalar default repeats to that
        items = _split_top(torch_default[1:-1])
        return bool(items) and all(_same_default(i, lucid_default) for i in items)
    try:
        return float(torch_default) == float(lucid_default)
    except ValueError:
        return False


def compare_signature(torch_params: Sequence[Param], lucid_params: Sequence[Param]) -> list[str]:
    """How a call written against torch's signature fails against lucid's, one line per
    problem, each starting with its kind (SIGNATURE_ISSUES):

    - missing: a parameter torch names that lucid lacks (without **kwargs to take it);
    - order: a positional parameter lucid takes at another position;
    - keyword-only: a parameter torch takes positionally and lucid only by keyword;
    - required: a parameter torch defaults that lucid requires;
    - default: both default it, to different values (lucid's None reads as torch's default).
    Lucid accepting more (extra parameters, positional where torch is keyword-only) is fine.
    """
    issues: list[str] = []
    lucid_by_name = {p.name: p for p in lucid_params}
    var_kw = any(p.kind == VAR_KEYWORD for p in lucid_params)
    var_pos = next((i for i, p in enumerate(lucid_params) if p.kind == VAR_POSITIONAL), None)
    lucid_positional = [p.name for p in lucid_params if p.kind in (POSITIONAL_ONLY, POSITIONAL)]
    index = 0
    for number, t in enumerate(torch_params):
        if t.kind in (VAR_POSITIONAL, VAR_KEYWORD):
            if t.kind == VAR_POSITIONAL:
                index = len(lucid_positional)  # what follows is keyword-only in both
            continue
        positional = t.kind in (POSITIONAL_ONLY, POSITIONAL)
        if t.name in IGNORED_PARAMETERS:
            index += positional
            continue
        lp = lucid_by_name.get(t.name)
        if lp is None:
            at_index = positional and (
                index < len(lucid_positional) or (var_pos is not None and index >= var_pos)
            )
            if not var_kw and not (t.kind == POSITIONAL_ONLY and at_index):
                issues.append(f"missing: {t.name}")
            index += positional
            continue
        if positional:
            if lp.kind == KEYWORD_ONLY:
                issues.append(f"keyword-only: {t.name}")
            elif lp.kind in (POSITIONAL_ONLY, POSITIONAL):
                where = lucid_positional.index(lp.name)
                if where != index and t.kind != POSITIONAL_ONLY:
                    issues.append(
                        f"order: {t.name} is positional {index} in torch, {where} in lucid"
                    )
            index += 1
        # a docstring's `arange(start=0, end, ...)`: a default before a required positional
        # parameter is the one-or-more-positionals idiom (arange(end) works), not a default
        leading = positional and any(
            p.default == NO_DEFAULT and p.kind in (POSITIONAL_ONLY, POSITIONAL)
            for p in torch_params[number + 1 :]
        )
        if t.default != NO_DEFAULT and lp.default == NO_DEFAULT and not leading:
            issues.append(f"required: {t.name} (torch defaults it to {t.default})")
        elif (
            t.default != NO_DEFAULT
            and lp.default != NO_DEFAULT
            and not _same_default(t.default, lp.default)
        ):
            issues.append(f"default: {t.name}={t.default} in torch, {lp.default} in lucid")
    return issues


def compare_overloads(
    torch_overloads: Sequence[Sequence[Param]], lucid_params: Sequence[Param]
) -> list[str]:
    """compare_signature over each overload torch documents: the problems of the overload
    lucid fits best (one Python signature cannot follow two overloads' positional names), and
    every parameter name of any overload that lucid lacks."""
    best: list[str] | None = None
    missing: list[str] = []
    for overload in torch_overloads:
        issues = compare_signature(overload, lucid_params)
        missing += [i for i in issues if i.startswith("missing:") and i not in missing]
        if best is None or len(issues) < len(best):
            best = issues
    chosen = best or []
    return chosen + [m for m in missing if m not in chosen]
