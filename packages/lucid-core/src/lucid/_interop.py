"""Glue that lucid installs for other libraries once they are imported (einops's backend).

``lucid._einops_backend`` needs einops, which lucid does not depend on; it must exist as soon
as a program has imported both. If einops is already imported, it is loaded now; otherwise a
finder on ``sys.meta_path`` waits for ``import einops`` and loads it right after einops's own
``__init__`` has run, then removes itself.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_BACKEND = "lucid._einops_backend"


def _load_backend() -> None:
    importlib.import_module("lucid._einops_backend")


class _Loader(importlib.abc.Loader):
    """Runs einops's own loader, then loads lucid's backend."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        _load_backend()


class _EinopsFinder(importlib.abc.MetaPathFinder):
    """Finds ``einops`` with the other finders and wraps its loader (once)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "einops":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        for finder in sys.meta_path:
            if spec is not None:
                break
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def install_einops_backend() -> None:
    """Make einops know lucid tensors: now if einops is imported, else when it is."""
    if "einops" in sys.modules:
        _load_backend()
    elif not any(isinstance(f, _EinopsFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _EinopsFinder())
