"""``torch._higher_order_ops.map``, run eagerly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid._higher_order_ops._utils import stack_pytree
from lucid._tensor import Tensor
from lucid.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["map"]


def map(f: Callable[..., Any], xs: Any, *args: Any) -> Any:  # noqa: A001  (torch's name)
    """``f`` applied to each slice of ``xs`` along dim 0, the results stacked
    (``torch._higher_order_ops.map``)::

        torch.stack([f(xs.select(0, i), *args) for i in range(xs.size(0))])

    ``xs`` is a tensor or a pytree of tensors sharing their leading size (sliced together);
    ``args`` pass unchanged to every call. ``f`` returns a tensor or a pytree of tensors of
    the same structure at every step; each leaf is stacked along a new dim 0. Errors are
    torch's. Autograd flows through every call.

    >>> import lucid
    >>> map(lambda row, b: row.sum() + b, lucid.ones(3, 2), lucid.tensor(1.0))
    tensor([3., 3., 3.])
    """
    flat_xs, xs_spec = tree_flatten(xs)
    if not all(isinstance(t, Tensor) for t in flat_xs):
        raise RuntimeError(f"Mapped xs can only consist of tensors. Got xs {flat_xs}.")
    if not flat_xs:
        raise IndexError("map(): xs has no tensor leaves to map over")
    if any(t.ndim == 0 for t in flat_xs):
        raise IndexError("map(): xs leaves must have a leading dimension to map over")
    shapes = [t.shape for t in flat_xs]
    leading = shapes[0][0]
    if leading == 0:
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    if any(s[0] != leading for s in shapes):
        raise RuntimeError(
            f"Leading dimensions of mapped xs must be consistent. Got shapes {shapes}."
        )
    return stack_pytree(
        [f(tree_unflatten([t[i] for t in flat_xs], xs_spec), *args) for i in range(leading)]
    )
