"""Modules of lucid-data whose names live in lucid-models (``lucid.data.models``): a module
``__getattr__`` reaches them on first use, since lucid-data does
not import lucid-models (lucid-models depends on lucid-data). ``forward_dict`` makes the
module's ``__dict__`` (``vars(module)``) hold them as well once read, as torchvision's modules
do: pytorch/examples' imagenet script lists its ``--arch`` choices from
``torchvision.models.__dict__``.

Not used for ``lucid.data.ops``, whose layers live in lucid-models too: the API reference reads
that module with griffe's inspector, which takes a module of another class for an alias (its
functions came out as cyclic aliases), and its page is built from it."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]  # the getset behind module.__dict__


class _ForwardingModule(types.ModuleType):
    """A module whose ``__dict__``, when read, first takes the names ``__forwarded_names__()``
    gives (nothing where lucid-models is not installed: they stay reachable, and failing with
    their message, through the module's ``__getattr__``)."""

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        namespace: dict[str, Any] = _MODULE_DICT.__get__(self)
        if "__forwarded__" not in namespace:
            names = namespace["__forwarded_names__"]()
            if names is not None:
                for name, value in names.items():
                    namespace.setdefault(name, value)
                namespace["__forwarded__"] = True
        return namespace


def forward_dict(module_name: str, names: Callable[[], dict[str, Any] | None]) -> None:
    """Make module ``module_name``'s ``__dict__`` take ``names()`` when first read."""
    module = sys.modules[module_name]
    vars(module)["__forwarded_names__"] = names  # dunder: listings skip it
    module.__class__ = _ForwardingModule
