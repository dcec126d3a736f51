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
"""

from __future__ import annotations

import enum
import functools
import gzip
import json
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from lucid._tensor import Tensor
from lucid.autograd import engine
from lucid.autograd.function import Function

__all__ = [
    "EventList",
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
    if rec is None:
        return _original_call_backward(node, grads)
    ev = rec.begin(node.name, tuple(grads))
    result = None
    try:
        result = _original_call_backward(node, grads)
        return result
    finally:
        rec.end(ev, result)


def _install(rec: _Recorder | None) -> None:
    """Route ops through the timers (``rec``), or back to the plain path (None)."""
    global _recorder
    _recorder = rec
    apply = _original_apply if rec is None else classmethod(_profiled_apply)
    for attr in ("apply", "apply_multi"):
        setattr(Function, attr, apply)
    engine._call_backward = _original_call_backward if rec is None else _profiled_call_backward


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

    def __enter__(self) -> record_function:
        self._rec = _recorder
        if self._rec is not None:
            self._ev = self._rec.begin(self.name, user=True)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
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
    torch; lucid records the CPU.

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

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.stop()

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
