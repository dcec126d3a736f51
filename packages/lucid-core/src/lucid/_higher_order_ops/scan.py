"""``torch._higher_order_ops.scan``, run eagerly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid._higher_order_ops._utils import check_same
from lucid._tensor import Tensor
from lucid.ops import stack
from lucid.ops._util import normalize_dim
from lucid.utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["scan"]


def scan(
    combine_fn: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any,
    *,
    dim: int = 0,
    reverse: bool = False,
) -> tuple[Any, Any]:
    """An inclusive scan (``torch._higher_order_ops.scan``): ``carry, y = combine_fn(carry,
    x)`` for each slice ``x`` of ``xs`` along ``dim`` (last to first when ``reverse``),
    starting from ``carry = init``.

    ``init`` and ``xs`` are tensors or pytrees of tensors; ``combine_fn`` returns a pair
    ``(next_carry, y)`` whose carry leaves keep ``init``'s shapes and dtypes. Returns the final
    carry and the ``y``s stacked along ``dim`` (in the order of ``xs``, also when ``reverse``).
    With no ``xs`` leaves, returns ``(init, [])``. Errors are torch's.

    Autograd flows through every step (lucid runs the loop with ordinary ops).

    >>> import lucid
    >>> scan(lambda c, x: (c + x, (c + x).clone()), lucid.zeros(()), lucid.arange(4.0))
    (tensor(6.), tensor([0., 1., 3., 6.]))
    """
    leaves_init, spec_init = tree_flatten(init)
    leaves_xs, spec_xs = tree_flatten(xs)
    if len(leaves_xs) == 0:
        return init, []
    if isinstance(leaves_xs[0], Tensor) and isinstance(dim, int):
        dim = normalize_dim(dim, leaves_xs[0].ndim)

    if not callable(combine_fn):
        raise RuntimeError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, int):
        raise RuntimeError("Dim must be an int, but got " + str(type(dim)))
    if not isinstance(reverse, bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if len(leaves_init) == 0:
        raise RuntimeError("scan() operator requires init leaves.")
    for x in leaves_init:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"All init leaves must be a Tensor but got {x}")
    for x in leaves_xs:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"All xs leaves must be a Tensor but got {x}")
    if any(x.ndim <= dim or x.shape[dim] == 0 for x in leaves_xs):
        raise RuntimeError(
            "All xs leaves must at least have 'dim' number of dimensions and scan dimension > 0"
        )

    moved = [x.movedim(dim, 0) if dim != 0 else x for x in leaves_xs]
    if reverse:
        moved = [x.flip([0]) for x in moved]

    carry: Any = init
    carry_leaves = leaves_init
    ys: list[list[Any]] = []
    y_spec = None
    for i in range(moved[0].shape[0]):
        out = combine_fn(carry, tree_unflatten([x[i] for x in moved], spec_xs))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise RuntimeError(f"Expect combine_fn to return a tuple (next_carry, y) but got {out}")
        next_leaves, carry_spec = tree_flatten(out[0])
        check_same(leaves_init, next_leaves, "init", "carry")
        y_leaves, spec = tree_flatten(out[1])
        for y in y_leaves:
            if not isinstance(y, Tensor):
                raise RuntimeError(f"Expect combine_fn's y leaves to be Tensors but got {y}")
        if y_spec is not None and spec != y_spec:
            raise RuntimeError(
                f"Expect combine_fn to return the same y structure at every step, but got "
                f"{y_spec} and {spec}"
            )
        y_spec = spec
        ys.append(y_leaves)
        carry_leaves = next_leaves
        carry = tree_unflatten(carry_leaves, spec_init)

    assert y_spec is not None
    outs: Any = tree_unflatten([stack(list(col)) for col in zip(*ys, strict=True)], y_spec)
    if reverse:
        outs = tree_map(lambda e: e.flip([0]), outs)
    if dim != 0:
        outs = tree_map(lambda e: e.movedim(0, dim) if dim < e.ndim else e, outs)
    return tree_unflatten(carry_leaves, carry_spec), outs
