"""The compatibility gauges (tools/gauges/run.py) in CI: numbers that may only rise.

Runs the `ci` profile (the first 3 samples torch generates per op and dtype, per module and
mode, after `torch.manual_seed(0)`; every error input; the whole API surface) and fails when a
number falls below its floor in tools/gauges/floors.json. The full profile is for people:
`python tools/gauges/run.py --json gaps.json` (see docs/gauges.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.parity

REPO_ROOT = Path(__file__).resolve().parents[1]
RUN = REPO_ROOT / "tools" / "gauges" / "run.py"

RAISE_HINT = (
    "A gauge number fell below its floor in tools/gauges/floors.json: a change made lucid "
    "pass fewer of torch's samples (the JSON names each gap). When a number rose instead, "
    "raise the floors: `python tools/gauges/run.py --profile ci --raise-floors` and "
    "`python tools/gauges/run.py --raise-floors` (parity env), and commit floors.json."
)


def _load_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gauges_run", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gauges_ci_profile_holds_its_floors(
    torch: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _load_run()
    out = tmp_path / "gauges.json"
    code = run.main(["--profile", "ci", "--check-floors", "--json", str(out)])
    printed = capsys.readouterr().out
    sys.stdout.write(printed)
    assert out.is_file()
    assert code == 0, f"{printed}\n{RAISE_HINT}"
    assert printed.count("\n") >= 4  # one summary line per gauge
