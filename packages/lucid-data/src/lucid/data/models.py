"""``lucid.data.models``: torchvision's ``torchvision.models`` path to ``lucid.models``.

Programs reach models through torchvision (``torchvision.models.resnet18(...)``); with lucid
that is ``lucid.data.models.resnet18(...)``, which is ``lucid.models.resnet18``. lucid-data
does not import lucid-models (lucid-models depends on lucid-data): each name is looked up on
``lucid.models``, lucid's lazy sibling attribute, on first use, and where lucid-models is not
installed the error says to install it.

Example:
    >>> import lucid.data.models as models
    >>> models.resnet18 is lucid.models.resnet18
    True
"""

from __future__ import annotations

from typing import Any

import lucid
from lucid.data import _forwarding


def __lucid_models__() -> Any:
    try:
        return getattr(lucid, "models")  # noqa: B009 - lucid's lazy sibling, imported on use
    except AttributeError as e:
        raise AttributeError(
            f"lucid.data.models is lucid.models (torchvision.models' path), and lucid.models "
            f"is not available: {e}"
        ) from None


def __getattr__(name: str) -> Any:
    """``lucid.models.<name>`` (lucid-models imported on first use)."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(__lucid_models__(), name)


def __dir__() -> list[str]:
    """The public names of ``lucid.models``."""
    return sorted(n for n in dir(__lucid_models__()) if not n.startswith("_"))


def __public_names__() -> dict[str, Any] | None:
    m = getattr(lucid, "models", None)  # without lucid-models: the names stay lazy
    return None if m is None else {n: getattr(m, n) for n in dir(m) if not n.startswith("_")}


_forwarding.forward_dict(__name__, __public_names__)
