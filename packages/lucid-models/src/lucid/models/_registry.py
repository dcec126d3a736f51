"""The model registry: ``create_model(name, **kwargs)``, ``list_models(pattern)``,
``register_model``."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_REGISTRY: dict[str, Callable[..., Any]] = {}


def register_model(fn: F | None = None, *, name: str | None = None) -> Any:
    """Register a model factory under its function name (or ``name``); usable as a decorator.

    >>> @register_model
    ... def tiny_mlp(num_classes: int = 10) -> nn.Module: ...
    """

    def deco(f: F) -> F:
        key = name or f.__name__
        if key in _REGISTRY and _REGISTRY[key] is not f:
            raise ValueError(f"a model named {key!r} is already registered")
        _REGISTRY[key] = f
        return f

    return deco(fn) if fn is not None else deco


def list_models(pattern: str | None = None) -> list[str]:
    """Registered model names, sorted; ``pattern`` is a shell-style wildcard (``"resnet*"``)."""
    names = sorted(_REGISTRY)
    if pattern is None:
        return names
    return [n for n in names if fnmatch.fnmatch(n, pattern)]


def create_model(name: str, **kwargs: Any) -> Any:
    """Build a registered model: ``create_model("resnet18", num_classes=10)``."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        close = [n for n in _REGISTRY if n.startswith(name[:3])]
        hint = f"; did you mean one of {close}?" if close else ""
        raise ValueError(f"unknown model {name!r}{hint} (see lucid.models.list_models())") from None
    return factory(**kwargs)


def get_model_factory(name: str) -> Callable[..., Any]:
    """The registered function that builds the model ``name``."""
    if name not in _REGISTRY:
        create_model(name)
    return _REGISTRY[name]
