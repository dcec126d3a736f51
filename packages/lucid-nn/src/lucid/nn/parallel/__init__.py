"""``lucid.nn.parallel``: PyTorch's data-parallel wrappers.

``DataParallel`` runs its module on the one device it has (lucid drives one device per
process). ``DistributedDataParallel`` comes with the lucid-distributed package (as does
``lucid.nn.SyncBatchNorm``); until it is installed, importing it raises an ImportError that says
so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lucid.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]

# Name -> (module that provides it, distribution that ships that module).
_FROM_OTHER_PACKAGES = {"DistributedDataParallel": ("lucid.distributed", "lucid-distributed")}


def from_other_package(owner: str, name: str, table: dict[str, tuple[str, str]]) -> Any:
    """``owner.name`` where another distribution provides it (``table``: name -> (module,
    distribution)): imported now, or an ImportError that says what to install. A name not in
    ``table`` is an AttributeError, so ``hasattr`` keeps working."""
    if name not in table:
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")
    module, dist = table[name]
    try:
        provider = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        raise ImportError(
            f"{owner}.{name} comes with the {dist} distribution, which is not installed: "
            f"pip install {dist}",
            name=module,
        ) from None
    return getattr(provider, name)


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        return from_other_package("lucid.nn.parallel", name, _FROM_OTHER_PACKAGES)
