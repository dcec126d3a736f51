"""Utilities shared by lucid's packages (``torch.utils``).

This package is extendable: other distributions ship their own ``lucid.utils.<x>`` (lucid-data
ships ``lucid.utils.data``). Nothing here imports those optional subpackages.
"""

from __future__ import annotations

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

from lucid.utils import hooks, to_args  # noqa: E402

__all__ = ["hooks", "to_args"]
