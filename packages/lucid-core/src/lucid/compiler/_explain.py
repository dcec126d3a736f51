"""``lucid.compiler.explain``: what a capture made of a call (``torch._dynamo.explain``'s
``ExplainOutput``: graphs, breaks and their reasons, ops per graph, guards, capture time)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lucid.compiler._api import CompiledFunction, Entry, _module_types
from lucid.compiler._capture import BreakReason


@dataclass
class ExplainOutput:
    """The captures one call made. ``graphs`` holds each replay program's Python source;
    ``break_reasons`` why a signature runs eagerly (with the user's ``file:line``)."""

    graphs: list[str] = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list[BreakReason] = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list[list[str]] = field(default_factory=list)
    out_guards: list[str] = field(default_factory=list)
    compile_times: str = ""
    # per graph: how it replays ("mx.compile", or "array replay" with why no backend
    # compiler runs it where one is registered for its device)
    replay_per_graph: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]  # fmt: skip
        lines += [f"  Break Reason {i + 1}:\n    Reason: {b.reason}\n    User Stack:\n"
                  + "".join(f"      {s}\n" for s in b.user_stack)
                  for i, b in enumerate(self.break_reasons)]  # fmt: skip
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"  Ops {i + 1}:")
            lines += [f"    {op}" for op in ops]
        lines.append("Out Guards:")
        lines += [f"  {g}" for g in self.out_guards]
        lines.append("Replay per Graph:")
        lines += [f"  Graph {i + 1}: {r}" for i, r in enumerate(self.replay_per_graph)]
        lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines)


def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Capture ``fn(*args, **kwargs)`` afresh and report it as an :class:`ExplainOutput`;
    ``explain(fn)(*args)`` (torch's current form) works too.

    >>> import lucid
    >>> print(lucid.compiler.explain(lambda x: x.exp() + 1, lucid.ones(2)).graph_count)
    1
    """
    if not args and not kwargs:
        return lambda *a, **k: explain(fn, *a, **k)
    inner = fn._fn if isinstance(fn, CompiledFunction) else fn
    inner = getattr(inner, "_orig_mod", inner)
    guard = None
    if any(isinstance(inner, b) for b, _ in _module_types):
        guard, inner = inner, getattr(inner, "_call_impl", inner)  # a Module: its plain call
    compiled = CompiledFunction(inner, guard=guard)
    compiled(*args, **kwargs)
    return _report(compiled.log)


def _report(log: list[Entry]) -> ExplainOutput:
    out = ExplainOutput()
    for e in log:
        out.out_guards.append(f"inputs {e.signature}")
        if e.program is None:
            out.graph_break_count += len(e.reasons)
            out.break_reasons += e.reasons
            continue
        out.graphs.append(e.program.source)
        out.graph_count += 1
        out.op_count += e.program.op_count
        out.ops_per_graph.append(list(e.program.ops))
        out.replay_per_graph.append(_replay_kind(e.program))
        out.compile_times += f"capture {e.program.capture_seconds * 1e3:.1f} ms; "
    out.compile_times = out.compile_times.rstrip("; ")
    return out


def _replay_kind(p: Any) -> str:
    if p.native is not None:
        return str(p.native.name)
    kind = "array replay" if p.arrays is not None else f"op-level replay ({p.arrays_why})"
    return f"{kind}; not compiled by the backend: {p.native_why}" if p.native_why else kind
