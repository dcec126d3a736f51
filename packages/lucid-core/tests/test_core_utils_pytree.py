"""``lucid.utils._pytree`` as ``torch.utils._pytree`` (vit-pytorch's AcceptVideoWrapper imports
``tree_flatten``/``tree_unflatten`` from it)."""

from __future__ import annotations

import subprocess
import sys
from collections import OrderedDict, namedtuple
from typing import Any

import pytest

import lucid
from lucid.utils import _pytree as pytree

Pair = namedtuple("Pair", "a b")


def _tree() -> dict[str, Any]:
    return {"x": [1, (2, 3)], "y": Pair(4, {"z": 5}), "o": OrderedDict(q=6), "n": None}


def test_reached_as_an_attribute_after_import_lucid() -> None:
    code = "import lucid; print(lucid.utils._pytree.tree_leaves([1, (2,)]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[1, 2]"


def test_flatten_unflatten_round_trip_with_tensors() -> None:
    t = lucid.ones(2)
    leaves, spec = pytree.tree_flatten((t, [t * 2, {"k": t * 3}]))
    assert len(leaves) == spec.num_leaves == 3 and leaves[0] is t
    rebuilt = pytree.tree_unflatten([x + 1 for x in leaves], spec)
    assert isinstance(rebuilt, tuple) and isinstance(rebuilt[1][1], dict)
    assert rebuilt[1][1]["k"].tolist() == [4.0, 4.0]
    assert pytree.tree_structure(rebuilt) == spec


def test_tree_map_over_several_trees_and_is_leaf() -> None:
    assert pytree.tree_map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert pytree.tree_map(lambda a, b: (a, b), [1, 2], [[5], 6]) == [(1, [5]), (2, 6)]
    pair = lambda x: isinstance(x, list) and len(x) == 2  # noqa: E731
    assert pytree.tree_leaves([1, [2, 3], [4]], is_leaf=pair) == [1, [2, 3], 4]


def test_mismatches_raise_torchs_errors() -> None:
    _, spec = pytree.tree_flatten([1, (2, 3)])
    with pytest.raises(ValueError, match="`leaves` has length 2 but the spec refers to a pytree "
                                         "that holds 3 items"):  # fmt: skip
        pytree.tree_unflatten([1, 2], spec)
    with pytest.raises(ValueError, match=r"Node arity mismatch; expected 2, but got 3\."):
        pytree.tree_map(lambda a, b: a, [1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="Node type mismatch; expected <class 'list'>, but got "
                                         "<class 'tuple'>"):  # fmt: skip
        pytree.tree_map(lambda a, b: a, [1, 2], (1, 2))
    with pytest.raises(ValueError, match=r"Node keys mismatch; missing key\(s\): \{'a'\}; "
                                         r"extra key\(s\): \{'b'\}\."):  # fmt: skip
        pytree.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})


@pytest.mark.parity
def test_matches_torch() -> None:
    torch_pytree = pytest.importorskip("torch.utils._pytree")
    mine, theirs = pytree.tree_flatten(_tree()), torch_pytree.tree_flatten(_tree())
    assert mine[0] == theirs[0] and mine[1].num_leaves == theirs[1].num_leaves
    doubled = [None if x is None else x * 2 for x in mine[0]]
    assert pytree.tree_unflatten(doubled, mine[1]) == torch_pytree.tree_unflatten(
        doubled, theirs[1]
    )
    double = lambda x: None if x is None else x * 2  # noqa: E731
    assert pytree.tree_map(double, _tree()) == torch_pytree.tree_map(double, _tree())
    is_pair = lambda x: isinstance(x, Pair)  # noqa: E731
    assert pytree.tree_leaves(_tree(), is_leaf=is_pair) == torch_pytree.tree_leaves(
        _tree(), is_leaf=is_pair
    )
