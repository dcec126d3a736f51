"""Checks shared by the control-flow operators: leaf metadata, pytree stacking."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.ops import stack
from lucid.utils._pytree import tree_flatten, tree_unflatten


def meta_diffs(lhs: list[Any], rhs: list[Any]) -> list[str]:
    """torch's ``pair[i] differ in '...'`` lines for leaves whose type, shape or dtype differ."""
    lines = []
    for i, (a, b) in enumerate(zip(lhs, rhs, strict=True)):
        if isinstance(a, Tensor) != isinstance(b, Tensor):
            diffs = [f"type: {type(a).__name__} vs {type(b).__name__}"]
        elif not isinstance(a, Tensor):
            continue
        else:
            diffs = []
            if a.shape != b.shape:
                diffs.append(f"shape: {a.shape} vs {b.shape}")
            if a.dtype != b.dtype:
                diffs.append(f"dtype: {a.dtype} vs {b.dtype}")
        if diffs:
            quoted = ", ".join(f"'{d}'" for d in diffs)
            lines.append(f"pair[{i}] differ in {quoted}, where lhs is {a!r} and rhs is {b!r}")
    return lines


def check_same(lhs: list[Any], rhs: list[Any], lhs_name: str, rhs_name: str) -> None:
    """Raise torch's error when two leaf lists differ in length or in tensor metadata."""
    if len(lhs) != len(rhs):
        raise RuntimeError(
            f"Expected {lhs_name} and {rhs_name} to have same number of outputs but got "
            f"lhs:{lhs} and rhs:{rhs}"
        )
    lines = meta_diffs(lhs, rhs)
    if lines:
        raise RuntimeError(
            f"Expected {lhs_name} and {rhs_name} to have same metadata but found:\n"
            + "\n".join(lines)
        )


def stack_pytree(pytrees: list[Any]) -> Any:
    """Each leaf position stacked along a new dim 0 (torch's ``_stack_pytree``): the trees must
    share one structure; a position of ``None`` in every tree stays ``None``."""
    flat_out = []
    out_spec = None
    for pt in pytrees:
        flat, spec = tree_flatten(pt)
        if out_spec is not None and spec != out_spec:
            raise RuntimeError(
                f"Expected every step to return the same pytree structure, but got {out_spec} "
                f"and {spec}."
            )
        out_spec = spec
        flat_out.append(flat)
    stacked: list[Any] = []
    for leaves in zip(*flat_out, strict=True):
        if all(isinstance(leaf, Tensor) for leaf in leaves):
            stacked.append(stack(list(leaves)))
        elif all(leaf is None for leaf in leaves):
            stacked.append(None)
        else:
            raise RuntimeError(f"Cannot stack {list(leaves)}.")
    assert out_spec is not None
    return tree_unflatten(stacked, out_spec)
