"""Nested containers of tensors (pytrees) flattened to a list of leaves and rebuilt.

Containers are tuples, lists, dicts and namedtuples, as ``torch.utils._pytree`` treats them,
and the classes given to :func:`register_pytree_node`; anything else (a Tensor, a number,
None) is a leaf.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

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

# Classes registered as containers: {cls: (flatten_fn, unflatten_fn)}. ``flatten_fn(node)``
# gives ``(children, context)`` and ``unflatten_fn(children, context)`` rebuilds the node.
_REGISTERED: dict[type, tuple[Callable[[Any], tuple[list[Any], Any]], Callable[..., Any]]] = {}
_BUILTIN_NODES = (tuple, list, dict)


def register_pytree_node(
    cls: type[Any],
    flatten_fn: Callable[[Any], tuple[list[Any], Any]],
    unflatten_fn: Callable[[Iterable[Any], Any], Any],
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable[[Any], Any] | None = None,
    from_dumpable_context: Callable[[Any], Any] | None = None,
    flatten_with_keys_fn: Callable[[Any], tuple[list[tuple[Any, Any]], Any]] | None = None,
) -> None:
    """Make ``cls`` a container: its instances flatten through ``flatten_fn`` (children and a
    context) and are rebuilt by ``unflatten_fn(children, context)``, as torch's. The
    serialization and key-path arguments are accepted and not used (lucid does not serialize
    specs)."""
    if cls in _REGISTERED or cls in _BUILTIN_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _REGISTERED[cls] = (flatten_fn, unflatten_fn)


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    """The key path entry of a mapping's value (``torch.utils._pytree.MappingKey``)."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Mapping[Any, Any]) -> Any:
        return mapping[self.key]


def _dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], list[Any]]:
    """A dict's values and its keys (torch's helper, passed as ``flatten_fn`` by libraries
    that register dict subclasses, diffusers' ``BaseOutput``)."""
    return list(d.values()), list(d.keys())


def _dict_unflatten(values: Iterable[Any], context: list[Any]) -> dict[Any, Any]:
    """The dict ``_dict_flatten`` took apart: ``context``'s keys with ``values``."""
    return dict(zip(context, values, strict=True))


def _dict_flatten_with_keys(d: dict[Any, Any]) -> tuple[list[tuple[MappingKey, Any]], list[Any]]:
    """A dict's values with their key paths, and its keys (torch's helper, passed as
    ``flatten_with_keys_fn`` by libraries that register dict subclasses)."""
    keys = list(d)
    return [(MappingKey(k), d[k]) for k in keys], keys


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its spec (``is_leaf(node)`` True: a leaf)."""
    leaves: list[Any] = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, spec


def _flatten(
    tree: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None = None
) -> TreeSpec:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    registered = _REGISTERED.get(type(tree))
    if registered is not None:
        children, context = registered[0](tree)
        return TreeSpec(
            "registered", (type(tree), context), [_flatten(v, leaves, is_leaf) for v in children]
        )
    if _is_namedtuple(tree):
        return TreeSpec("namedtuple", type(tree), [_flatten(v, leaves, is_leaf) for v in tree])
    if isinstance(tree, tuple):
        return TreeSpec("tuple", None, [_flatten(v, leaves, is_leaf) for v in tree])
    if isinstance(tree, list):
        return TreeSpec("list", None, [_flatten(v, leaves, is_leaf) for v in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return TreeSpec(
            "dict", (type(tree), tuple(keys)), [_flatten(tree[k], leaves, is_leaf) for k in keys]
        )
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves: Iterable[Any], spec: TreeSpec) -> Any:
    """Rebuild a tree of ``spec`` from ``leaves`` (as many as the spec holds)."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
            f"to a pytree that holds {spec.num_leaves} items ({spec})."
        )
    return _unflatten(iter(leaves), spec)


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
    if kind == "registered":
        cls, context = spec.meta
        return _REGISTERED[cls][1](items, context)
    cls, keys = spec.meta
    d = dict(zip(keys, items))
    return d if cls is dict else cls(d)


def tree_map(
    fn: Callable[..., Any], tree: Any, *rests: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """``tree`` with ``fn`` applied to each leaf; with ``rests`` (trees of ``tree``'s structure,
    or with whole subtrees where ``tree`` has leaves), ``fn`` of the matching leaves."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(spec, rest) for rest in rests]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others, strict=True)], spec)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    """The spec of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


_KIND_TYPES: dict[str, type] = {"tuple": tuple, "list": list}


def _is_a(tree: Any, expected: type) -> bool:
    """``isinstance`` without narrowing ``tree`` for the type checker (``expected`` is a
    spec's container type, known only at run time)."""
    return isinstance(tree, expected)


def _flatten_up_to(spec: TreeSpec, tree: Any) -> list[Any]:
    """The subtrees of ``tree`` at ``spec``'s leaves (``tree`` has ``spec``'s containers)."""
    out: list[Any] = []
    _up_to(spec, tree, out)
    return out


def _up_to(spec: TreeSpec, tree: Any, out: list[Any]) -> None:
    if spec.kind == "leaf":
        out.append(tree)
        return
    if spec.kind in ("dict", "registered"):
        expected: type = spec.meta[0]
    elif spec.kind == "namedtuple":
        expected = spec.meta
    else:
        expected = _KIND_TYPES[spec.kind]
    if not _is_a(tree, expected) or (spec.kind == "tuple" and _is_namedtuple(tree)):
        raise ValueError(f"Node type mismatch; expected {expected}, but got {type(tree)}.")
    if spec.kind == "dict":
        keys = spec.meta[1]
        if set(keys) != set(tree):
            missing, extra = set(keys) - set(tree), set(tree) - set(keys)
            raise ValueError(
                f"Node keys mismatch; missing key(s): {missing}; extra key(s): {extra}."
            )
        subtrees = [tree[k] for k in keys]
    elif spec.kind == "registered":
        subtrees, context = _REGISTERED[expected][0](tree)
        if context != spec.meta[1]:
            raise ValueError(
                f"Node context mismatch for custom node type {expected}; expected "
                f"{spec.meta[1]}, but got {context}."
            )
        subtrees = list(subtrees)
    else:
        subtrees = list(tree)
        if len(subtrees) != len(spec.children):
            raise ValueError(
                f"Node arity mismatch; expected {len(spec.children)}, but got {len(subtrees)}."
            )
    for child, sub in zip(spec.children, subtrees, strict=True):
        _up_to(child, sub, out)


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
