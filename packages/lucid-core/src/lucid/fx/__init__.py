"""``torch.fx``'s names, without its graph capture.

Lucid has no symbolic tracer: ``lucid.compile`` captures the ops a call runs instead (docs/
differences.md). What a program needs at import time works as in torch, where no tracer runs:
``wrap`` (torch's leaf-function registration, used as a decorator by libraries such as timm)
and ``has_side_effect`` return their argument, ``map_arg`` maps over nested arguments, and
``Proxy`` and ``Node`` exist for ``isinstance`` checks (no lucid value is one). Tracing itself
(``symbolic_trace``, ``Tracer``, ``Graph``, ``GraphModule``, ``Interpreter``, ``Transformer``,
``replace_pattern``) raises ``NotImplementedError`` saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

__all__ = [
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "Proxy",
    "Tracer",
    "Transformer",
    "has_side_effect",
    "map_arg",
    "replace_pattern",
    "symbolic_trace",
    "wrap",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_A = TypeVar("_A")
_NO_TRACER = (
    "lucid has no torch.fx graph capture ({what}): lucid.compile captures the ops a call runs "
    "instead (docs/differences.md)"
)


def _refuse(what: str) -> NoReturn:
    raise NotImplementedError(_NO_TRACER.format(what=what))


def wrap(fn_or_name: str | Callable[..., Any]) -> str | Callable[..., Any]:
    """``torch.fx.wrap``: marks a function as a leaf for symbolic tracing; lucid traces nothing,
    so the function (or its name) comes back unchanged, as torch's does."""
    return fn_or_name


def has_side_effect(fn: _F) -> _F:
    """``torch.fx.has_side_effect``: keeps calls to ``fn`` in traced graphs; ``fn`` unchanged."""
    return fn


def map_arg(a: _A, fn: Callable[[Any], Any]) -> _A:
    """``torch.fx.map_arg``: ``fn`` applied to every ``Node`` inside the nested tuples, lists,
    dicts and slices of ``a``; lucid makes no nodes, so ``a`` comes back rebuilt unchanged."""
    if isinstance(a, Node):
        return fn(a)  # type: ignore[no-any-return]
    if isinstance(a, tuple):
        kind = type(a)
        items = [map_arg(x, fn) for x in a]
        return kind(*items) if hasattr(a, "_fields") else kind(items)
    if isinstance(a, list):
        return [map_arg(x, fn) for x in a]  # type: ignore[return-value]
    if isinstance(a, dict):
        return type(a)((k, map_arg(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_arg(a.start, fn), map_arg(a.stop, fn), map_arg(a.step, fn))  # type: ignore[return-value]
    return a


def symbolic_trace(root: Any, concrete_args: dict[str, Any] | None = None) -> NoReturn:
    """``torch.fx.symbolic_trace``: not in lucid (raises ``NotImplementedError``)."""
    _refuse("symbolic_trace")


def replace_pattern(gm: Any, pattern: Any, replacement: Any) -> NoReturn:
    """``torch.fx.replace_pattern``: not in lucid (raises ``NotImplementedError``)."""
    _refuse("replace_pattern")


class _Refused:
    """A torch.fx class lucid names but does not build: constructing one raises."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _refuse(type(self).__name__)


class Node(_Refused):
    """``torch.fx.Node``: a traced graph's node; lucid makes none (``isinstance`` is False)."""


class Proxy(_Refused):
    """``torch.fx.Proxy``: a traced value; lucid makes none (``isinstance`` is False)."""


class Graph(_Refused):
    """``torch.fx.Graph``: not in lucid (constructing one raises ``NotImplementedError``)."""


class GraphModule(_Refused):
    """``torch.fx.GraphModule``: not in lucid (constructing one raises)."""


class Tracer(_Refused):
    """``torch.fx.Tracer``: not in lucid (constructing one raises ``NotImplementedError``)."""


class Interpreter(_Refused):
    """``torch.fx.Interpreter``: not in lucid (constructing one raises)."""


class Transformer(_Refused):
    """``torch.fx.Transformer``: not in lucid (constructing one raises)."""
