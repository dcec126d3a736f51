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

import sys
import types
from typing import Any

import lucid


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


_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]  # the getset behind module.__dict__


class _ForwardingModule(types.ModuleType):
    """This module's type: reading its ``__dict__`` (``vars(models)``, ``models.__dict__``, as
    pytorch/examples' imagenet script lists the builders) first copies ``lucid.models``' public
    names into it, so the names are found as in ``torchvision.models.__dict__``."""

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        namespace: dict[str, Any] = _MODULE_DICT.__get__(self)
        if "_forwarded" not in namespace:
            m = getattr(lucid, "models", None)  # without lucid-models: the names stay lazy
            if m is not None:
                namespace.update({n: getattr(m, n) for n in dir(m) if not n.startswith("_")})
                namespace["_forwarded"] = True
        return namespace


sys.modules[__name__].__class__ = _ForwardingModule
