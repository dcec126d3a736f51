"""The hook ``lucid.compiler`` records through for work that is not one ``Function.apply``.

A capture sees every op through ``observe_ops``; what makes tensors another way (random
sampling, in-place writes) is marked :func:`replayable` here: while a capture listens, such a
call is handed to it whole, to run and to record as one step that a replay calls again (so a
replayed ``lucid.rand`` draws from the generator as the eager call would). Nothing here
imports lucid: the lowest layers use it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

# Listeners of the capture in progress, innermost last: ``listener(fn, args, kwargs)`` runs
# ``fn(*args, **kwargs)`` itself and returns its result.
listeners: list[Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]] = []


def replayable(fn: F) -> F:
    """Mark ``fn`` (which makes or changes tensors outside ``Function.apply``) as one step of
    a ``lucid.compile`` capture; outside a capture the call costs one list check."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if listeners:
            return listeners[-1](fn, args, kwargs)
        return fn(*args, **kwargs)

    return cast(F, wrapper)


def value_check(fn: F) -> F:
    """Mark ``fn`` as a check of its arguments' values (index bounds...) that returns nothing
    the computation uses: a capture runs it without recording or breaking the graph, and a
    replay skips it (so a replay does not repeat the check)."""
    setattr(fn, "_lucid_value_check", True)  # noqa: B010
    return replayable(fn)
