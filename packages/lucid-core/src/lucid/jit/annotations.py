"""``lucid.jit.annotations`` (``torch.jit.annotations``): the typing names TorchScript model
code imports from it (``from torch.jit.annotations import List, Tuple``), torch's
``BroadcastingList1``-``3`` (subscripting gives ``None``, as in torch) and its container
predicates. TorchScript's own type objects (``TensorType``, ``ListType``...) are not here:
lucid has no TorchScript compiler.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Dict, List, Optional, Tuple, Union, get_args, get_origin  # noqa: UP035

__all__ = [
    "Any",
    "BroadcastingList1",
    "BroadcastingList2",
    "BroadcastingList3",
    "Dict",
    "List",
    "Optional",
    "Tuple",
    "Union",
    "is_dict",
    "is_list",
    "is_optional",
    "is_tuple",
    "is_union",
]


class _BroadcastingListCls:
    def __getitem__(self, types: Any) -> None:
        return None


BroadcastingList1 = _BroadcastingListCls()
BroadcastingList2 = BroadcastingList1
BroadcastingList3 = BroadcastingList1


def _missing(target_type: str) -> None:
    if target_type.endswith("ict"):
        raise RuntimeError(
            f"Attempted to use {target_type} without "
            "contained types. Please add contained type, e.g. "
            f"{target_type}[int, int]"
        )
    raise RuntimeError(
        f"Attempted to use {target_type} without a "
        "contained type. Please add a contained type, e.g. "
        f"{target_type}[int]"
    )


def _is_container(ann: Any, bare: Any, name: str, origin: type) -> bool:
    if ann is bare:
        _missing(name)
    if not hasattr(ann, "__module__"):
        return False
    return ann.__module__ in ("builtins", "typing") and get_origin(ann) is origin


def is_tuple(ann: Any) -> bool:
    """Whether ``ann`` is ``Tuple[...]``/``tuple[...]`` (bare ``typing.Tuple`` raises)."""
    return _is_container(ann, typing.Tuple, "Tuple", tuple)  # noqa: UP006


def is_list(ann: Any) -> bool:
    """Whether ``ann`` is ``List[...]``/``list[...]`` (bare ``typing.List`` raises)."""
    return _is_container(ann, typing.List, "List", list)  # noqa: UP006


def is_dict(ann: Any) -> bool:
    """Whether ``ann`` is ``Dict[...]``/``dict[...]`` (bare ``typing.Dict`` raises)."""
    return _is_container(ann, typing.Dict, "Dict", dict)  # noqa: UP006


def is_union(ann: Any) -> bool:
    """Whether ``ann`` is ``Union[...]`` or ``A | B`` (bare ``typing.Union`` raises)."""
    if ann is Union:
        _missing("Union")
    return isinstance(ann, types.UnionType) or (
        hasattr(ann, "__module__") and ann.__module__ == "typing" and get_origin(ann) is Union
    )


def is_optional(ann: Any) -> bool:
    """Whether ``ann`` is ``Optional[X]`` or a two-member union with ``None``."""
    if ann is Optional:
        _missing("Optional")
    as_optional = (
        hasattr(ann, "__module__") and ann.__module__ == "typing" and get_origin(ann) is Optional
    )
    args = get_args(ann)
    return as_optional or (
        is_union(ann) and len(args) == 2 and (None in args or type(None) in args)
    )
