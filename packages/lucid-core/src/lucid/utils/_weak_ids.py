"""A map keyed by objects' identity that drops an entry when its object dies.

``weakref.WeakKeyDictionary`` compares keys with ``==``, which a Tensor answers elementwise;
this keys by ``id`` and checks the weak reference, so any weakly referable object works as a
key (``lucid.jit``'s scripted callables, ``lucid._dynamo``'s shape hints)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

V = TypeVar("V")

__all__ = ["WeakIdMap"]


class WeakIdMap(Generic[V]):
    """``{object: value}`` by identity; an entry goes when its object is collected (an object
    that cannot be weakly referenced is kept by id for good)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any] | None, V]] = {}

    def get(self, obj: Any, default: V | None = None) -> V | None:
        """The value kept for ``obj``, else ``default``."""
        found = self._entries.get(id(obj))
        if found is None or (found[0] is not None and found[0]() is not obj):
            return default
        return found[1]

    def setdefault(self, obj: Any, make: Callable[[], V]) -> V:
        """The value kept for ``obj``, made by ``make()`` and kept if there is none."""
        key = id(obj)
        found = self._entries.get(key)
        if found is not None and (found[0] is None or found[0]() is obj):
            return found[1]
        value = make()
        try:
            ref: weakref.ref[Any] | None = weakref.ref(obj, lambda _: self._entries.pop(key, None))
        except TypeError:  # not weakly referable (a builtin)
            ref = None
        self._entries[key] = (ref, value)
        return value

    def __contains__(self, obj: Any) -> bool:
        return self.get(obj) is not None

    def __len__(self) -> int:
        return len(self._entries)
