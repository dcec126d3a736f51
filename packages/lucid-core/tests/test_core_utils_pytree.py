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


# A dict subclass registered as a node, as Hugging Face transformers registers its ModelOutput
# (an OrderedDict subclass) when each output class is defined.
def _output_class(base: type) -> type:
    class Output(base):  # type: ignore[misc, valid-type]
        pass

    return Output


def _register(module: Any, cls: type) -> None:
    module.register_pytree_node(
        cls,
        lambda d: (list(d.values()), list(d.keys())),
        lambda values, keys: cls(zip(keys, values)),
        serialized_type_name=f"{cls.__module__}.{cls.__name__}",
        flatten_with_keys_fn=module._dict_flatten_with_keys,
    )


def test_register_pytree_node_flattens_and_rebuilds_the_class() -> None:
    Output = _output_class(OrderedDict)
    _register(pytree, Output)
    out = Output(logits=lucid.ones(2), past=(lucid.zeros(1), None))
    leaves, spec = pytree.tree_flatten({"o": out, "k": [3]})
    assert spec.num_leaves == 4 and leaves[0] is out["logits"] and leaves[3] == 3
    rebuilt = pytree.tree_unflatten([None if x is None else x * 2 for x in leaves], spec)
    assert type(rebuilt["o"]) is Output and list(rebuilt["o"]) == ["logits", "past"]
    assert rebuilt["o"]["logits"].tolist() == [2.0, 2.0] and rebuilt["o"]["past"][1] is None
    mapped = pytree.tree_map(lambda x: x, out)
    assert type(mapped) is Output and mapped["past"][0] is out["past"][0]
    with pytest.raises(ValueError, match="Node context mismatch for custom node type"):
        pytree.tree_map(lambda a, b: a, out, Output(other=1, past=(2, 3)))


def test_register_pytree_node_twice_raises_torchs_error() -> None:
    Output = _output_class(OrderedDict)
    _register(pytree, Output)
    with pytest.raises(ValueError, match=r"is already registered as pytree node\."):
        _register(pytree, Output)
    with pytest.raises(ValueError, match=r"<class 'dict'> is already registered as pytree node\."):
        pytree.register_pytree_node(dict, lambda d: (list(d.values()), list(d)), dict)


def test_mapping_key_and_dict_flatten_with_keys() -> None:
    pairs, keys = pytree._dict_flatten_with_keys({"a": 1, "b": 2})
    assert keys == ["a", "b"] and [v for _, v in pairs] == [1, 2]
    assert str(pairs[0][0]) == "['a']" and pairs[1][0].get({"b": 7}) == 7
    assert pytree.MappingKey("a") == pytree.MappingKey("a")


@pytest.mark.parity
def test_registered_node_matches_torch() -> None:
    torch_pytree = pytest.importorskip("torch.utils._pytree")
    mine_cls, theirs_cls = _output_class(OrderedDict), _output_class(OrderedDict)
    _register(pytree, mine_cls)
    _register(torch_pytree, theirs_cls)
    tree = lambda cls: [cls(a=1, b=(2, {"c": 3})), cls(d=None)]  # noqa: E731
    mine, theirs = pytree.tree_flatten(tree(mine_cls)), torch_pytree.tree_flatten(tree(theirs_cls))
    assert mine[0] == theirs[0] and mine[1].num_leaves == theirs[1].num_leaves
    add = lambda x: None if x is None else x + 10  # noqa: E731
    got = pytree.tree_map(add, tree(mine_cls))
    want = torch_pytree.tree_map(add, tree(theirs_cls))
    assert [list(o.items()) for o in got] == [list(o.items()) for o in want]
    assert str(pytree.MappingKey("k")) == str(torch_pytree.MappingKey("k"))


@pytest.mark.parity
def test_dict_flatten_and_unflatten_match_torch() -> None:
    # diffusers' BaseOutput registers itself with torch's _dict_flatten/_dict_unflatten
    tpytree = pytest.importorskip("torch.utils._pytree")
    d = {"b": 1, "a": [2, 3]}
    assert pytree._dict_flatten(d) == tpytree._dict_flatten(d)
    values, context = pytree._dict_flatten(d)
    assert pytree._dict_unflatten(values, context) == tpytree._dict_unflatten(values, context)
    with pytest.raises(ValueError):
        pytree._dict_unflatten([1], ["a", "b"])


def test_dict_subclass_registered_with_dict_helpers_round_trips() -> None:
    class Out(OrderedDict):
        pass

    pytree.register_pytree_node(
        Out, pytree._dict_flatten, lambda v, c: Out(**pytree._dict_unflatten(v, c))
    )
    leaves, spec = pytree.tree_flatten(Out(x=lucid.ones(1), y=(2, 3)))
    assert len(leaves) == 3
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert isinstance(rebuilt, Out) and list(rebuilt) == ["x", "y"] and rebuilt["y"] == (2, 3)
