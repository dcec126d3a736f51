"""``torch._higher_order_ops.associative_scan``, run eagerly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid._tensor import Tensor
from lucid.ops import stack
from lucid.ops._util import normalize_dim
from lucid.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["associative_scan"]


def associative_scan(
    combine_fn: Callable[[Any, Any], Any],
    xs: Any,
    dim: int,
    reverse: bool = False,
    combine_mode: str = "pointwise",
) -> Any:
    """An inclusive scan with an associative ``combine_fn``
    (``torch._higher_order_ops.associative_scan``): output slice ``i`` along ``dim`` is
    ``combine_fn(out[i-1], xs[i])`` with ``out[0] = xs[0]`` (from the last slice when
    ``reverse``).

    ``xs`` is a tensor or a pytree of tensors of the same size along ``dim``; ``combine_fn``
    takes two pytrees of ``xs``' structure (one slice each, without the scan dim, as torch's
    vmapped call sees them) and returns one. ``combine_mode`` is ``"generic"`` or
    ``"pointwise"``; as in torch, ``"pointwise"`` needs every tensor on CUDA or XPU and raises
    ``ValueError`` otherwise (so on lucid's CPU tensors pass ``combine_mode="generic"``).

    lucid combines the slices one after another (torch's generic mode combines them in a
    tree of ``log n`` rounds): the results agree for an associative ``combine_fn`` up to
    floating-point rounding. Autograd flows through every step. With no ``xs`` leaves lucid
    raises ``IndexError`` with a message (torch fails indexing an empty list).

    >>> import lucid
    >>> associative_scan(lambda a, b: a + b, lucid.arange(4.0), 0, combine_mode="generic")
    tensor([0., 1., 3., 6.])
    """
    leaves, spec = tree_flatten(xs)
    if not leaves:
        raise IndexError("associative_scan(): Expected at least 1 xs leaf")
    if isinstance(leaves[0], Tensor) and isinstance(dim, int):
        dim = normalize_dim(dim, leaves[0].ndim)

    if not callable(combine_fn):
        raise ValueError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, int):
        raise ValueError("Dim must be an int, but got " + str(type(dim)))
    if not isinstance(reverse, bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(
            f"Combine_mode must either 'pointwise' or 'generic', but got {combine_mode}"
        )
    if any(not isinstance(x, Tensor) for x in leaves):
        raise ValueError("xs leaves must be a Tensor")
    if combine_mode == "pointwise" and not all(x.device.type in ("cuda", "xpu") for x in leaves):
        raise ValueError(
            "For combine_mode='pointwise', all input tensors need to be on CUDA or XPU"
        )
    if any(x.is_sparse for x in leaves):
        raise ValueError("xs leaves must dense Tensors, consider using `to_dense()`")
    if any(x.ndim <= dim or x.shape[dim] == 0 for x in leaves):
        raise ValueError(
            "All xs leaves must at least have 'dim' number of dimensions and scan dimension > 0"
        )
    n = leaves[0].shape[dim]
    if any(x.shape[dim] != n for x in leaves):
        raise ValueError(
            "All xs leaves must have the same size along the scan dimension, got sizes "
            f"{[x.shape[dim] for x in leaves]}"
        )

    moved = [x.movedim(dim, 0) for x in leaves]
    if reverse:
        moved = [x.flip([0]) for x in moved]

    acc = [x[0] for x in moved]
    outs = [[a] for a in acc]
    for i in range(1, n):
        res = combine_fn(tree_unflatten(acc, spec), tree_unflatten([x[i] for x in moved], spec))
        res_leaves, res_spec = tree_flatten(res)
        if res_spec != spec:
            raise RuntimeError(
                "The pytree of the output of combine_fn must match the pytree of xs, but got "
                f"{res_spec} and {spec}"
            )
        for j, (r, a) in enumerate(zip(res_leaves, acc, strict=True)):
            if not isinstance(r, Tensor) or r.shape != a.shape:
                raise RuntimeError(
                    f"combine_fn's output leaf {j} must be a Tensor of shape {a.shape} (a slice "
                    f"of xs), but got {r!r}"
                )
        acc = res_leaves
        for col, r in zip(outs, acc, strict=True):
            col.append(r)

    result = [stack(col) for col in outs]
    if reverse:
        result = [r.flip([0]) for r in result]
    return tree_unflatten([r.movedim(0, dim) for r in result], spec)
