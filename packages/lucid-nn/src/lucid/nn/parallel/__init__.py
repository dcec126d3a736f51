"""``lucid.nn.parallel``: PyTorch's data-parallel wrappers.

``DataParallel`` runs its module on the one device it has (lucid drives one device per
process). ``DistributedDataParallel`` comes with the lucid-distributed package; until it is
installed, importing it raises an ImportError that says so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lucid.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]

# Name -> (module that provides it, distribution that ships that module).
_FROM_OTHER_PACKAGES = {"DistributedDataParallel": ("lucid.distributed", "lucid-distributed")}

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name not in _FROM_OTHER_PACKAGES:
            raise AttributeError(f"module 'lucid.nn.parallel' has no attribute {name!r}")
        module, dist = _FROM_OTHER_PACKAGES[name]
        try:
            provider = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            raise ImportError(
                f"lucid.nn.parallel.{name} comes with the {dist} distribution, which is not "
                f"installed: pip install {dist}",
                name=module,
            ) from None
        return getattr(provider, name)
