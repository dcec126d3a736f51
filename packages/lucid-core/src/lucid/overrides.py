"""``torch.overrides``' names, for a framework without ``__torch_function__`` dispatch.

Lucid's functions never hand a call to an argument's ``__torch_function__`` (docs/
differences.md), so here ``has_torch_function`` is always False, the function lists are empty,
``wrap_torch_function`` gives the function back, and a :class:`TorchFunctionMode` can be
subclassed (diffusers' ``hooks/layer_skip.py`` does at import) but not entered: entering one
raises, where torch would route every call through it, rather than let it see nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lucid._tensor import Tensor

__all__ = [
    "BaseTorchFunctionMode",
    "TorchFunctionMode",
    "enable_reentrant_dispatch",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
    "wrap_torch_function",
]

_NO_DISPATCH = (
    "lucid has no __torch_function__ dispatch: its functions never call an argument's "
    "__torch_function__"
)


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether a call must go through an argument's ``__torch_function__``: never, in lucid."""
    return False


def has_torch_function_unary(obj: Any) -> bool:
    """``has_torch_function((obj,))``: False."""
    return False


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``: False."""
    return False


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any],
                          *args: Any, **kwargs: Any) -> Any:  # fmt: skip
    """torch's dispatch to ``__torch_function__``: lucid has none (``has_torch_function`` never
    asks for it), so this raises."""
    raise RuntimeError(_NO_DISPATCH)


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a Tensor or defines ``__torch_function__`` (torch's rule)."""
    return isinstance(inp, Tensor) or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is one of Tensor's methods or properties (by name and identity)."""
    name = getattr(func, "__name__", None)
    return name is not None and getattr(Tensor, name, None) is func


def get_ignored_functions() -> set[Callable[..., Any]]:
    """The functions that cannot be overridden: all of lucid's (no dispatch), as an empty set of
    exceptions to a rule that does not apply."""
    return set()


def get_overridable_functions() -> dict[Any, list[Callable[..., Any]]]:
    """The functions ``__torch_function__`` could override: none in lucid."""
    return {}


def get_testing_overrides() -> dict[Callable[..., Any], Callable[..., Any]]:
    """Dummy overrides of the overridable functions: none in lucid."""
    return {}


def get_default_nowrap_functions() -> set[Callable[..., Any]]:
    """The functions ``Tensor.__torch_function__`` does not wrap: none in lucid."""
    return set()


def wrap_torch_function(dispatcher: Callable[..., Iterable[Any]]) -> Callable[[Any], Any]:
    """A decorator that would route the function through ``__torch_function__``: here it gives
    the function back unchanged."""

    def wrap(func: Any) -> Any:
        return func

    return wrap


def resolve_name(f: Any) -> str | None:
    """torch's qualified name of an overridable function: None (lucid has none)."""
    return None


@contextlib.contextmanager
def enable_reentrant_dispatch() -> Iterator[None]:
    """torch's context for re-entering its dispatcher: nothing to enable in lucid."""
    yield


class TorchFunctionMode:
    """torch's base of a mode that sees every torch call through ``__torch_function__``.
    Subclasses define; entering one raises (lucid has no such dispatch, and a mode that saw
    no calls would be silently wrong)."""

    inner: TorchFunctionMode | None = None

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        raise RuntimeError(f"{type(self).__name__} cannot be entered: {_NO_DISPATCH}")

    def __exit__(self, *exc: object) -> None:
        return None

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        """torch's deprecated push: as entering, it raises."""
        raise RuntimeError(f"{cls.__name__} cannot be pushed: {_NO_DISPATCH}")


class BaseTorchFunctionMode(TorchFunctionMode):
    """A :class:`TorchFunctionMode` whose ``__torch_function__`` calls the function as is."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))
