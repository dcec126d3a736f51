"""Whether operations record the autograd graph: no_grad, enable_grad, set_grad_enabled,
inference_mode."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")  # a decorated function's parameters
_R = TypeVar("_R")  # and its result

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


class _State(threading.local):
    """Per-thread, as in PyTorch: a no_grad block in one thread leaves the others alone."""

    enabled = True
    inference = False


_state = _State()


def is_grad_enabled() -> bool:
    """Whether gradient recording is on (``no_grad`` and ``inference_mode`` turn it off)."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active."""
    return _state.inference


class _GradMode:
    """Base for the grad-mode context managers; each also works as a decorator."""

    _mode: bool = True

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(_state.enabled)
        _state.enabled = self._mode

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        _state.enabled = self._prev.pop()

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with self._fresh():
                return fn(*args, **kwargs)

        return wrapper

    def _fresh(self) -> _GradMode:
        """A new manager of the same mode: each decorated call enters its own."""
        return type(self)()


class no_grad(_GradMode):  # noqa: N801
    """Disable graph recording (context manager or decorator)."""

    _mode = False


class enable_grad(_GradMode):  # noqa: N801
    """Enable graph recording inside a ``no_grad`` block."""

    _mode = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Set recording on or off; takes effect at once, also usable as a context manager."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._mode = bool(mode)
        self._prev.append(_state.enabled)
        _state.enabled = self._mode

    def __enter__(self) -> None:
        pass

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        _state.enabled = self._prev.pop()
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class inference_mode(_GradMode):  # noqa: N801
    """``torch.inference_mode``: no graph recording inside (as ``no_grad``), and
    ``is_inference_mode_enabled()`` is True; ``inference_mode(False)`` records again. A context
    manager or a decorator, with or without the call (``@inference_mode``).

    Lucid marks no tensor as an inference tensor: tensors made inside can be used with autograd
    afterwards (PyTorch refuses that; code written for PyTorch never does it).
    """

    def __new__(cls, mode: Any = True) -> Any:  # noqa: D102
        if callable(mode) and not isinstance(mode, bool):  # @inference_mode without ()
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = bool(mode)
        self._mode = not self.mode
        self._prev_inference: list[bool] = []

    def __enter__(self) -> None:
        super().__enter__()
        self._prev_inference.append(_state.inference)
        _state.inference = self.mode

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        _state.inference = self._prev_inference.pop()
        super().__exit__(et, ev, tb)

    def _fresh(self) -> _GradMode:
        return inference_mode(self.mode)
