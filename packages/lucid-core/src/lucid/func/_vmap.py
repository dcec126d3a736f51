"""``vmap``: map a function over a batch dimension of its inputs, by batching rules.

``vmap`` runs the function once, on :class:`~lucid.func._batched.BatchedTensor` inputs (the
logical per-element view of the whole batch); each op it calls goes to its batching rule
(``lucid.func._rules``), which runs the op once on the whole batch. An op without a rule runs
once per batch element with a one-time warning naming it. A function that draws random numbers
under ``randomness='different'`` or ``'same'`` runs once per element (each element its own
draw, or one draw replayed for all). Everything runs on lucid ops, so every backend takes the
same path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lucid import _generator
from lucid._tensor import Tensor
from lucid.autograd.function import intercept_ops
from lucid.func import _rules  # noqa: F401  (registers the batching rules)
from lucid.func._batched import BatchedTensor, active, dispatch, wrap
from lucid.func._pytree import broadcast_prefix, tree_flatten, tree_unflatten
from lucid.ops.join import cat, stack

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """``func`` mapped over a dimension of its inputs (``torch.func.vmap``).

    ``in_dims`` says, per positional argument, which dimension is the batch (an int, or None
    for an argument passed whole to every call); it is an int for all arguments or a tuple
    with one entry per argument, each a prefix of that argument's pytree. ``out_dims`` places
    the batch dimension in each output likewise. Keyword arguments are not mapped.
    ``randomness``: 'error' (default) raises if ``func`` draws random numbers from the default
    generator, 'different' lets each element draw its own, 'same' replays one draw for all.
    ``chunk_size`` runs the batch in chunks of that many elements (less memory, same result).

    ``func`` runs once on the whole batch through per-op batching rules (see the module
    notes); ``vmap(grad(f))`` gives per-sample gradients, ``vmap(vmap(f))`` maps two dims.

    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> vmap(lambda row: row.sum())(x)
    tensor([3., 7.])
    >>> vmap(lambda row, w: row * w, in_dims=(1, None))(x, lucid.tensor(10.0))
    tensor([[10., 30.],
            [20., 40.]])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(
            f"vmap: chunk_size should be None or greater than or equal to 1. (Got {chunk_size})"
        )
    if not callable(func):
        raise RuntimeError(f"vmap: Expected f to be a function, got {type(func).__name__}")
    _check_dims_type(in_dims, "in_dims")
    _check_dims_type(out_dims, "out_dims")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        name = getattr(func, "__name__", repr(func))
        if not args:
            raise ValueError(
                f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
                "you are trying to vmap over a function with no inputs. The latter is unsupported."
            )
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                "or a (potentially nested) tuple matching the structure of inputs, got: "
                f"{type(in_dims)}."
            )
        dims_tree = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                f"with the structure of `inputs`. in_dims has structure of {len(in_dims)} "
                f"entries but inputs has {len(args)} positional arguments."
            )
        flat, spec = tree_flatten(args)
        dims = broadcast_prefix(dims_tree, args, f"vmap({name}, in_dims={in_dims}, ...)")
        size = _batch_size(flat, dims, name, in_dims)
        if size == 0:
            raise ValueError(f"vmap({name}): the mapped dimension has size 0; nothing to map over")
        moved = [x.movedim(d, 0) if d is not None else x for x, d in zip(flat, dims)]
        step = size if chunk_size is None else chunk_size
        parts = []
        for start in range(0, size, step):
            n = min(step, size - start)
            chunk = [x if d is None or n == size else x.narrow(0, start, n)
                     for x, d in zip(moved, dims)]  # fmt: skip
            parts.append(_run_chunk(func, chunk, dims, spec, kwargs, n, out_dims, name, randomness))
        if len(parts) == 1:
            return parts[0]
        return _join_chunks(parts, out_dims, name)

    return wrapped


def _run_chunk(func: Callable[..., Any], moved: list[Any], dims: list[Any], spec: Any,
               kwargs: dict[str, Any], size: int, out_dims: Any, name: str,
               randomness: str = "error") -> Any:  # fmt: skip
    """``func`` once on the chunk (batch at dim 0 of each mapped input) through the batching
    rules; if it drew random numbers and ``randomness`` allows that, once per element instead."""
    state = _generator.get_rng_state()
    level = len(active.levels) + 1
    inputs = [wrap(x, level) if d is not None else x for x, d in zip(moved, dims)]
    active.levels.append((level, size))
    try:
        with intercept_ops(dispatch):
            out = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        active.levels.pop()
    if not _same_rng(state, _generator.get_rng_state()):
        if randomness == "error":
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap"
            )
        _generator.set_rng_state(state)
        return _loop(func, moved, dims, spec, kwargs, size, out_dims, name, randomness)
    return _unwrap_outputs(out, level, size, out_dims, name)


def _unwrap_outputs(out: Any, level: int, size: int, out_dims: Any, name: str) -> Any:
    leaves, spec = tree_flatten(out)
    dims = broadcast_prefix(out_dims, out, f"vmap({name}, ..., out_dims={out_dims})")
    result = []
    for leaf, d in zip(leaves, dims):
        batched = type(leaf) is BatchedTensor and leaf._level == level
        if d is None:
            if batched:
                raise ValueError(
                    f"vmap({name}, ..., out_dims={out_dims}): an output with out_dim=None must "
                    "not depend on the mapped inputs, but this one is batched"
                )
            result.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(leaf).__name__}. Did you mean to set out_dims= to None for output?"
            )
        nd = leaf.ndim + 1
        if not -nd <= d < nd:
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims}): Got out_dim={d} for an output of "
                f"dimensionality {leaf.ndim}, so expected out_dim to satisfy -{nd} <= out_dim "
                f"< {nd}."
            )
        phys = leaf._phys if type(leaf) is BatchedTensor and batched else _broadcast(leaf, size)
        result.append(phys.movedim(0, d % nd))
    return tree_unflatten(result, spec)


def _broadcast(t: Tensor, size: int) -> Tensor:
    """An output that does not depend on the mapped inputs, the same for every element."""
    return t.unsqueeze(0).expand(size, *t.shape)


def _join_chunks(parts: list[Any], out_dims: Any, name: str) -> Any:
    flats = [tree_flatten(p) for p in parts]
    leaves0, spec = flats[0]
    dims = broadcast_prefix(out_dims, parts[0], f"vmap({name}, ..., out_dims={out_dims})")
    out = []
    for j, (leaf, d) in enumerate(zip(leaves0, dims)):
        out.append(leaf if d is None else cat([f[0][j] for f in flats], d % leaf.ndim))
    return tree_unflatten(out, spec)


def _loop(func: Callable[..., Any], moved: list[Any], dims: list[Any], spec: Any,
          kwargs: dict[str, Any], size: int, out_dims: Any, name: str,
          randomness: str) -> Any:  # fmt: skip
    """``func`` once per batch element, results stacked (random draws per element, or one
    draw replayed for each with ``randomness='same'``)."""
    state = _generator.get_rng_state()
    results = []
    for i in range(size):
        if randomness == "same":
            _generator.set_rng_state(state)
        sliced = [x[i] if d is not None else x for x, d in zip(moved, dims)]
        results.append(func(*tree_unflatten(sliced, spec), **kwargs))
    return _stack_outputs(results, out_dims, name, size)


def _check_dims_type(dims: Any, what: str) -> None:
    leaves, _ = tree_flatten(dims)
    for d in leaves:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(
                f"vmap: {what} must be an int, None or a (nested) tuple/list/dict of those, but "
                f"got {dims!r}"
            )


def _batch_size(flat: list[Any], dims: list[Any], name: str, in_dims: Any) -> int:
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(x).__name__}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        if not -x.ndim <= d < x.ndim:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                f"but that input is a Tensor of dimensionality {x.ndim} so expected in_dim to "
                f"satisfy -{x.ndim} <= in_dim < {x.ndim}."
            )
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got all in_dims=None; at least one "
            "input must be mapped over (pass a Tensor with an in_dim that is not None)."
        )
    if len(set(sizes)) != 1:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Expected all tensors to have the "
            f"same size in the mapped dimension, got sizes {sizes} for the mapped dimension"
        )
    return int(sizes[0])


def _same_rng(a: Any, b: Any) -> bool:
    if a is None:
        return True
    return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())


def _stack_outputs(results: list[Any], out_dims: Any, name: str, size: int) -> Any:
    if size == 0:
        raise ValueError(f"vmap({name}): the mapped dimension has size 0; nothing to map over")
    flats = [tree_flatten(r) for r in results]
    leaves0, spec = flats[0]
    dims = broadcast_prefix(out_dims, results[0], f"vmap({name}, ..., out_dims={out_dims})")
    out = []
    for j, (leaf, d) in enumerate(zip(leaves0, dims)):
        column = [f[0][j] for f in flats]
        if d is None:
            out.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(leaf).__name__}. Did you mean to set out_dims= to None for output?"
            )
        nd = leaf.ndim + 1
        if not -nd <= d < nd:
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims}): Got out_dim={d} for an output of "
                f"dimensionality {leaf.ndim}, so expected out_dim to satisfy -{nd} <= out_dim "
                f"< {nd}."
            )
        out.append(stack(column, dim=d % nd))
    return tree_unflatten(out, spec)
