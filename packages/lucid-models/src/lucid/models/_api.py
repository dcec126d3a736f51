"""torchvision's weights API (``torchvision.models._api``): :class:`Weights`,
:class:`WeightsEnum`, :func:`get_weight`, and where a checkpoint is looked for.

Every builder of lucid.models that torchvision has takes torchvision's ``weights=`` (a member
of its enum, e.g. ``ResNet18_Weights.IMAGENET1K_V1``, its name as a string, ``"DEFAULT"``) and
``progress=``. The enums are torchvision's own, generated from its source
(``tools/gen_tv_weights.py`` writes ``_tv_weights.py``): the same urls, transforms and meta
(categories, ``num_params``, recipe, ``_metrics``, ``_docs``, ``min_size`` ...).

Lucid downloads nothing unasked: :meth:`WeightsEnum.get_state_dict` reads the checkpoint
through ``lucid.hub.load_state_dict_from_url`` from torch hub's cache,
``$TORCH_HOME/hub/checkpoints/<file name of the url>`` (``TORCH_HOME`` defaults to
``$XDG_CACHE_HOME/torch``, i.e. ``~/.cache/torch``), where a torchvision that ran on this
machine left it, or from lucid's own ``$LUCID_HOME/hub/checkpoints`` (``~/.cache/lucid``). The
file is read by ``lucid.load(weights_only=True)``: torch's pickles are rebuilt by an allowlist
unpickler, never run. Without the file the error names it, where to put it, and the
``lucid.hub.download_url_to_file`` call that fetches it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any

from lucid.hub import checkpoint_dirs, load_state_dict_from_url

__all__ = ["Weights", "WeightsEnum", "checkpoint_dirs", "get_weight", "load_state_dict_from_url"]


@dataclass
class Weights:
    """What a set of pretrained weights carries (torchvision's ``Weights``).

    Attributes:
        url: where torchvision downloads the checkpoint; its file name is what lucid looks for
            in the checkpoint folders (:func:`checkpoint_dirs`).
        transforms: builds the evaluation preset (``lucid.data.transforms.presets``).
        meta: categories, ``num_params``, ``min_size``, recipe, ``_metrics``, ``_docs`` ...
    """

    url: str
    transforms: Callable[..., Any]
    meta: dict[str, Any]

    def __eq__(self, other: Any) -> bool:
        # as torchvision's: a deep-copied ``partial`` is not equal to itself, compare its parts
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        a, b = self.transforms, other.transforms
        if isinstance(a, partial) and isinstance(b, partial):
            return a.func == b.func and a.args == b.args and a.keywords == b.keywords
        return bool(a == b)

    __hash__ = None  # type: ignore[assignment]  # a dataclass with __eq__, as torchvision's


class WeightsEnum(Enum):
    """The parent of every weights enum (torchvision's ``WeightsEnum``): each member's value is
    a :class:`Weights`; ``DEFAULT`` names the best one."""

    @classmethod
    def verify(cls, obj: Any) -> Any:
        """``obj`` as a member of this enum: a member, its name (``"IMAGENET1K_V1"``,
        ``"ResNet18_Weights.IMAGENET1K_V1"``, ``"DEFAULT"``) or None."""
        if obj is not None:
            if type(obj) is str:
                key = obj.replace(cls.__name__ + ".", "")
                if key not in cls.__members__:
                    raise KeyError(
                        f"{cls.__name__} has no member {key!r}; its members are "
                        f"{sorted(cls.__members__)}"
                    )
                obj = cls[key]
            elif not isinstance(obj, cls):
                raise TypeError(
                    f"Invalid Weight class provided; expected {cls.__name__} but received "
                    f"{obj.__class__.__name__}."
                )
        return obj

    def get_state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The checkpoint's state dict, read from the checkpoint folders (nothing is
        downloaded); arguments as ``torch.hub.load_state_dict_from_url``'s after the url."""
        return load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self) -> str:
        """The url of the checkpoint."""
        return str(self.value.url)

    @property
    def transforms(self) -> Callable[..., Any]:
        """Builds the evaluation preset: ``weights.transforms()``."""
        return self.value.transforms  # type: ignore[no-any-return]

    @property
    def meta(self) -> dict[str, Any]:
        """The meta data: categories, ``num_params``, ``_metrics`` ..."""
        return self.value.meta  # type: ignore[no-any-return]


# builder name -> its weights enum (filled by _tv_weights.py)
_BUILDER_WEIGHTS: dict[str, type[WeightsEnum]] = {}
_ENUMS: dict[str, type[WeightsEnum]] = {}


def register_weights(builder: str, enum: type[WeightsEnum]) -> None:
    """Record ``enum`` as the weights of the builder registered as ``builder``."""
    _BUILDER_WEIGHTS[builder] = enum
    _ENUMS[enum.__name__] = enum


def weights_of(builder: str) -> type[WeightsEnum] | None:
    """The weights enum of the builder registered as ``builder`` (None if it has none)."""
    return _BUILDER_WEIGHTS.get(builder)


def get_weight(name: str) -> WeightsEnum:
    """The weights enum member of full name ``name``: ``"ResNet50_Weights.IMAGENET1K_V1"``."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    enum = _ENUMS.get(enum_name)
    if enum is None:
        raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                         f"retrieved.")  # fmt: skip
    return enum[value_name]
