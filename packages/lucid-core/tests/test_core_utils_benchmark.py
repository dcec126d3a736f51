"""lucid.utils.benchmark: torch.utils.benchmark's Timer, Measurement and Compare."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lucid
from lucid.utils import benchmark


def _spec(**kw: object) -> benchmark.TaskSpec:
    base: dict[str, object] = {"stmt": "x + y", "setup": "pass"}
    base.update(kw)
    return benchmark.TaskSpec(**base)  # type: ignore[arg-type]


def _measurements(module: object, envs: bool = False) -> list[object]:
    """The same synthetic measurements built with either module (lucid's or torch's)."""
    rng = np.random.default_rng(0)
    out = []
    for threads in (1, 2):
        for sub in ("float", "int"):
            for n, base in ((8, 2e-6), (1024, 3e-4)):
                spread = 0.3 if (sub, n) == ("int", 8) else 0.02
                times = list(base * threads * (1 + spread * rng.standard_normal(12)))
                spec = module.TaskSpec(  # type: ignore[attr-defined]
                    stmt="f(x)", setup="pass", label="add", sub_label=sub,
                    description=f"n={n}", num_threads=threads,
                    env=(("new" if sub == "int" else "baseline") if envs else None),
                )  # fmt: skip
                out.append(module.Measurement(10, [t * 10 for t in times], spec))  # type: ignore[attr-defined]
    return out


def test_timer_runs_statement_with_globals_and_restores_threads() -> None:
    calls: list[int] = []
    before = lucid.get_num_threads()
    t = benchmark.Timer("f()", globals={"f": lambda: calls.append(lucid.get_num_threads())},
                        num_threads=1)  # fmt: skip
    m = t.timeit(50)
    assert isinstance(m, benchmark.Measurement)
    assert m.number_per_run == 50 and len(m.raw_times) == 1
    assert len(calls) == 50 + 2  # the warm-up is max(50 // 100, 2) calls
    assert set(calls) == {1}
    assert lucid.get_num_threads() == before
    assert m.median == pytest.approx(m.raw_times[0] / 50, rel=1e-12, abs=0.0)


def test_timer_globals_name_torch_as_lucid() -> None:
    m = benchmark.Timer("torch.ones(3).sum()", setup="import math").timeit(3)
    assert m.task_spec.setup == "import math" and m.stmt == "torch.ones(3).sum()"


def test_blocked_and_adaptive_autorange() -> None:
    t = benchmark.Timer("sum(range(50))", label="sum", sub_label="py", description="50")
    seen: list[tuple[int, float]] = []
    m = t.blocked_autorange(callback=lambda n, s: seen.append((n, s)), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(seen) == len(m.raw_times)
    assert all(n == m.number_per_run for n, _ in seen)
    a = t.adaptive_autorange(threshold=0.5, min_run_time=0.01, max_run_time=0.5)
    assert len(a.raw_times) >= 4 or sum(a.raw_times) > 0.5
    assert a.title == "sum: py" and a.as_row_name == "py" and a.description == "50"


def test_bad_arguments_raise_clearly() -> None:
    with pytest.raises(ValueError, match="str"):
        benchmark.Timer(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="Python statements only"):
        benchmark.Timer("x", language="cpp")
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("x", global_setup="#include <x>")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        benchmark.Timer("pass").repeat()
    with pytest.raises(ValueError, match="Measurement"):
        benchmark.Compare([object()])  # type: ignore[list-item]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = benchmark.Measurement(1, [1.0], _spec()).nope


def test_measurement_statistics_and_merge() -> None:
    m = benchmark.Measurement(2, [2.0, 4.0, 6.0, 8.0, 100.0], _spec(label="L"))
    assert m.times == [1.0, 2.0, 3.0, 4.0, 50.0]
    assert m.median == pytest.approx(3.0, rel=1e-12, abs=1e-12)
    assert m.iqr == pytest.approx(2.0, rel=1e-12, abs=1e-12)
    assert m.mean == pytest.approx(12.0, rel=1e-12, abs=1e-12)
    assert m.has_warnings and not m.meets_confidence(0.25)
    merged = benchmark.Measurement.merge([m, benchmark.Measurement(1, [5.0], _spec(label="L"))])
    assert len(merged) == 1 and merged[0].times == [1.0, 2.0, 3.0, 4.0, 50.0, 5.0]
    assert benchmark.select_unit(2.5e-4) == ("us", 1e-6)
    assert benchmark.trim_sigfig(3.14159, 2) == pytest.approx(3.1, rel=1e-12, abs=1e-12)


def _strip(text: str) -> str:
    return re.sub(r"<[\w.]+\.Measurement object at 0x[0-9a-f]+>", "<Measurement>", text)


@pytest.mark.parity
def test_repr_and_compare_render_as_torch() -> None:
    tb = pytest.importorskip("torch.utils.benchmark")
    ours, theirs = _measurements(benchmark), _measurements(tb)
    ours_env, theirs_env = _measurements(benchmark, True), _measurements(tb, True)
    assert str(benchmark.Compare(ours_env)) == str(tb.Compare(theirs_env))
    for a, b in zip(ours, theirs, strict=True):
        assert _strip(repr(a)) == _strip(repr(b))
        assert a.significant_figures == b.significant_figures
    single = (benchmark.Measurement(3, [0.3], _spec(stmt="a\nb", setup="import os\nx = 1")),
              tb.Measurement(3, [0.3], tb.TaskSpec("a\nb", "import os\nx = 1")))  # fmt: skip
    assert _strip(repr(single[0])) == _strip(repr(single[1]))
    for configure in ((), ("trim_significant_figures",), ("colorize",), ("highlight_warnings",),
                      ("trim_significant_figures", "highlight_warnings", "colorize")):  # fmt: skip
        c_ours, c_theirs = benchmark.Compare(ours), tb.Compare(theirs)
        for name in configure:
            getattr(c_ours, name)()
            getattr(c_theirs, name)()
        assert str(c_ours) == str(c_theirs), configure
