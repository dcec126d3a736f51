"""``torch._higher_order_ops.while_loop`` (``torch.while_loop``), run eagerly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid import dtypes
from lucid._higher_order_ops._utils import check_same
from lucid._tensor import Tensor
from lucid.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["while_loop"]


def _check_pred(pred: Any) -> None:
    if isinstance(pred, bool):
        return
    if isinstance(pred, Tensor) and tuple(pred.shape) == () and pred.dtype == dtypes.bool_:
        return
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def while_loop(
    cond_fn: Callable[..., Any], body_fn: Callable[..., Any], carried_inputs: Any
) -> Any:
    """Run ``body_fn(*carried_inputs)`` while ``cond_fn(*carried_inputs)`` is True
    (``torch.while_loop``)::

        val = carried_inputs
        while cond_fn(*val):
            val = body_fn(*val)
        return val

    ``carried_inputs`` is a tuple or list of possibly nested dicts/lists/tuples of tensors and
    ints. ``cond_fn`` returns a Python bool or a boolean 0-dim tensor; ``body_fn`` returns as
    many leaves as ``carried_inputs`` holds, each tensor of the same shape and dtype as the one
    it replaces (torch's errors otherwise). The next step's arguments keep
    ``carried_inputs``' structure; the result has ``body_fn``'s output structure, or, when the
    loop never runs, is a tuple of clones of ``carried_inputs``.

    lucid runs the loop in Python with ordinary ops, so autograd flows through every iteration
    (torch's prototype does not support training). Unlike torch, which traces ``body_fn``
    once before running, lucid checks a ``body_fn`` output only on the iterations that run,
    and does not reject a ``body_fn`` that returns its input tensor unchanged.

    >>> import lucid
    >>> lucid.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (0, lucid.ones(2)))
    (3, tensor([8., 8.]))
    """
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    flat, in_spec = tree_flatten(carried_inputs)
    if not all(isinstance(t, (Tensor, int)) for t in flat):
        raise RuntimeError(
            "Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only "
            f"consists of tensor or int leaves, but got {carried_inputs}."
        )

    carried = carried_inputs
    pred = cond_fn(*carried)
    _check_pred(pred)
    if not pred:
        return tuple(v.clone() if isinstance(v, Tensor) else v for v in carried_inputs)

    while True:
        out = body_fn(*carried)
        out_flat, out_spec = tree_flatten(out)
        check_same(out_flat, flat, "body_fn_output", "carried_inputs")
        flat = out_flat
        carried = tree_unflatten(flat, in_spec)
        pred = cond_fn(*carried)
        _check_pred(pred)
        if not pred:
            return tree_unflatten(flat, out_spec)
