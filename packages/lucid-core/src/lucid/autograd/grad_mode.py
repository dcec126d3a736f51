"""Whether operations record the autograd graph: no_grad, enable_grad, set_grad_enabled."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    """Per-thread, as in PyTorch: a no_grad block in one thread leaves the others alone."""

    enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


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

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


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

    def __call__(self, fn: F) -> F:
        _state.enabled = self._prev.pop()
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
