"""PyTorch's legacy autograd names: ``Variable``, ``variable``, and the engine switches
``set_multithreading_enabled`` and ``enforce_grad_layout_policy``.

Since PyTorch 0.4 a Variable is a Tensor: ``Variable(t)`` returns a new leaf sharing ``t``'s
data (``t.detach()``, with ``requires_grad`` as given) and ``isinstance(x, Variable)`` holds for
every tensor; code from before 0.4 (many tutorials) still writes it. ``variable(...)`` raises
as torch's does. Lucid's engine runs backward on the calling thread and always gives a leaf
the gradient layout of its data, so the two switches only record their mode.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any, NoReturn, ParamSpec, TypeVar

from lucid._creation import empty
from lucid._tensor import Tensor

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["Variable", "enforce_grad_layout_policy", "set_multithreading_enabled", "variable"]


class _VariableMeta(type):
    """``isinstance(x, Variable)`` is ``isinstance(x, Tensor)``, as in PyTorch."""

    def __instancecheck__(cls, other: object) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: ``data`` as a new leaf.

    The result is a Tensor sharing ``data``'s memory, detached from its graph, recording
    gradients if ``requires_grad``; with no data, an empty float tensor. ``volatile`` was
    removed in PyTorch 0.4: ``volatile=True`` warns, as there, and has no effect.
    """

    def __new__(  # type: ignore[misc]
        cls, data: Any = None, requires_grad: bool = False, volatile: bool = False
    ) -> Tensor:
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")  # fmt: skip
        out: Tensor = data.detach()
        out.requires_grad = bool(requires_grad)
        return out


def variable(*args: Any, **kwargs: Any) -> NoReturn:
    """Removed in PyTorch: raises, pointing to ``tensor(...)``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


class _Switches(threading.local):
    multithreading = True
    grad_layout_policy = True


_switches = _Switches()


class _Switch:
    """A mode set at once (a function call) and restored on exit (a context manager)."""

    _field = ""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = getattr(_switches, self._field)
        setattr(_switches, self._field, self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        setattr(_switches, self._field, self._prev)

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        setattr(_switches, self._field, self._prev)  # as a decorator it applies per call only
        mode, kind = self.mode, type(self)

        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with kind(mode):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> _Switch:
        """A new switch of the same mode (torch's context managers have it)."""
        return type(self)(self.mode)


class set_multithreading_enabled(_Switch):  # noqa: N801
    """``torch.autograd.set_multithreading_enabled(mode)``: lucid's backward always runs on the
    calling thread, so this records the mode and changes nothing else."""

    _field = "multithreading"


class enforce_grad_layout_policy(_Switch):  # noqa: N801
    """``torch.autograd.enforce_grad_layout_policy(enable)``: lucid always gives a gradient its
    parameter's layout, so this records the mode and changes nothing else."""

    _field = "grad_layout_policy"

    def __init__(self, enable: bool = True) -> None:
        super().__init__(enable)
