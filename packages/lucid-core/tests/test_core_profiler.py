"""lucid.profiler: forward and backward ops timed with their nesting, key averages and the
table, memory per op, shapes, stacks, schedules, Chrome traces that parse as Trace Event
Format, and the TensorBoard trace handler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lucid
from lucid.autograd.function import Function
from lucid.profiler import (
    ProfilerAction,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def _step(n: int = 4) -> lucid.Tensor:
    w = lucid.randn(n, n, requires_grad=True)
    x = lucid.randn(3, n)
    loss = (x @ w).exp().sum()
    loss.backward()
    return loss


def test_forward_and_backward_ops_are_timed_and_nested() -> None:
    with profile() as prof:
        with record_function("step"):
            _step()
    events = prof.events()
    names = [e.name for e in events]
    for name in ("step", "lucid::Matmul", "lucid::Exp", "lucid::Sum", "ExpBackward0",
                 "MmBackward0", "SumBackward0"):  # fmt: skip
        assert name in names, names
    (step,) = [e for e in events if e.name == "step"]
    assert step.cpu_parent is None and step.is_user_annotation
    for ev in events:
        assert ev.end_us >= ev.start_us
        assert 0 <= ev.self_cpu_time_total <= ev.cpu_time_total
        if ev is not step:  # everything ran inside the range
            assert step.start_us <= ev.start_us and ev.end_us <= step.end_us
        for child in ev.cpu_children:
            assert child.cpu_parent is ev
            assert ev.start_us <= child.start_us and child.end_us <= ev.end_us
    (mm_back,) = [e for e in events if e.name == "MmBackward0"]
    assert mm_back.cpu_children, "a backward formula's ops are its children"
    total = sum(e.self_cpu_time_total for e in events)
    assert total == pytest.approx(step.cpu_time_total, rel=1e-9, abs=1e-6)


def test_key_averages_count_and_the_table_sorts() -> None:
    with profile(record_shapes=True) as prof:
        x = lucid.ones(5)
        for _ in range(3):
            x = x.exp()
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["lucid::Exp"].count == 3
    raw = [e for e in prof.events() if e.name == "lucid::Exp"]
    assert avg["lucid::Exp"].cpu_time_total == pytest.approx(
        sum(e.cpu_time_total for e in raw), rel=1e-12, abs=0
    )
    for key in ("cpu_time_total", "self_cpu_time_total", "count"):
        table = prof.key_averages().table(sort_by=key, row_limit=10)
        assert "Name" in table and "Self CPU time total" in table
        rows = sorted(prof.key_averages(), key=lambda a: getattr(a, key), reverse=True)
        names = [line.split()[0] for line in table.splitlines()[3 : 3 + len(rows)]]
        assert names == [a.key for a in rows][: len(names)]
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="speed")
    shapes = prof.key_averages(group_by_input_shape=True)
    assert [a.input_shapes for a in shapes if a.key == "lucid::Exp"] == [[[5]]]
    assert "Input Shapes" in shapes.table()


def test_memory_is_the_bytes_of_each_ops_results() -> None:
    with profile(profile_memory=True) as prof:
        a = lucid.ones(100)  # float32: 400 bytes per result
        b = a.exp()
        (b * 2).sum()
    ev = {e.name: e for e in prof.events()}
    assert ev["lucid::Exp"].cpu_memory_usage == 400
    assert ev["lucid::Sum"].cpu_memory_usage == 4
    assert "CPU Mem" in prof.key_averages().table()


def test_with_stack_names_the_callers_frame() -> None:
    with profile(with_stack=True) as prof:
        lucid.ones(2).exp()
    (ev,) = [e for e in prof.events() if e.name == "lucid::Exp"]
    assert any("test_core_profiler.py" in frame for frame in ev.stack), ev.stack


def test_no_profiler_means_the_plain_op_path() -> None:
    before = Function.__dict__["apply"]
    with profile():
        assert Function.__dict__["apply"] is not before
    assert Function.__dict__["apply"] is before
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            profile().start()


def test_the_chrome_trace_is_trace_event_format(tmp_path: Path) -> None:
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            _step()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"]
    assert isinstance(events, list) and len(events) == len(prof.events())
    for ev in events:  # complete events ("X"): name, category, microsecond ts and dur, ids
        assert ev["ph"] == "X" and isinstance(ev["name"], str) and ev["cat"] in (
            "cpu_op", "user_annotation")  # fmt: skip
        assert isinstance(ev["ts"], (int, float)) and ev["dur"] >= 0
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        assert isinstance(ev.get("args", {}), dict)
    outer = [e for e in events if e["name"] == "outer"][0]
    assert outer["cat"] == "user_annotation"
    for ev in events:  # every op lies inside the range on the same thread: a proper stack
        assert outer["ts"] <= ev["ts"] and ev["ts"] + ev["dur"] <= outer["ts"] + outer["dur"] + 1e-3
    mm = [e for e in events if e["name"] == "lucid::Matmul"][0]
    assert mm["args"]["Input Dims"] == [[3, 4], [4, 4]]


def test_schedule_matches_torchs_rules() -> None:
    fn = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    got = [fn(i) for i in range(7)]
    A = ProfilerAction
    assert got == [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE]
    with pytest.raises(ValueError, match="active > 0"):
        schedule(wait=0, warmup=0, active=0)


def test_a_schedule_records_only_its_active_steps(tmp_path: Path) -> None:
    ready: list[list[str]] = []

    def on_ready(p: profile) -> None:
        ready.append([e.name for e in p.events() if e.name.startswith("ProfilerStep")])

    prof = profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                   on_trace_ready=on_ready)  # fmt: skip
    with prof:
        for _ in range(9):
            lucid.ones(2).exp()
            prof.step()
    assert ready == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0")
    with profile(on_trace_ready=handler) as p2:
        lucid.ones(2).exp()
    (path,) = list((tmp_path / "tb").iterdir())
    assert path.name.startswith("w0.") and path.name.endswith(".pt.trace.json")
    names = [e["name"] for e in json.loads(path.read_text())["traceEvents"]]
    assert names == [e.name for e in p2.events()] and "lucid::Exp" in names


@pytest.mark.parity
def test_schedule_agrees_with_torch() -> None:
    torch = pytest.importorskip("torch")
    for kw in ({"wait": 1, "warmup": 1, "active": 2, "repeat": 1, "skip_first": 1},
               {"wait": 0, "warmup": 2, "active": 1}, {"wait": 2, "warmup": 0, "active": 3,
                                                       "repeat": 2}):  # fmt: skip
        ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


def test_autograd_profiler_profile_as_torchs() -> None:
    # introyt/autogradyt_tutorial.py: `with torch.autograd.profiler.profile(use_cuda=False)`
    x = lucid.tensor([[1.0, 2.0, 4.0]], requires_grad=True)
    y = lucid.tensor([[0.5, 0.25, 2.0]])
    z = lucid.ones(1, 3)
    with lucid.autograd.profiler.profile(use_cuda=False) as prf:
        for _ in range(3):
            z = (z / x) * y
    counts = {avg.key: avg.count for avg in prf.key_averages()}
    assert counts["lucid::Div"] == 3 and counts["lucid::Mul"] == 3
    assert len(prf.function_events) == 6
    assert "lucid::Div" in prf.key_averages().table(sort_by="self_cpu_time_total")
    with lucid.autograd.profiler.profile(enabled=False) as off:
        (z * 2).sum()
    assert len(off.function_events) == 0
    with lucid.autograd.profiler.profile(), lucid.autograd.profiler.record_function("block"):
        pass
