"""Utilities shared by lucid's packages (``torch.utils``).

This package is extendable: other distributions ship their own ``lucid.utils.<x>`` (lucid-data
ships ``lucid.utils.data``). Nothing here imports those optional subpackages.
"""

from __future__ import annotations

import pkgutil
from typing import TYPE_CHECKING, Any

__path__ = pkgutil.extend_path(__path__, __name__)

from lucid import _siblings
from lucid.utils import files, hooks
from lucid.utils._swap import swap_tensors

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """``lucid.utils.data`` (lucid-data) imported on first access. (``_pytree`` is set by
        ``import lucid``, which imports it once lucid.func has loaded.)"""
        return _siblings.sibling_attribute(__name__, name)


# lucid.utils.to_args sits above Tensor: import it by name
__all__ = ["files", "hooks", "swap_tensors"]
