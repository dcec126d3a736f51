"""Lucid against torch's own test descriptions: one summary line per gauge, a JSON of every gap.

    python tools/gauges/run.py                          # every gauge (parity env)
    python tools/gauges/run.py --only opinfo --ops 'nn.functional.*' --json out.json
    python tools/gauges/run.py --check-floors           # exit 1 when a number fell below its floor
    python tools/gauges/run.py --profile ci --check-floors   # the fast subset CI runs

Gauges: opinfo (op_db sample_inputs), modules (module_db), errors (op_db error_inputs),
surface (public names of torch's documented namespaces), signature (the parameters of the
callables both have), intargs (op_db samples with their int arguments as NumPy integers, and
reduction='elementwise_mean' for 'mean'). See
docs/gauges.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from gauge_common import (  # noqa: E402
    KINDS,
    check_floors,
    load_deliberate,
    raised_floors,
    top_gaps,
    write_json,
)

GAUGES = ("opinfo", "modules", "errors", "surface", "signature", "intargs")
# Samples per op and dtype (per module and training mode) of each profile: the first N torch
# generates after torch.manual_seed(0), so a profile measures the same samples every time.
# Some entries generate hundreds (max_pool1d: 864); the cap keeps the full run to minutes.
PROFILES = {"full": 32, "ci": 3}
FLOORS = HERE / "floors.json"
DIFFERENCES = REPO_ROOT / "docs" / "differences.md"


def summary_line(name: str, section: dict[str, Any], seconds: float) -> str:
    """The one line a gauge prints."""
    s = section["summary"]
    if name == "opinfo":
        kinds = ", ".join(f"{k} {v}" for k, v in s["by_kind"].items() if k != "pass" and v)
        return (
            f"opinfo:  {s['samples_pass']} of {s['samples']} samples pass "
            f"({s['samples_pass_pct']}%; {s['present_samples_pass_pct']}% on present ops), "
            f"{s['ops_all_pass']} of {s['ops_with_samples']} ops pass every sample, "
            f"{s['ops_missing']} missing; {kinds}; {s['excluded']} excluded, "
            f"{s['deliberate']} deliberate [{seconds:.0f} s]"
        )
    if name == "intargs":
        return (
            f"intargs: of {s['samples']} samples spelled as torch also takes them (ints as NumPy "
            f"integers, reduction='elementwise_mean'), lucid takes {s['samples_pass']} (the same "
            f"result as the plain spelling); {s['ops_failing']} ops refuse them [{seconds:.0f} s]"
        )
    if name == "modules":
        return (
            f"modules: {s['modules_all_pass']} of {s['modules']} modules pass every sample, "
            f"{s['modules_missing']} missing; {s['samples_pass']} of {s['samples']} samples "
            f"pass; {s['deliberate']} deliberate [{seconds:.0f} s]"
        )
    if name == "errors":
        return (
            f"errors:  of {s['inputs']} inputs torch rejects, lucid raises on {s['raised']} "
            f"({s['same_class']} the same class, {s['same_message']} also torch's message), "
            f"returns a result on {s['returned']} ({s.get('returned_generic', 0)} where "
            "torch's test names no error), "
            f"lacks the op for {s['missing']} [{seconds:.0f} s]"
        )
    if name == "signature":
        issues = ", ".join(f"{k} {v}" for k, v in s["by_issue"].items() if v)
        per_ns = ", ".join(
            f"{ns.removeprefix('torch.') or ns} {v['match']}/{v['compared']}"
            for ns, v in s["namespaces"].items()
        )
        return (
            f"signature: {s['match']} of {s['compared']} signatures match torch's "
            f"({s['match_pct']}%; {s['uninspectable']} not inspectable); {issues}: {per_ns}; "
            f"out=: {s.get('out_take', '?')} of {s.get('out_compared', '?')} functions take "
            f"torch's out [{seconds:.0f} s]"
        )
    parts = ", ".join(
        f"{ns.removeprefix('torch.') or ns} {v['present']}/{v['total']}"
        for ns, v in s["namespaces"].items()
    )
    return (
        f"surface: {s['present']} of {s['total']} names present "
        f"({s['signature_mismatch']} signatures differ, {s['deliberate']} deliberate, "
        f"{s.get('not_in_module_dict', 0)} reached only through a module __getattr__; "
        f"{s.get('attribute_paths_unreachable', '?')} of {s.get('attribute_paths', '?')} "
        "submodule paths not "
        f"reached after the plain import): {parts} [{seconds:.0f} s]"
    )


def markdown_table(report: dict[str, Any]) -> str:
    """The headline numbers as a Markdown table (docs/gauges.md)."""
    rows = ["| gauge | measured |", "| --- | --- |"]
    if "opinfo" in report:
        s = report["opinfo"]["summary"]
        rows.append(
            f"| OpInfo samples | {s['samples_pass']} of {s['samples']} pass "
            f"({s['samples_pass_pct']}%); {s['present_samples_pass_pct']}% on the ops lucid has |"
        )
        rows.append(
            f"| OpInfo ops | {s['ops_all_pass']} of {s['ops_with_samples']} pass every sample; "
            f"{s['ops_missing']} missing; {s['excluded']} entries excluded |"
        )
        kinds = ", ".join(f"{k} {s['by_kind'][k]}" for k in KINDS if k in s["by_kind"])
        rows.append(f"| OpInfo samples by verdict | {kinds} |")
    if "intargs" in report:
        s = report["intargs"]["summary"]
        rows.append(
            f"| Integer-like arguments | of {s['samples']} OpInfo samples whose ints torch takes "
            f"as NumPy integers, lucid takes {s['samples_pass']}; {s['ops_failing']} ops refuse "
            "them |"
        )
    if "modules" in report:
        s = report["modules"]["summary"]
        rows.append(
            f"| ModuleInfo | {s['modules_all_pass']} of {s['modules']} modules pass every "
            f"sample; {s['modules_missing']} missing; {s['samples_pass']} of {s['samples']} "
            "samples pass |"
        )
    if "errors" in report:
        s = report["errors"]["summary"]
        rows.append(
            f"| Error inputs | of {s['inputs']} inputs torch rejects lucid raises on "
            f"{s['raised']} ({s['same_class']} the same class, {s['same_message']} also "
            f"torch's message), returns a result on {s['returned']} "
            f"({s.get('returned_generic', 0)} where torch's test names no error), lacks the op "
            f"for {s['missing']} |"
        )
    if "surface" in report:
        for ns, v in report["surface"]["summary"]["namespaces"].items():
            rows.append(f"| `{ns}` | {v['present']} of {v['total']} names ({v['present_pct']}%) |")
    if "signature" in report:
        s = report["signature"]["summary"]
        per_ns = ", ".join(
            f"`{ns}` {v['match']}/{v['compared']}" for ns, v in s["namespaces"].items()
        )
        rows.append(
            f"| Signatures | {s['match']} of {s['compared']} match torch's ({s['match_pct']}%): "
            f"{per_ns} |"
        )
        if "out_compared" in s:
            rows.append(
                f"| `out=` | {s['out_take']} of {s['out_compared']} functions that take torch's "
                "`out=` take it |"
            )
    return "\n".join(rows)


def floor_numbers(report: dict[str, Any]) -> dict[str, float]:
    """The numbers that floors.json holds (absolute counts: they only rise as lucid improves)."""
    numbers: dict[str, float] = {}
    if "opinfo" in report:
        s = report["opinfo"]["summary"]
        numbers["opinfo.samples_pass"] = s["samples_pass"]
        numbers["opinfo.ops_all_pass"] = s["ops_all_pass"]
    if "intargs" in report:
        s = report["intargs"]["summary"]
        numbers["intargs.samples_pass"] = s["samples_pass"]
        numbers["intargs.minus_ops_failing"] = -s["ops_failing"]  # a ceiling, negated
    if "modules" in report:
        s = report["modules"]["summary"]
        numbers["modules.modules_all_pass"] = s["modules_all_pass"]
        numbers["modules.samples_pass"] = s["samples_pass"]
    if "errors" in report:
        s = report["errors"]["summary"]
        numbers["errors.raised"] = s["raised"]
        numbers["errors.same_class"] = s["same_class"]
        numbers["errors.same_message"] = s["same_message"]
        # the worst gap: a result for an input torch rejects; its floor is a ceiling, negated
        numbers["errors.minus_returned"] = -s["returned"]
    if "surface" in report:
        for ns, v in report["surface"]["summary"]["namespaces"].items():
            numbers[f"surface.{ns}"] = v["present"]
        # a ceiling, negated: submodules a program reaches after `import torch`/`torchvision`
        s = report["surface"]["summary"]
        if "attribute_paths_unreachable" in s:  # absent from reports before the check existed
            numbers["surface.minus_unreachable_paths"] = -s["attribute_paths_unreachable"]
    if "signature" in report:
        s = report["signature"]["summary"]
        numbers["signature.match"] = s["match"]
        if "out_take" in s:  # absent from reports before the check existed
            numbers["signature.out"] = s["out_take"]
        for ns, v in s["namespaces"].items():
            numbers[f"signature.{ns}"] = v["match"]
    return numbers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", default=",".join(GAUGES), help="comma list of " + "/".join(GAUGES)
    )
    parser.add_argument("--json", type=Path, help="write every gap here")
    parser.add_argument("--ops", help="comma list of fnmatch patterns of op/module names")
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default="full",
        help="full: the measured numbers; ci: a fast deterministic subset",
    )
    parser.add_argument(
        "--max-samples",
        type=int,
        default=None,
        help="first N samples per op and dtype (per module and mode); 0: all. "
        "Default: the profile's",
    )
    parser.add_argument(
        "--torchvision",
        type=Path,
        help="torchvision's wheel or extracted sources: add its namespaces to the surface",
    )
    parser.add_argument("--floors", type=Path, default=FLOORS)
    parser.add_argument("--check-floors", action="store_true", help="exit 1 below a floor")
    parser.add_argument("--raise-floors", action="store_true", help="write the new floors")
    parser.add_argument(
        "--set-floors",
        action="store_true",
        help="write this run's numbers as the floors, lower ones too (when the gauge changes)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per op")
    parser.add_argument(
        "--examples",
        type=int,
        default=3,
        metavar="N",
        help="failing samples kept in the JSON per op (module) and kind; 0: every one",
    )
    parser.add_argument("--top", type=int, metavar="N", help="print the N first gaps of each kind")
    parser.add_argument("--markdown", action="store_true", help="print the numbers as a table")
    parser.add_argument("--from-json", type=Path, help="print --top gaps of an earlier run")
    args = parser.parse_args(argv)
    if args.from_json:
        earlier = json.loads(args.from_json.read_text())
        if args.markdown:
            print(markdown_table(earlier))
        for line in top_gaps(earlier, args.top or 40) if args.top or not args.markdown else []:
            print(line)
        return 0
    only = [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = set(only) - set(GAUGES)
    if unknown:
        parser.error(f"--only takes {', '.join(GAUGES)}; got {', '.join(sorted(unknown))}")
    patterns = [p.strip() for p in args.ops.split(",")] if args.ops else None
    profile_cap = PROFILES[args.profile]
    cap = profile_cap if args.max_samples is None else args.max_samples
    progress = (lambda line: print("  " + line, file=sys.stderr)) if args.verbose else None
    deliberate = load_deliberate(DIFFERENCES)

    import gauge_bridge
    import gauge_opinfo
    from torch.testing._internal import common_utils

    gauge_opinfo.EXAMPLES_PER_KIND = args.examples or 10**9

    # torch and lucid: one thread each for the run (samples are tiny; OpenMP's idle threads
    # spin on a shared machine), restored after
    threads = gauge_bridge.torch.get_num_threads(), gauge_bridge.lucid.get_num_threads()
    gauge_bridge.torch.set_num_threads(1)
    gauge_bridge.lucid.set_num_threads(1)
    # torch's sample iterators look for the running unittest test with inspect.stack() (for
    # their debug output; there is none here): under pytest's deep stacks that was 4/5 of the run
    extract_test_fn = common_utils.extract_test_fn
    common_utils.extract_test_fn = lambda: None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's samples warn about deprecated overloads
            return _run(args, parser, only, patterns, cap, profile_cap, deliberate, progress)
    finally:
        common_utils.extract_test_fn = extract_test_fn
        gauge_bridge.torch.set_num_threads(threads[0])
        gauge_bridge.lucid.set_num_threads(threads[1])


def _run(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    only: list[str],
    patterns: list[str] | None,
    cap: int,
    profile_cap: int,
    deliberate: Any,
    progress: Any,
) -> int:
    """The gauges of `only`, the JSON, the floors (main's arguments, parsed)."""
    max_samples = cap or None
    report: dict[str, Any] = {"deliberate": [list(e) for e in deliberate.entries]}
    timings: dict[str, float] = {}
    for name in only:
        start = time.perf_counter()
        if name == "opinfo":
            from gauge_opinfo import gauge_opinfo

            section = gauge_opinfo(deliberate, patterns, max_samples, progress)
        elif name == "intargs":
            from gauge_opinfo import gauge_intargs

            section = gauge_intargs(deliberate, patterns, max_samples, progress)
        elif name == "errors":
            from gauge_opinfo import gauge_errors

            section = gauge_errors(deliberate, patterns, progress)
        elif name == "modules":
            from gauge_modules import gauge_modules

            section = gauge_modules(deliberate, patterns, max_samples, progress)
        elif name == "signature":
            from gauge_signature import gauge_signature

            section = gauge_signature(deliberate)
        else:
            from gauge_surface import gauge_surface

            section = gauge_surface(deliberate, args.torchvision)
        timings[name] = round(time.perf_counter() - start, 1)
        report[name] = section
        print(summary_line(name, section, timings[name]), flush=True)
    report["seconds"] = timings
    report["profile"] = args.profile
    prefix = "" if args.profile == "full" else args.profile + ":"
    numbers = {prefix + k: v for k, v in floor_numbers(report).items()}
    report["floor_numbers"] = numbers
    if args.json:
        write_json(args.json, report)
    if args.top:
        for line in top_gaps(report, args.top):
            print(line)
    floors = json.loads(args.floors.read_text()) if args.floors.is_file() else {}
    relevant = {k: v for k, v in floors.items() if k in numbers}
    if args.set_floors:
        write_json(
            args.floors, {**{k: v for k, v in floors.items() if k not in numbers}, **numbers}
        )
        print(f"floors set to this run's numbers in {args.floors}")
    elif args.raise_floors:
        new = {**floors, **raised_floors(numbers, relevant)}
        new.update({k: v for k, v in numbers.items() if k not in floors})
        write_json(args.floors, new)
        print(f"floors written to {args.floors}")
    if args.check_floors:
        if patterns or cap != profile_cap:
            parser.error("--check-floors measures a whole profile: drop --ops/--max-samples")
        failures = check_floors(numbers, relevant)
        for line in failures:
            print("below floor: " + line)
        if failures:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
