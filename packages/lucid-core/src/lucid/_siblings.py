"""The subpackages other distributions ship, reached lazily from ``import lucid``.

``lucid.nn``, ``lucid.optim``, ``lucid.utils.data`` ... come from their own distributions.
``import lucid`` imports none of them: the first attribute access imports the subpackage (as
``import torch`` makes ``torch.optim`` reachable), so lucid-core neither imports nor depends on
them. Where one is not installed, an import says which distribution to install: a finder
appended at the end of ``sys.meta_path`` answers only for these names, and only after every
other finder missed them, so installing the package later just works.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import Any

# Module -> the distribution that ships it.
DISTRIBUTIONS = {
    "lucid.nn": "lucid-nn",
    "lucid.functional": "lucid-nn",  # torch.functional's path (its `F` is lucid.nn.functional)
    "lucid.optim": "lucid-optim",
    "lucid.data": "lucid-data",
    "lucid.utils.data": "lucid-data",
    "lucid.models": "lucid-models",
    "lucid.backends.mlx": "lucid-backend-mlx",
    "lucid.distributed": "lucid-distributed",
    "lucid.onnx": "lucid-onnx",
}


def missing_message(module: str) -> str:
    dist = DISTRIBUTIONS[module]
    return f"{module} is shipped by {dist}, which is not installed: pip install {dist}"


class MissingSiblingFinder:
    """The last finder on ``sys.meta_path``: a known sibling nobody found is not installed."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: Any = None
    ) -> ModuleSpec | None:
        if fullname in DISTRIBUTIONS:
            raise ModuleNotFoundError(missing_message(fullname), name=fullname)
        return None


def install_finder() -> None:
    if not any(f is MissingSiblingFinder for f in sys.meta_path):
        sys.meta_path.append(MissingSiblingFinder)


def is_installed(module: str) -> bool:
    """Whether ``module`` imports (importing it if needed); False only when it is absent."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise  # the sibling is there but one of its own imports is missing
        return False
    return True


# torch's top-level names of nn.functional ops whose arguments are F's (``torch.conv2d``,
# ``torch.dropout(x, p, train)``, ...): ``lucid.<name>`` is ``lucid.nn.functional.<name>``,
# reached on first access as ``lucid.nn`` itself. Those whose top-level form differs (the
# losses' integer ``reduction``, batch_norm's argument order, embedding's) are not here.
FUNCTIONAL_NAMES = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu", "channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "cosine_similarity",
    "hardshrink", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
    "max_pool3d", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu",
    "rms_norm", "selu", "threshold",
})  # fmt: skip


def sibling_attribute(package: str, name: str) -> Any:
    """``package.name`` for a sibling subpackage (imported now), or an AttributeError that says
    what to install. The error is an AttributeError so that ``hasattr`` and ``getattr(m, n,
    default)`` keep working; ``import package.name`` raises ModuleNotFoundError instead.
    ``lucid.<name>`` of :data:`FUNCTIONAL_NAMES` is that function of ``lucid.nn.functional``."""
    if package == "lucid" and name in FUNCTIONAL_NAMES:
        return getattr(sibling_attribute("lucid", "nn").functional, name)
    module = f"{package}.{name}"
    if module not in DISTRIBUTIONS:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    if is_installed(module):
        return sys.modules[module]
    if module in STAND_INS:
        return STAND_INS[module]
    raise AttributeError(f"module {package!r} has no attribute {name!r}: {missing_message(module)}")


class _DistributedStandIn(types.ModuleType):
    """``lucid.distributed`` while lucid-distributed is absent: it answers ``is_available()``
    and ``is_initialized()`` truthfully (False) and names the package for anything else."""

    def __init__(self) -> None:
        super().__init__("lucid.distributed", "Stand-in: lucid-distributed is not installed.")

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_initialized() -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"lucid.distributed.{name} is not available: {missing_message('lucid.distributed')}"
        )


STAND_INS: dict[str, types.ModuleType] = {"lucid.distributed": _DistributedStandIn()}
