"""``torch.utils._pytree`` (private in torch, imported by programs all the same): nested tuples,
lists, dicts and namedtuples of leaves flattened to a list and rebuilt.

>>> from lucid.utils._pytree import tree_flatten, tree_unflatten
>>> leaves, spec = tree_flatten({"a": [1, (2, 3)]})
>>> leaves, tree_unflatten([x * 10 for x in leaves], spec)
([1, 2, 3], {'a': [10, (20, 30)]})
"""

from __future__ import annotations

from lucid.func._pytree import (
    MappingKey,
    TreeSpec,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from lucid.func._pytree import _dict_flatten as _dict_flatten
from lucid.func._pytree import _dict_flatten_with_keys as _dict_flatten_with_keys
from lucid.func._pytree import _dict_unflatten as _dict_unflatten

__all__ = [
    "MappingKey",
    "TreeSpec",
    "register_pytree_node",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]
