"""``lucid.jit.annotations`` as ``torch.jit.annotations`` (timm's densenet imports ``List``
from it): the typing names, ``BroadcastingList1``-``3`` and the container predicates."""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Dict, List, Optional, Tuple, Union  # noqa: UP035

import pytest

from lucid.jit import annotations as ann

_CASES = [
    List[int],  # noqa: UP006
    list[int],
    Tuple[int, str],  # noqa: UP006
    tuple[int],
    Dict[str, int],  # noqa: UP006
    dict[str, int],
    Optional[int],  # noqa: UP045
    Union[int, None],  # noqa: UP007
    Union[int, str],  # noqa: UP007
    int | None,
    int | str,
    int,
    "List[int]",
]


def test_typing_names_are_typings() -> None:
    for name in ("Any", "List", "Tuple", "Dict", "Optional", "Union"):
        assert getattr(ann, name) is getattr(typing, name)
    assert ann.BroadcastingList2[int] is None and ann.BroadcastingList3[float] is None


def test_reached_as_an_attribute_after_import_lucid() -> None:
    code = "import lucid; print(lucid.jit.annotations.List[int])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "typing.List[int]"


@pytest.mark.parity
def test_predicates_match_torch() -> None:
    torch_ann = pytest.importorskip("torch.jit.annotations")
    for pred in ("is_tuple", "is_list", "is_dict", "is_optional", "is_union"):
        for case in _CASES:
            assert getattr(ann, pred)(case) == getattr(torch_ann, pred)(case), (pred, case)


@pytest.mark.parity
@pytest.mark.parametrize(
    ("pred", "bare"),
    [
        ("is_tuple", Tuple),  # noqa: UP006
        ("is_list", List),  # noqa: UP006
        ("is_dict", Dict),  # noqa: UP006
        ("is_optional", Optional),
        ("is_union", Union),
    ],
)
def test_bare_containers_raise_torchs_error(pred: str, bare: object) -> None:
    torch_ann = pytest.importorskip("torch.jit.annotations")
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch_ann, pred)(bare)
    with pytest.raises(RuntimeError) as ours:
        getattr(ann, pred)(bare)
    assert str(ours.value) == str(theirs.value)
