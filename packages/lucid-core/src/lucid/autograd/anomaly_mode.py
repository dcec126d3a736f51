"""Anomaly detection for autograd (``torch.autograd.detect_anomaly``).

While it is on, every recorded op keeps the stack of the forward call that made it; a backward
that fails, or (with ``check_nan``) that produces NaN, warns with the op's node name and that
forward stack (as PyTorch does) before the error propagates, so the line of the model that made
the bad value is found at once. A NaN raises PyTorch's ``RuntimeError`` ("Function
'SqrtBackward0' returned nan values in its 0th output."); other errors keep their type.
It slows the forward down (one stack capture per op); turn it on to hunt, not to train.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
           "set_detect_anomaly"]  # fmt: skip


class _State(threading.local):
    """Per thread, as PyTorch's."""

    enabled = False
    check_nan = True


_state = _State()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks each backward result for NaN."""
    return _state.check_nan


class _AnomalyMode:
    """Shared by both managers: set on construction or entry, restore on exit."""

    def __init__(self, mode: bool, check_nan: bool) -> None:
        self.mode, self.check_nan = bool(mode), bool(check_nan)
        self._prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.check_nan))
        _state.enabled, _state.check_nan = self.mode, self.check_nan

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        _state.enabled, _state.check_nan = self._prev.pop()

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        mode, check_nan = self.mode, self.check_nan

        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with _AnomalyMode(mode, check_nan):
                return fn(*args, **kwargs)

        return wrapper


class detect_anomaly(_AnomalyMode):  # noqa: N801
    """Turn anomaly detection on inside a block (context manager or decorator).

    >>> import lucid
    >>> x = lucid.tensor([0.0], requires_grad=True)
    >>> with detect_anomaly():
    ...     y = (x.sqrt() * 0.0).sum()  # d sqrt at 0 is inf, times 0 -> nan
    ...     try:
    ...         y.backward()
    ...     except RuntimeError as e:
    ...         print(str(e).splitlines()[0])
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        super().__init__(True, check_nan)


class set_detect_anomaly(_AnomalyMode):  # noqa: N801
    """Turn anomaly detection on or off: at once when called, and back on exit when used as
    a context manager (``torch.autograd.set_detect_anomaly(mode, check_nan=True)``)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        super().__init__(mode, check_nan)
        self._prev.append((_state.enabled, _state.check_nan))
        _state.enabled, _state.check_nan = self.mode, self.check_nan

    def __enter__(self) -> None:
        pass


def forward_trace(node: Any) -> str:
    """The stack of the forward call that recorded ``node``, as PyTorch prints it."""
    trace = node._trace
    if not trace:
        return "(no forward traceback: the op was recorded before anomaly detection was on)"
    return "Traceback of forward call that caused the error:\n" + "".join(trace)


def warn_anomaly(node: Any) -> None:
    """Warn, as PyTorch does, that backward failed in ``node``, with its forward stack."""
    warnings.warn(f"Error detected in {node.name}. {forward_trace(node)}", stacklevel=4)


def raise_nan(node: Any, index: int) -> None:
    """Raise PyTorch's error for a NaN in ``node``'s ``index``-th result (after the warning);
    the forward stack is appended to the message too, for where warnings are not shown."""
    warn_anomaly(node)
    raise RuntimeError(
        f"Function '{node.name}' returned nan values in its {index}th output.\n"
        + forward_trace(node)
    )
