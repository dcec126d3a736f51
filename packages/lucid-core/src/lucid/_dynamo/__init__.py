"""``lucid._dynamo``: the ``torch._dynamo`` names real programs call around ``torch.compile``
(``import torch._dynamo``; ``torch._dynamo.reset()``, ``torch._dynamo.config.suppress_errors =
True``, ``torch._dynamo.explain(fn)(*args)``, ``torch._dynamo.mark_dynamic(x, 0)``), over
:mod:`lucid.compiler`.

lucid captures the ops a call runs for each input signature (static shapes), so the shape
hints (``mark_dynamic``, ``mark_static``...) are recorded and read back but do not change what
is captured: a new size of a marked dim is a new signature (captured again, up to
``config.recompile_limit``, then run eagerly). ``graph_break()`` inside a capture makes that
signature run eagerly (an error under ``fullgraph=True``), as torch breaks its graph there.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from lucid._dynamo import _trace_wrapped_higher_order_op as _trace_wrapped_higher_order_op
from lucid._dynamo import exc
from lucid._tensor import Tensor
from lucid.compiler import _capture
from lucid.compiler._api import (
    _state,
    compile,
    config,
    disable,
    is_compiling,
    list_backends,
    set_stance,
)
from lucid.compiler._api import reset as _reset
from lucid.compiler._explain import explain
from lucid.compiler._extras import allow_in_graph, assume_constant_result, substitute_in_graph
from lucid.utils._weak_ids import WeakIdMap

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "exc",
    "explain",
    "graph_break",
    "hints",
    "is_compiling",
    "is_dynamo_supported",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
    "run",
    "set_stance",
    "substitute_in_graph",
]

# The hints each tensor was given: {"dynamic": {dims}, "maybe_dynamic": ..., "static": ...,
# "static_address": "guarded"/"unguarded"}, kept beside the tensor (its slots have no room),
# dropped with it.
_hints: WeakIdMap[dict[str, Any]] = WeakIdMap()


def _entry(t: Tensor) -> dict[str, Any]:
    return _hints.setdefault(t, dict)


def reset() -> None:
    """``torch._dynamo.reset``: forget every capture (``lucid.compiler.reset``)."""
    _reset()


def _check_tensor(name: str, t: Any) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")


def _dims(index: Any) -> list[int]:
    return [int(i) for i in index] if isinstance(index, (list, tuple)) else [int(index)]


def hints(t: Tensor) -> dict[str, Any]:
    """The shape hints given to ``t`` (empty where none)."""
    return dict(_hints.get(t) or {})


def _mark(t: Tensor, kind: str, index: Any) -> None:
    _entry(t).setdefault(kind, set()).update(_dims(index))


def mark_dynamic(t: Any, index: int | list[Any] | tuple[Any, ...], *,
                 hint_override: int | None = None, min: int | None = None,  # noqa: A002
                 max: int | None = None,  # noqa: A002
                 specialize_on: list[Any] | None = None) -> None:  # fmt: skip
    """``torch._dynamo.mark_dynamic``: note that dims ``index`` of ``t`` vary. lucid captures
    each size as its own signature (see the module's docstring)."""
    _check_tensor("mark_dynamic", t)
    if min is not None and max is not None and min > max:
        raise ValueError(f"mark_dynamic: min ({min}) must not exceed max ({max})")
    _mark(t, "dynamic", index)


def maybe_mark_dynamic(t: Any, index: int | list[Any] | tuple[Any, ...]) -> None:
    """``torch._dynamo.maybe_mark_dynamic``: a softer ``mark_dynamic`` (noted, as it)."""
    _check_tensor("maybe_mark_dynamic", t)
    _mark(t, "maybe_dynamic", index)


def mark_static(t: Any, index: int | list[Any] | tuple[Any, ...] | None = None) -> Any:
    """``torch._dynamo.mark_static``: dims ``index`` (every dim where None) of ``t`` keep
    their size; lucid's captures are static anyway. A Module (or its class) is accepted, as
    torch's, and given back."""
    if not isinstance(t, Tensor):
        return t  # a Module or a class: torch marks it static
    _mark(t, "static", list(range(t.ndim)) if index is None else index)
    return None


def mark_static_address(t: Any, guard: bool = False) -> None:
    """``torch._dynamo.mark_static_address``: ``t``'s storage stays put between calls (a
    capture reads its tensors by reference anyway)."""
    _check_tensor("mark_static_address", t)
    _entry(t)["static_address"] = "guarded" if guard else "unguarded"


def graph_break(msg: str = "") -> None:
    """``torch._dynamo.graph_break``: break the graph here. Inside a capture the calling input
    signature then runs eagerly (with ``fullgraph=True`` it raises); outside one, nothing."""
    rec = _capture.active
    if _state.capturing and rec is not None:
        rec.graph_break("torch._dynamo.graph_break()" + (f": {msg}" if msg else ""))


def is_dynamo_supported() -> bool:
    """``torch._dynamo.is_dynamo_supported``: True (lucid.compile works on every Python lucid
    runs on)."""
    return True


def optimize(backend: str | Callable[..., Any] = "inductor", *, nopython: bool = False,
             guard_export_fn: Any = None, guard_fail_fn: Any = None,
             guard_filter_fn: Any = None, disable: bool = False,
             dynamic: bool | None = None) -> Callable[[Any], Any]:  # fmt: skip
    """``torch._dynamo.optimize`` (the old spelling of ``torch.compile``): a decorator that
    compiles with ``fullgraph=nopython``; ``disable=True`` gives functions back unchanged."""

    def decorate(fn: Any) -> Any:
        if disable:
            return fn
        return compile(fn, fullgraph=nopython, dynamic=dynamic, backend=backend)

    return decorate


@contextlib.contextmanager
def _run_only() -> Iterator[None]:
    with set_stance("eager_on_recompile"):
        yield


def run(fn: Callable[..., Any] | None = None) -> Any:
    """``torch._dynamo.run``: run with the captures there are and capture nothing new (the
    ``"eager_on_recompile"`` stance) during calls of ``fn``, or inside the returned block."""
    if fn is None:
        return _run_only()
    if not callable(fn):
        raise AssertionError("fn must be callable")

    @functools.wraps(fn)
    def run_only(*args: Any, **kwargs: Any) -> Any:
        with set_stance("eager_on_recompile"):
            return fn(*args, **kwargs)

    return run_only
