"""NumPy's spellings ``axis=`` and ``keepdims=`` on the reductions, as torch takes them.

torch's argument parser lets every native function and Tensor method name ``dim`` ``axis``
and ``keepdim`` ``keepdims`` (its ``numpy_compatibility_arg_names``), so ``P.sum(1,
keepdims=True)`` (karpathy's nn-zero-to-hero lectures) and ``torch.max(x, axis=1)`` run on
torch. lucid's ops are plain Python functions: each op that has a ``keepdim`` parameter (the
reductions: ``sum``, ``mean``, ``max``, ``var``, ``logsumexp``, ``median``, ...) is wrapped
here, as ``lucid.<op>`` and as the Tensor method, to rename the NumPy spelling to the op's own
before the call. As on torch, the NumPy name is refused where the op's own name is given too
(``x.sum(dim=1, axis=1)``: "sum() got an unexpected keyword argument 'axis'").

Ops that take ``dim`` without ``keepdim`` (``cat``, ``softmax``, ``cumsum``, ...) are not
wrapped: the wrapper costs a Python call (~0.1 us) on every call of the op, and those ops are
called far more often, in far smaller pieces, than the reductions.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

# NumPy's name -> the op's (torch's python_arg_parser: numpy_compatibility_arg_names).
ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def takes_numpy_names(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is a reduction that gets NumPy's spellings (it has ``keepdim``)."""
    try:
        return "keepdim" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _renamed(
    kwargs: dict[str, Any], n_positional: int, positions: dict[str, int]
) -> dict[str, Any]:
    """``kwargs`` with ``axis``/``keepdims`` under the op's names where that is unambiguous
    (the op's own name neither given by keyword nor filled by position); else left for the
    op to refuse, in Python's (and torch's) words."""
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        name = ALIASES.get(key)
        if name is not None and name not in kwargs and n_positional <= positions.get(name, -1):
            key = name
        out[key] = value
    return out


def with_numpy_names(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, also taking ``axis=`` for ``dim`` and ``keepdims=`` for ``keepdim``."""
    params = list(inspect.signature(fn).parameters)
    positions = {name: params.index(name) for name in ALIASES.values() if name in params}

    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        if kwargs and ("keepdims" in kwargs or "axis" in kwargs):
            kwargs = _renamed(kwargs, len(args), positions)
        return fn(*args, **kwargs)

    op.__module__ = __package__ or "lucid.ops"  # found again by name (pickle): lucid.ops.<op>
    return op
