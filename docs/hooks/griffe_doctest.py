"""A griffe extension: ``>>>`` examples in docstrings become fenced ``pycon`` code blocks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).parent))
from api import fence_doctests  # noqa: E402


class DoctestFences(griffe.Extension):
    """Fence the doctest examples of every object's docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
