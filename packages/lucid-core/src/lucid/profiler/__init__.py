"""``lucid.profiler``: where the time goes, op by op (``torch.profiler``).

Inside ``with profile() as prof:`` every op's forward (``Function.apply``, named
``lucid::<Op>``) and every autograd node's backward (named as its ``grad_fn``, such as
``MulBackward0``) is timed, and so is each :class:`record_function` range. An op that calls
other ops (a backward formula, a composite op) is their parent: its *self* time excludes
theirs, its *total* time includes them. ``prof.key_averages().table(sort_by=...)`` prints
the summary table, ``prof.export_chrome_trace(path)`` writes the Trace Event Format JSON that
``chrome://tracing`` and Perfetto open, and :func:`tensorboard_trace_handler` writes the
same files where TensorBoard's profiler plugin looks for them.

``profile_memory=True`` records the bytes of the arrays each op returns (its outputs in the
forward, the input gradients in the backward): what the op allocated for its results, not
the temporaries inside it. ``record_shapes=True`` records the input shapes,
``with_stack=True`` the Python frames outside lucid that called the op. Devices other than
the CPU have no activity of their own: on MLX the times are those of building the lazy
graph, with the arrays evaluated where a value is read.

The timing wraps ``Function.apply`` and the autograd engine's backward call while a profiler
records, and only then: with no profiler there is nothing in an op's path.

:class:`ExecutionTraceObserver` records an execution trace instead of timings: every op run
between its ``start()`` and ``stop()`` (forward ops, autograd nodes and the ops of their
backward formulas, :class:`record_function` ranges) as a node of a Chakra execution-trace JSON
file (torch's format: ``schema``, ``pid``, ``time``, ``start_ts``, ``nodes``, ``finish_ts``),
with its parent node, inputs and outputs (values, shapes, types, strides). Pass one to
``profile(execution_trace_observer=...)`` to record the profiler's recording windows.
"""

from __future__ import annotations

import abc
import enum
import functools
import gzip
import json
import os
import socket
import tempfile
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from lucid._tensor import Tensor
from lucid.autograd import engine
from lucid.autograd.function import Function, observe_ops

__all__ = [
    "EventList",
    "ExecutionTraceObserver",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]

F = TypeVar("F", bound=Callable[..., Any])


class ProfilerActivity(enum.Enum):
    """What to profile (``torch.profiler.ProfilerActivity``); lucid records CPU activity."""

    CPU = "CPU"
    CUDA = "CUDA"
    MPS = "MPS"


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` says to do at a step (``torch.profiler.ProfilerAction``)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def kineto_available() -> bool:
    """``torch.profiler.kineto_available``: False (lucid records its own events; there is no
    Kineto library)."""
    return False


def supported_activities() -> set[ProfilerActivity]:
    """``torch.profiler.supported_activities``: ``{ProfilerActivity.CPU}`` (lucid times the
    ops on the host, whatever backend runs them)."""
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:  # fmt: skip
    """Skip ``skip_first`` steps, then cycle: ``wait`` idle steps, ``warmup`` steps, ``active``
    recorded steps (the last one saves the trace), ``repeat`` times (0: for ever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(
            "Invalid profiler schedule arguments: wait, warmup, repeat and skip_first must be "
            f">= 0 and active > 0, got wait={wait}, warmup={warmup}, active={active}, "
            f"repeat={repeat}, skip_first={skip_first}"
        )

    def schedule_fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


# -- events -------------------------------------------------------------------------------------


class FunctionEvent:
    """One timed op or range: name, start/end (microseconds), thread, children.

    ``cpu_time_total`` includes the children's time, ``self_cpu_time_total`` does not (as
    ``torch.autograd.profiler_util.FunctionEvent``).
    """

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float = 0.0,
                 input_shapes: list[Any] | None = None, stack: list[str] | None = None,
                 is_user_annotation: bool = False) -> None:  # fmt: skip
        self.id, self.name, self.thread = id, name, thread
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes = input_shapes or []
        self.stack = stack or []
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_memory_usage = 0
        self.count = 1
        self.device_type = ProfilerActivity.CPU

    @property
    def key(self) -> str:
        """What :meth:`EventList.key_averages` groups by: the name."""
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """Wall time from start to end, children included (microseconds)."""
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        """Wall time minus the children's (microseconds)."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        """Bytes this event's own results took, without its children's."""
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        """Average total time per call (microseconds)."""
        return self.cpu_time_total / max(self.count, 1)

    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = 0.0

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent name={self.name} self_cpu_time_total={self.self_cpu_time_total:.1f} "
            f"cpu_time_total={self.cpu_time_total:.1f} input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one key added up (``torch.autograd.profiler_util.FunctionEventAvg``)."""

    def __init__(self, key: str, input_shapes: Any = None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.is_user_annotation = False
        self.stack: list[str] = []

    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = 0.0

    def add(self, ev: FunctionEvent) -> FunctionEventAvg:
        """Add one event to the totals."""
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.is_user_annotation = ev.is_user_annotation
        if not self.stack:
            self.stack = ev.stack
        return self

    @property
    def cpu_time(self) -> float:
        """Average total time per call (microseconds)."""
        return self.cpu_time_total / max(self.count, 1)

    @property
    def self_cpu_time(self) -> float:
        """Average self time per call (microseconds)."""
        return self.self_cpu_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} count={self.count} "
            f"self_cpu_time_total={self.self_cpu_time_total:.1f} "
            f"cpu_time_total={self.cpu_time_total:.1f}>"
        )


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
              "self_cpu_memory_usage", "count", "cuda_time_total", "device_time_total",
              "self_cuda_time_total", "self_device_time_total")  # fmt: skip


class EventList(list[Any]):
    """A list of events with torch's summaries: :meth:`key_averages`, :meth:`table`."""

    def __init__(self, events: Iterable[Any] = (), profile_memory: bool = False,
                 with_shapes: bool = False) -> None:  # fmt: skip
        super().__init__(events)
        self._profile_memory, self._with_shapes = profile_memory, with_shapes

    def key_averages(self, group_by_input_shapes: bool = False,
                     group_by_stack_n: int = 0) -> EventList:  # fmt: skip
        """One :class:`FunctionEventAvg` per name (and input shapes / stack, if asked)."""
        groups: dict[Any, FunctionEventAvg] = {}
        for ev in self:
            key: Any = ev.key
            if group_by_input_shapes:
                key = (key, str(ev.input_shapes))
            if group_by_stack_n:
                key = (key, tuple(ev.stack[:group_by_stack_n]))
            if key not in groups:
                groups[key] = FunctionEventAvg(
                    ev.key, ev.input_shapes if group_by_input_shapes else None
                )
            groups[key].add(ev)
        return EventList(groups.values(), self._profile_memory, group_by_input_shapes)

    @property
    def self_cpu_time_total(self) -> float:
        """The self time of every event added up (microseconds): the profiled wall time."""
        return float(sum(ev.self_cpu_time_total for ev in self))

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:  # fmt: skip
        """The summary table torch prints, sorted by ``sort_by`` (e.g. ``"cpu_time_total"``)."""
        rows = list(self)
        if top_level_events_only:
            rows = [ev for ev in rows if getattr(ev, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"sort_by must be one of {', '.join(_SORT_KEYS)}, got {sort_by!r}")
            rows.sort(key=lambda ev: getattr(ev, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit > 0 else rows
        total = self.self_cpu_time_total or 1.0
        columns: list[tuple[str, Callable[[Any], str]]] = [
            ("Name", lambda ev: _clip(ev.key, max_name_column_width)),
            ("Self CPU %", lambda ev: f"{100 * ev.self_cpu_time_total / total:.2f}%"),
            ("Self CPU", lambda ev: _fmt_time(ev.self_cpu_time_total)),
            ("CPU total %", lambda ev: f"{100 * ev.cpu_time_total / total:.2f}%"),
            ("CPU total", lambda ev: _fmt_time(ev.cpu_time_total)),
            ("CPU time avg", lambda ev: _fmt_time(ev.cpu_time_total / max(ev.count, 1))),
        ]
        if self._profile_memory:
            columns.append(("CPU Mem", lambda ev: _fmt_bytes(ev.cpu_memory_usage)))
            columns.append(("Self CPU Mem", lambda ev: _fmt_bytes(ev.self_cpu_memory_usage)))
        columns.append(("# of Calls", lambda ev: str(ev.count)))
        if self._with_shapes:
            columns.append(
                ("Input Shapes", lambda ev: _clip(str(ev.input_shapes), max_shapes_column_width))
            )
        cells = [[fn(ev) for _, fn in columns] for ev in rows]
        widths = [
            max([len(name)] + [len(r[i]) for r in cells]) for i, (name, _) in enumerate(columns)
        ]
        rule = "  ".join("-" * w for w in widths)

        def line(values: list[str]) -> str:
            first = values[0].ljust(widths[0])
            return "  ".join([first] + [v.rjust(w) for v, w in zip(values[1:], widths[1:])])

        out = [header] if header else []
        out += [rule, line([name for name, _ in columns]), rule]
        out += [line(r) for r in cells]
        out += [rule, f"Self CPU time total: {_fmt_time(self.self_cpu_time_total)}", ""]
        return "\n".join(out)

    def export_chrome_trace(self, path: str) -> None:
        """Write these events as Trace Event Format JSON (chrome://tracing, Perfetto)."""
        _write_trace(path, list(self))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _fmt_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_bytes(n: float) -> str:
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} b"


def _trace_dict(events: list[FunctionEvent], step: int | None = None) -> dict[str, Any]:
    pid = os.getpid()
    out = []
    for ev in events:
        args: dict[str, Any] = {}
        if ev.input_shapes:
            args["Input Dims"] = ev.input_shapes
        if ev.stack:
            args["Call stack"] = ";".join(ev.stack)
        if ev.cpu_memory_usage:
            args["Memory"] = ev.cpu_memory_usage
        out.append({
            "ph": "X", "cat": "user_annotation" if ev.is_user_annotation else "cpu_op",
            "name": ev.name, "pid": pid, "tid": ev.thread, "ts": ev.start_us,
            "dur": ev.cpu_time_total, "args": args,
        })  # fmt: skip
    trace: dict[str, Any] = {
        "schemaVersion": 1,
        "deviceProperties": [],
        "traceEvents": out,
        "traceName": "lucid",
        "displayTimeUnit": "ms",
    }
    if step is not None:
        trace["step"] = step
    return trace


def _write_trace(path: str, events: list[FunctionEvent], step: int | None = None) -> None:
    data = json.dumps(_trace_dict(events, step)).encode()
    if path.endswith(".gz"):
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)


# -- recording ----------------------------------------------------------------------------------


class _Recorder:
    """Collects events; one per recording window of a :class:`profile`."""

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool) -> None:
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack = with_stack
        self.events: list[FunctionEvent] = []
        self.local = threading.local()
        self.next_id = 0
        self.lock = threading.Lock()

    def begin(self, name: str, args: tuple[Any, ...] = (), user: bool = False) -> FunctionEvent:
        stack: list[FunctionEvent] = getattr(self.local, "stack", None) or []
        self.local.stack = stack
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] if (
            self.record_shapes and args) else []  # fmt: skip
        frames = _user_frames() if self.with_stack else []
        with self.lock:
            self.next_id += 1
            ev = FunctionEvent(
                self.next_id, name, threading.get_ident(), 0.0, input_shapes=shapes,
                stack=frames, is_user_annotation=user,
            )  # fmt: skip
        if stack:
            ev.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(ev)
        stack.append(ev)
        ev.start_us = time.perf_counter_ns() / 1e3
        return ev

    def end(self, ev: FunctionEvent, result: Any = None) -> None:
        ev.end_us = time.perf_counter_ns() / 1e3
        stack = self.local.stack
        if stack and stack[-1] is ev:
            stack.pop()
        if self.profile_memory:
            children = sum(c.cpu_memory_usage for c in ev.cpu_children)
            ev.cpu_memory_usage = _nbytes(result) + children
        with self.lock:
            self.events.append(ev)


def _nbytes(result: Any) -> int:
    if isinstance(result, Tensor):
        return int(getattr(result._data, "nbytes", 0))
    if isinstance(result, (tuple, list)):
        return sum(_nbytes(r) for r in result)
    return int(getattr(result, "nbytes", 0) or 0)


_LUCID_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frames() -> list[str]:
    frames = traceback.extract_stack()[:-3]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not os.path.abspath(f.filename).startswith(_LUCID_DIR)][:16]  # fmt: skip


_recorder: _Recorder | None = None
_original_apply = Function.__dict__["_apply"]
_original_call_backward = engine._call_backward


def _profiled_apply(cls: type, *args: Any, **kwargs: Any) -> Any:
    rec = _recorder
    if rec is None:
        return _original_apply.__func__(cls, *args, **kwargs)
    ev = rec.begin("lucid::" + cls.__name__, args)
    result = None
    try:
        result = _original_apply.__func__(cls, *args, **kwargs)
        return result
    finally:
        rec.end(ev, result)


def _profiled_call_backward(node: Any, grads: list[Any]) -> tuple[Any, ...]:
    rec = _recorder
    traces = tuple(_et_running)
    if rec is None and not traces:
        return _original_call_backward(node, grads)
    ev = None if rec is None else rec.begin(node.name, tuple(grads))
    marks = [et._begin(node.name, tuple(grads)) for et in traces]
    result = None
    try:
        result = _original_call_backward(node, grads)
        return result
    finally:
        for et, mark in zip(traces, marks):
            et._end(mark, result)
        if rec is not None and ev is not None:
            rec.end(ev, result)


def _install(rec: _Recorder | None) -> None:
    """Route ops through the timers (``rec``), or back to the plain path (None)."""
    global _recorder
    _recorder = rec
    apply = _original_apply if rec is None else classmethod(_profiled_apply)
    for attr in ("apply", "apply_multi"):
        setattr(Function, attr, apply)
    _route_backward()


def _route_backward() -> None:
    """The engine's backward call: through the timers / execution traces while any records."""
    watched = _recorder is not None or bool(_et_running)
    engine._call_backward = _profiled_call_backward if watched else _original_call_backward


class record_function:
    """Time a block (or a decorated function) as one named range (as torch.profiler's).

    >>> with profile() as prof:
    ...     with record_function("forward"):
    ...         y = lucid.ones(3).exp().sum()
    >>> prof.events()[0].name
    'forward'
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._ev: FunctionEvent | None = None
        self._rec: _Recorder | None = None
        self._marks: list[tuple[ExecutionTraceObserver, Any]] = []

    def __enter__(self) -> record_function:
        self._rec = _recorder
        if self._rec is not None:
            self._ev = self._rec.begin(self.name, user=True)
        if _et_running:
            self._marks = [(et, et._begin(self.name, ())) for et in tuple(_et_running)]
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        for et, mark in self._marks:
            et._end(mark, None)
        self._marks = []
        if self._rec is not None and self._ev is not None:
            self._rec.end(self._ev)
        self._ev = self._rec = None

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class profile:
    """Record op timings (``torch.profiler.profile``).

    ``schedule`` (see :func:`schedule`) picks the steps to record, counted by :meth:`step`;
    ``on_trace_ready(prof)`` runs at the end of each recorded window (and at exit); without a
    schedule everything between enter and exit is recorded. ``activities`` is accepted as in
    torch; lucid records the CPU. An ``execution_trace_observer`` (an
    :class:`ExecutionTraceObserver` with its file registered) records the ops of every recording
    window, and is finalized (its file written) when the ``with`` block exits; without one, the
    environment variable ``ENABLE_PYTORCH_EXECUTION_TRACE=1`` makes one writing a temporary file.

    >>> with profile(record_shapes=True) as prof:
    ...     (lucid.ones(2, 3) * 2).sum().item()
    6.0
    >>> print(prof.key_averages().table(sort_by="cpu_time_total"))  # doctest: +SKIP
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False,
                 use_cuda: bool | None = None) -> None:  # fmt: skip
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule or _default_schedule
        self._scheduled = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.acc_events = with_stack, acc_events
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._rec: _Recorder | None = None
        self._finished: list[FunctionEvent] = []
        self._step_rec: record_function | None = None
        self.execution_trace_observer = (
            execution_trace_observer or ExecutionTraceObserver.build_execution_trace_obs_from_env()
        )

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.stop()
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self) -> None:
        """Begin profiling (as entering the ``with`` block)."""
        if _recorder is not None and _recorder is not self._rec:
            raise RuntimeError("Profiler is already enabled (one lucid.profiler at a time)")
        self._act(ProfilerAction.NONE, self.current_action)

    def stop(self) -> None:
        """End profiling; a recording window still open is finished (``on_trace_ready`` runs)."""
        if self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._finish_window()
        self._close_step()
        if self._rec is not None:
            self._rec = None
            _install(None)

    def step(self) -> None:
        """Mark the end of a training step: the schedule may start or save a recording."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._act(prev, self.current_action)

    def _act(self, prev: ProfilerAction, now: ProfilerAction) -> None:
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        self._close_step()
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in recording and now not in recording):
            self._finish_window()
        if now in recording and self._rec is None:
            self._rec = _Recorder(self.record_shapes, self.profile_memory, self.with_stack)
            _install(self._rec)
            if self.execution_trace_observer:
                self.execution_trace_observer.start()
        if now in recording and self._scheduled:
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def _close_step(self) -> None:
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None

    def _finish_window(self) -> None:
        rec = self._rec
        if rec is None:
            return
        self._rec = None
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        _install(None)
        events = sorted(rec.events, key=lambda e: (e.start_us, e.id))
        self._finished = (self._finished + events) if self.acc_events else events
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def events(self) -> EventList:
        """The events of the last finished recording window, in start order."""
        return EventList(self._finished, self.profile_memory, self.record_shapes)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:  # fmt: skip
        """The events averaged by name (and input shape / stack): ``.table(...)`` prints them."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as Trace Event Format JSON (``.json``, or ``.json.gz``)."""
        _write_trace(path, self._finished, self.step_num)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write ``stack;frames value`` lines (a flame graph's input); needs ``with_stack``."""
        with open(path, "w") as f:
            for ev in self._finished:
                if ev.stack:
                    frames = ";".join(reversed(ev.stack))
                    f.write(f"{frames};{ev.name} {int(getattr(ev, metric))}\n")


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:  # fmt: skip
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` as TensorBoard's profiler
    plugin expects (``<worker>.<time_ms>.pt.trace.json``)."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, name + (".gz" if use_gzip else "")))

    return handler


# -- execution traces ---------------------------------------------------------------------------

_ET_SCHEMA = "1.1.1-chakra.0.0.4"  # torch 2.x's execution-trace schema version
_ET_PROCESS = "[pytorch|profiler|execution_trace|process]"  # the root nodes Chakra's tools expect
_ET_THREAD = "[pytorch|profiler|execution_trace|thread]"

# The C++ names torch's traces give element types (``Tensor(float)``), by lucid dtype name.
_ET_CTYPES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}  # fmt: skip

# The observers capturing now, in start order; every op goes to each of them.
_et_running: list[ExecutionTraceObserver] = []
_et_block: Any = None  # the ``observe_ops`` block open while any observer captures


def _et_observe(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
    for et in tuple(_et_running):
        et._op(cls, args, kwargs, result)


def _et_sync() -> None:
    """Open the ``observe_ops`` block while an observer captures, close it when none does."""
    global _et_block
    if _et_running and _et_block is None:
        block = observe_ops(_et_observe)
        block.__enter__()
        _et_block = block
    elif not _et_running and _et_block is not None:
        block, _et_block = _et_block, None
        block.__exit__(None, None, None)
    _route_backward()


class _ITraceObserver(abc.ABC):
    """What ``profile(execution_trace_observer=...)`` calls: ``start``, ``stop``, ``cleanup``."""

    @abc.abstractmethod
    def start(self) -> None:
        """Begin capturing."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop capturing."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Finalize the outputs."""


class ExecutionTraceObserver(_ITraceObserver):
    """Record an execution trace (``torch.profiler.ExecutionTraceObserver``): the ops run
    between :meth:`start` and :meth:`stop`, written as Chakra execution-trace JSON.

    :meth:`register_callback` names the output file (``.gz`` compresses it); :meth:`start` and
    :meth:`stop` choose what is recorded (several windows go into one file);
    :meth:`unregister_callback` (or :meth:`cleanup`, or the observer's deletion) writes the
    file, atomically (a temporary file in the same folder, renamed over the path).

    Each node has torch's fields: ``id``, ``name`` (``lucid::<Op>`` for an op, the autograd
    node's name such as ``MulBackward0`` for a backward step, a :class:`record_function`'s
    name), ``ctrl_deps`` (the enclosing node: a backward step or range, else the thread's
    node), ``inputs`` and ``outputs`` (``values``, ``shapes``, ``types``, ``strides``; a tensor's
    value is ``[tensor id, storage id, offset, numel, itemsize, device]``) and ``attrs``.

    >>> et = ExecutionTraceObserver().register_callback("trace.json")  # doctest: +SKIP
    >>> et.start(); y = lucid.ones(2, 3).exp().sum(); et.stop()  # doctest: +SKIP
    >>> et.unregister_callback()  # writes trace.json  # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._registered = False
        self._execution_trace_running = False
        self.extra_resources_collection = False
        self.resources_dir: str = ""
        self.output_file_path: str = ""
        self.output_file_path_observer: str = ""
        self._lock = threading.Lock()
        self._local = threading.local()
        self._reset_trace()

    def __del__(self) -> None:
        try:
            self.unregister_callback()
        except Exception:  # noqa: BLE001 - nothing to report to at interpreter teardown
            pass

    # -- construction helpers (torch's) ---------------------------------------------------------
    @staticmethod
    def build_execution_trace_obs_from_env() -> ExecutionTraceObserver | None:
        """An observer writing a temporary ``.et.json`` file if the environment variable
        ``ENABLE_PYTORCH_EXECUTION_TRACE`` is ``1`` (``ENABLE_PYTORCH_EXECUTION_TRACE_EXTRAS=1``
        also sets extra resource collection), else None."""
        if os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE", "0") != "1":
            return None
        try:
            with tempfile.NamedTemporaryFile("w+t", suffix=".et.json", delete=False) as fp:
                filename = fp.name
        except Exception as e:  # noqa: BLE001 - torch's: warn and record nothing
            warnings.warn(
                "Execution trace will not be recorded. Exception on creating default temporary "
                f"file: {e}",
                stacklevel=2,
            )
            return None
        et = ExecutionTraceObserver()
        et.register_callback(filename)
        extras = os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE_EXTRAS", "0") == "1"
        et.set_extra_resource_collection(extras)
        return et

    def set_extra_resource_collection(self, val: bool) -> None:
        """Collect extra resources next to the trace (torch: generated kernels, index data;
        lucid generates none, so the folder stays empty)."""
        self.extra_resources_collection = val
        if self.extra_resources_collection:
            self.get_resources_dir(can_create=True)

    def get_resources_dir(self, can_create: bool = False) -> str | None:
        """The ``<trace name>_resources`` folder beside the trace, where extra resource
        collection is on (created if ``can_create``), else None."""
        if not self.extra_resources_collection:
            return None
        if self.resources_dir:
            return self.resources_dir
        generated = ExecutionTraceObserver.get_resources_dir_for_et_path(
            self.output_file_path, create_dir=can_create
        )
        if not generated:
            return None
        self.resources_dir = generated
        return self.resources_dir

    @staticmethod
    def get_resources_dir_for_et_path(trace_path: str, create_dir: bool = False) -> str | None:
        """``<folder>/<trace name without extension>_resources`` if it exists (or is created),
        else None."""
        work_dir, file_name = os.path.split(trace_path)
        resource_dir = os.path.join(work_dir, os.path.splitext(file_name)[0] + "_resources")
        if not os.path.exists(resource_dir):
            if not create_dir:
                return None
            try:
                os.mkdir(resource_dir)
            except Exception:  # noqa: BLE001 - torch's: warn, no folder
                warnings.warn(
                    f"Execution trace exception when creating {resource_dir}", stacklevel=2
                )
                return None
        return resource_dir

    # -- registration ---------------------------------------------------------------------------
    def register_callback(self, output_file_path: str) -> ExecutionTraceObserver:
        """Register the observer, writing to ``output_file_path`` (``.gz``: gzip-compressed).
        A second call before :meth:`unregister_callback` changes nothing. Returns ``self``.

        Raises ``TypeError`` for a path that is not a string, ``FileNotFoundError``,
        ``NotADirectoryError``, ``IsADirectoryError`` or ``PermissionError`` where the file
        could not be written, before anything is recorded."""
        if self._registered:
            return self
        path = _check_trace_path(output_file_path)
        self.output_file_path = path
        self.output_file_path_observer = path
        self._reset_trace()
        self._registered = True
        return self

    def unregister_callback(self) -> None:
        """Stop capturing and write the trace file (nothing if not registered)."""
        if not self._registered:
            return
        self.stop()
        self._registered = False
        self._write(self.output_file_path)

    @property
    def is_registered(self) -> bool:
        """Whether a file is registered (between register and unregister)."""
        return self._registered

    def is_running(self) -> bool:
        """Whether ops are being captured (between start and stop)."""
        return self._execution_trace_running

    def start(self) -> None:
        """Start capturing (registered observers only; a running one keeps running)."""
        if self._registered and not self._execution_trace_running:
            self._execution_trace_running = True
            _et_running.append(self)
            _et_sync()

    def stop(self) -> None:
        """Stop capturing."""
        if self._execution_trace_running:
            self._execution_trace_running = False
            if self in _et_running:
                _et_running.remove(self)
            _et_sync()

    def cleanup(self) -> None:
        """Finalize the output (:meth:`unregister_callback`)."""
        self.unregister_callback()

    def get_output_file_path(self) -> str | None:
        """The registered output path, or None."""
        return self.output_file_path or None

    # -- recording ------------------------------------------------------------------------------
    def _reset_trace(self) -> None:
        self._nodes: list[dict[str, Any]] = []
        self._next_id = 2  # 1 is the process node
        self._rf_id = 0
        self._threads: dict[int, tuple[int, int]] = {}  # ident -> (thread node id, index)
        self._tensors: dict[int, tuple[Any, int]] = {}  # id(obj) -> (weak reference, ET id)
        self._pid = os.getpid()
        self._time = time.strftime("%Y-%m-%d %X")
        self._start_ts = time.monotonic_ns() // 1_000_000

    def _new_id(self) -> int:
        nid = self._next_id
        self._next_id += 1
        return nid

    def _thread(self) -> tuple[int, int]:
        """This thread's node id and index (its node added the first time)."""
        ident = threading.get_ident()
        got = self._threads.get(ident)
        if got is None:
            got = (self._new_id(), len(self._threads) + 1)
            self._threads[ident] = got
            self._nodes.append(_et_node(got[0], _ET_THREAD, 1, _et_io([]), _et_io([]),
                                        0, got[1], "", scope=7))  # fmt: skip
        return got

    def _stack(self) -> list[int]:
        stack: list[int] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = []
            self._local.stack = stack
        return stack

    def _place(self, inputs: Any) -> tuple[int, int, list[int], int, Any]:
        """A new node's id, parent, the thread's stack, the thread's index and its inputs
        (under ``self._lock``); the range counter moves on."""
        tnode, tindex = self._thread()
        stack = self._stack()
        parent = stack[-1] if stack else tnode
        nid = self._new_id()
        self._rf_id += 1
        return nid, parent, stack, tindex, _et_io([self._value(a) for a in inputs])

    def _begin(self, name: str, inputs: tuple[Any, ...]) -> Any:
        """Open a node that encloses others (a backward step, a range): its id and details."""
        with self._lock:
            nid, parent, stack, tindex, ins = self._place(inputs)
            mark = (nid, name, parent, ins, self._rf_id, tindex)
            stack.append(nid)
        return mark

    def _end(self, mark: Any, result: Any) -> None:
        nid, name, parent, ins, rf_id, tindex = mark
        with self._lock:
            stack = self._stack()
            if stack and stack[-1] == nid:
                stack.pop()
            outs = _et_io([] if result is None else [self._value(r) for r in _as_seq(result)])
            self._nodes.append(_et_node(nid, name, parent, ins, outs, rf_id, tindex, ""))

    def _op(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        """One ``Function.apply``: a node under the enclosing one."""
        name = "lucid::" + cls.__name__
        with self._lock:
            nid, parent, _, tindex, ins = self._place((*args, *kwargs.values()))
            outs = _et_io([self._value(r) for r in _as_seq(result)])
            types = list(ins["types"][: len(args)])
            schema = f"{name}({', '.join(types)}"
            if kwargs:
                schema += (", " if args else "") + "*, " + ", ".join(kwargs)
            schema += ")"
            self._nodes.append(_et_node(nid, name, parent, ins, outs, self._rf_id, tindex, schema))

    def _object_id(self, obj: Any) -> int:
        """A trace-wide id for ``obj`` (a Tensor or its storage's owner) while it lives."""
        key = id(obj)
        got = self._tensors.get(key)
        if got is not None and got[0]() is obj:
            return int(got[1])
        nid = self._new_id()
        try:
            ref: Any = weakref.ref(obj)
        except TypeError:  # not weakly referable: keep it alive while the trace is open

            def ref(obj: Any = obj) -> Any:
                return obj

        self._tensors[key] = (ref, nid)
        return nid

    def _value(self, v: Any) -> tuple[Any, Any, str, Any]:
        """(value, shape, type, strides) of one input or output, as torch's traces write it."""
        if isinstance(v, Tensor):
            base = v._base if v._base is not None else v
            tid, sid = self._object_id(v), self._object_id(base)
            dt = str(v.dtype).replace("lucid.", "")
            try:
                strides: list[int] = list(v.stride())
            except Exception:  # noqa: BLE001 - a layout without strides (a batched view)
                strides = []
            numel = v.numel()
            value = [tid, sid, 0, numel, v.element_size(), str(v.device)]
            return value, list(v.shape), f"Tensor({_ET_CTYPES.get(dt, dt)})", strides
        if v is None:
            return "<None>", [], "None", []
        if isinstance(v, bool):
            return v, [], "Bool", []
        if isinstance(v, int):
            return v, [], "Int", []
        if isinstance(v, float):
            return v, [], "Double", []
        if isinstance(v, complex):
            return [v.real, v.imag], [], "ComplexDouble", []
        if isinstance(v, str):
            return v, [], "String", []
        if isinstance(v, (list, tuple)):
            parts = [self._value(x) for x in v]
            kinds = ",".join(p[2] for p in parts)
            return ([p[0] for p in parts], [p[1] for p in parts], f"GenericList[{kinds}]",
                    [p[3] for p in parts])  # fmt: skip
        return str(v), [], type(v).__name__, []

    def _write(self, path: str) -> None:
        """Write the trace to ``path`` atomically (a temporary file renamed over it)."""
        with self._lock:
            nodes = list(self._nodes)
            nodes.append(_et_node(1, _ET_PROCESS, 1, _et_io([]), _et_io([]), 0, 0, "", scope=7))
            trace = {
                "schema": _ET_SCHEMA, "pid": self._pid, "time": self._time,
                "start_ts": self._start_ts, "nodes": nodes,
                "finish_ts": time.monotonic_ns() // 1_000_000,
            }  # fmt: skip
            self._tensors = {}
        data = json.dumps(trace).encode()
        if path.endswith(".gz"):
            data = gzip.compress(data)
        folder = os.path.dirname(os.path.abspath(path))
        try:
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                       dir=folder)  # fmt: skip
        except OSError as e:
            raise type(e)(e.errno, f"ExecutionTraceObserver: cannot write the execution trace "
                          f"to {path!r}: {e.strerror}") from e  # fmt: skip
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise


def _as_seq(result: Any) -> tuple[Any, ...]:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _et_io(values: list[tuple[Any, Any, str, Any]]) -> dict[str, list[Any]]:
    return {"values": [v[0] for v in values], "shapes": [v[1] for v in values],
            "types": [v[2] for v in values], "strides": [v[3] for v in values]}  # fmt: skip


def _et_node(nid: int, name: str, parent: int, ins: dict[str, Any], outs: dict[str, Any],
             rf_id: int, tid: int, schema: str, scope: int = 0) -> dict[str, Any]:  # fmt: skip
    attrs = [("rf_id", "uint64", rf_id), ("fw_parent", "uint64", 0), ("seq_id", "int64", -1),
             ("scope", "uint64", scope), ("tid", "uint64", tid), ("fw_tid", "uint64", 0),
             ("op_schema", "string", schema), ("kernel_backend", "string", ""),
             ("kernel_file", "string", ""), ("tensor_range", "string", "")]  # fmt: skip
    return {"id": nid, "name": name, "ctrl_deps": parent, "inputs": ins, "outputs": outs,
            "attrs": [{"name": n, "type": t, "value": v} for n, t, v in attrs]}  # fmt: skip


def _check_trace_path(output_file_path: Any) -> str:
    """``output_file_path`` as a str, if a file can be written there; a clear error if not."""
    if not isinstance(output_file_path, (str, os.PathLike)):
        raise TypeError(
            "ExecutionTraceObserver.register_callback: output_file_path must be a str or "
            f"os.PathLike, got {type(output_file_path).__name__}"
        )
    path = os.fspath(output_file_path)
    if not isinstance(path, str) or not path:
        raise ValueError(
            f"ExecutionTraceObserver.register_callback: invalid output file path {path!r}"
        )
    where = f"ExecutionTraceObserver: cannot write the execution trace to {path!r}"
    if os.path.isdir(path):
        raise IsADirectoryError(f"{where}: it is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        raise FileNotFoundError(f"{where}: the directory {folder!r} does not exist")
    if not os.path.isdir(folder):
        raise NotADirectoryError(f"{where}: {folder!r} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"{where}: the directory {folder!r} is not writable")
    return path
