"""Nested containers of tensors (pytrees) flattened to a list of leaves and rebuilt.

Containers are tuples, lists, dicts and namedtuples, as ``torch.utils._pytree`` treats them;
anything else (a Tensor, a number, None) is a leaf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TreeSpec", "tree_flatten", "tree_map", "tree_unflatten"]


class TreeSpec:
    """The shape of a pytree: its container types and keys, with the leaves left out."""

    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind: str, meta: Any, children: list[TreeSpec]) -> None:
        self.kind, self.meta, self.children = kind, meta, children

    @property
    def num_leaves(self) -> int:
        """How many leaves a tree of this spec holds."""
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.kind, self.meta, self.children) == (other.kind, other.meta, other.children)

    def __hash__(self) -> int:
        return hash((self.kind, len(self.children)))

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        return f"{self.kind}({inner})"


LEAF = TreeSpec("leaf", None, [])


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its spec."""
    leaves: list[Any] = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree: Any, leaves: list[Any]) -> TreeSpec:
    if _is_namedtuple(tree):
        return TreeSpec("namedtuple", type(tree), [_flatten(v, leaves) for v in tree])
    if isinstance(tree, tuple):
        return TreeSpec("tuple", None, [_flatten(v, leaves) for v in tree])
    if isinstance(tree, list):
        return TreeSpec("list", None, [_flatten(v, leaves) for v in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return TreeSpec(
            "dict", (type(tree), tuple(keys)), [_flatten(tree[k], leaves) for k in keys]
        )
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """Rebuild a tree of ``spec`` from ``leaves`` (as many as the spec holds)."""
    it = iter(leaves)
    out = _unflatten(it, spec)
    return out


def _unflatten(it: Any, spec: TreeSpec) -> Any:
    kind = spec.kind
    if kind == "leaf":
        return next(it)
    items = [_unflatten(it, c) for c in spec.children]
    if kind == "tuple":
        return tuple(items)
    if kind == "list":
        return items
    if kind == "namedtuple":
        return spec.meta(*items)
    cls, keys = spec.meta
    d = dict(zip(keys, items))
    return d if cls is dict else cls(d)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any, what: str) -> list[Any]:
    """``prefix`` (a tree whose leaves stand for whole subtrees of ``tree``) spread out to one
    value per leaf of ``tree``, as vmap's ``in_dims``/``out_dims`` are."""
    out: list[Any] = []
    _broadcast(prefix, tree, out, what)
    return out


def _broadcast(prefix: Any, tree: Any, out: list[Any], what: str) -> None:
    pspec_is_leaf = not isinstance(prefix, (tuple, list, dict))
    if pspec_is_leaf:
        out.extend([prefix] * tree_flatten(tree)[1].num_leaves)
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(
                f"{what}: a dict of keys {sorted(prefix)} does not match the structure of the "
                f"value it describes ({_describe(tree)})"
            )
        for k in tree:
            _broadcast(prefix[k], tree[k], out, what)
        return
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        raise ValueError(
            f"{what}: a {type(prefix).__name__} of {len(prefix)} entries does not match the "
            f"structure of the value it describes ({_describe(tree)})"
        )
    for p, t in zip(prefix, tree):
        _broadcast(p, t, out, what)


def _describe(tree: Any) -> str:
    if isinstance(tree, (tuple, list)):
        return f"a {type(tree).__name__} of {len(tree)} entries"
    if isinstance(tree, dict):
        return f"a dict of keys {sorted(tree)}"
    return f"a {type(tree).__name__}"
