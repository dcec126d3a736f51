"""In-place changes of tensors under autograd: version counters, views, saved-tensor fix-ups.

A tensor changed in place keeps its identity: it takes the new array, its version counter
moves on (so that a backward which saved the old value raises), and where it is in a graph it
adopts the graph of the out-of-place result. Views whose backend makes copies (MLX) write their
new value back into their base. ``lucid._binder`` builds every ``Tensor.<op>_`` from these.
"""

from __future__ import annotations

import functools
from typing import Any

from lucid import _replay, dtypes
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import (
    Function,
    rebind_saved_output,
    replace_saved_output_array,
    snapshot_saved_input,
)


class Overwrite(Function):
    """``value`` replacing ``a`` (an in-place write of a constant): ``a`` gets zero gradient."""

    @staticmethod
    def forward(ctx: Any, a: Any, value: Any) -> Any:
        return value

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g * 0, None


def check_inplace(t: Tensor) -> None:
    """Refuse an in-place change of a leaf that requires grad (or of a view of one)."""
    if not grad_mode._state.enabled:
        return
    if t.requires_grad and t.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = t._base
    if base is not None and base.requires_grad and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    src = t._view_src
    if src is not None and t.requires_grad:
        name = getattr(src[1], "multi_view_name", None)
        if name is not None:
            raise RuntimeError(
                f"Output {t._output_nr} of {name} is a view and is being modified inplace. This "
                "view is the output of a function that returns multiple views. Such functions "
                "do not allow the output views to be modified inplace. You should replace the "
                "inplace operation by an out-of-place one."
            )


def set_data_inplace(t: Tensor, new: Any) -> Tensor:
    """Write ``new`` into ``t`` (in place where the backend allows); bump its version."""
    rebind_inplace(t, t._backend.assign(t._data, new))
    t._counter().value += 1
    return t


def rebind_inplace(t: Tensor, arr: Any) -> None:
    """Make ``t`` hold ``arr``, the result of an in-place change of it. Where the backend made a
    new array rather than writing into the old one (MLX; views that are copies), the tensor
    ``t`` is the ``.data`` or ``detach()`` of gets it too, unless that tensor has since been
    given other storage (the version counter is not bumped again: ``.data`` has its own,
    ``detach()`` shares it)."""
    old = t._data
    t._data = arr
    link = t._storage_of
    if link is None or arr is old:
        return
    owner = link()
    if owner is None or owner._data is not old:
        return
    rebind_inplace(owner, arr)
    if owner.grad_fn is not None:
        replace_saved_output_array(owner.grad_fn, old, arr)
    if owner._base is not None and not owner._backend.views_share_memory:
        write_back(owner)


def inplace_result(t: Tensor, result: Tensor) -> Tensor:
    """Make ``t`` hold ``result`` (computed out of place), keeping autograd consistent."""
    if _replay.listeners:  # a lucid.compile capture records the write as one step
        out: Tensor = _replay.listeners[-1](_inplace_result, (t, result), {})
        return out
    return _inplace_result(t, result)


def _inplace_result(t: Tensor, result: Tensor) -> Tensor:
    check_inplace(t)
    if result._data.dtype != t._data.dtype:
        if not _can_cast(result.dtype, t.dtype):
            raise RuntimeError(
                f"result type {result.dtype.name.capitalize()} can't be cast to the desired "
                f"output type {t.dtype.name.capitalize()}"
            )
        result = result.to(t.dtype)
    if result._data.shape != t._data.shape:
        raise RuntimeError(
            f"output with shape {list(t.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if not result.requires_grad and grad_mode._state.enabled and _in_graph(t):
        # A constant written over a tensor in a graph: its old value gets zero gradient.
        result = Overwrite.apply(t, result)
    node = result.grad_fn
    if node is not None and node._saved:
        snapshot_saved_input(node, t)
    rebased = _rebase_view(t, result) if t._base is not None else None
    set_data_inplace(t, result._data)
    if t._base is not None and not t._backend.views_share_memory:
        write_back(t)
    # Adopt the result's graph only when it was recorded (not e.g. copy_(param) under
    # no_grad, where ``result`` may be the source tensor itself).
    recorded = result.requires_grad and grad_mode._state.enabled
    if recorded and result.grad_fn is not None and result._vc is not None:
        # The node's saved output is now this tensor: later in-place changes of it must
        # be caught by the version check.
        rebind_saved_output(result.grad_fn, result._vc, t._counter())
    if rebased is not None:
        return _adopt(t, rebased)
    return _adopt(t, result) if recorded else t


def write_back(t: Tensor) -> None:
    """Put view ``t``'s new value into its base (backends whose views are copies), through
    each view it was made from (a view of a view writes into its parent, the parent into its
    own, up to the base)."""
    chain = []
    cur = t
    while cur._base is not None:
        src = cur._view_src
        write = getattr(src[1], "write_back", None) if src is not None else None
        if write is None:
            raise RuntimeError(
                f"in-place change of a view is not supported on device '{t.device}' for "
                "this view (only views made by indexing, reshape or permute steps); use "
                "index assignment on the base tensor or an out-of-place op"
            )
        chain.append((cur, src[0], write))
        cur = src[0]
    for view, parent, write in chain:
        rebind_inplace(parent, write(parent._data, view._data))


def _in_graph(t: Tensor) -> bool:
    base = t._base
    return t.requires_grad or (base is not None and base.requires_grad)


def _rebase_view(t: Tensor, result: Tensor) -> Tensor | None:
    """In-place change of a view under autograd: give the base the graph of ``base[index] =
    result`` (PyTorch's CopySlices; ``index`` what each view step took) and return the view's
    new value taken again from it. A view of a view rebases step by step up to the base, and
    each view between gets its new value's graph too; a view made by a step without a
    ``rebase`` (a multi-output split, ``expand``...) keeps its graph (see CONTRIBUTING)."""
    base = t._base
    assert base is not None
    if not (grad_mode._state.enabled and (base.requires_grad or result.requires_grad)):
        return None
    steps = []
    cur = t
    while cur._base is not None:
        src = cur._view_src
        rebase = getattr(src[1], "rebase", None) if src is not None else None
        if rebase is None and src is not None:
            per_output = getattr(src[1], "rebase_output", None)  # one piece of a multi-output
            if per_output is not None:
                rebase = functools.partial(_rebase_output, per_output, cur._output_nr)
        if rebase is None:
            return None
        steps.append((src[0], rebase))
        cur = src[0]
    if cur is not base:
        return None
    value, view = result, None
    for parent, rebase in steps:
        new_parent, new_view = rebase(parent, value)
        if view is None:
            view = new_view
        _adopt(parent, new_parent)
        value = new_parent
    return view


def _rebase_output(per_output: Any, output_nr: int, base: Tensor, value: Tensor) -> Any:
    return per_output(base, value, output_nr)


def _adopt(t: Tensor, result: Tensor) -> Tensor:
    t.requires_grad = True
    t.grad_fn = result.grad_fn
    t._output_nr = result._output_nr
    return t


def _can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    return src.category <= dst.category
