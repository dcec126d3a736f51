"""Hook handles (``torch.utils.hooks``): what every ``register_*_hook`` returns."""

from __future__ import annotations

import itertools
from collections.abc import MutableMapping
from typing import Any

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes one hook from the registry it was added to (``torch.utils.hooks.RemovableHandle``).

    The registry is a dict from handle ``id`` to hook; ids are unique across all handles, so
    one registry may hold hooks from many handles, in registration order.

    >>> hooks = {}
    >>> handle = RemovableHandle(hooks)
    >>> hooks[handle.id] = print
    >>> with handle:
    ...     len(hooks)
    1
    >>> len(hooks)
    0
    """

    _ids = itertools.count()

    def __init__(self, hooks_dict: MutableMapping[int, Any]) -> None:
        self._hooks_dict = hooks_dict
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook; removing it twice does nothing."""
        self._hooks_dict.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
