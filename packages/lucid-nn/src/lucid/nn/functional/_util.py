"""Helpers shared by the functional ops: reductions, in-place results, wrapping arrays."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import lucid
from lucid import Tensor
from lucid.autograd import no_grad
from lucid.autograd.function import once_differentiable
from lucid.kernels import KernelContract

REDUCTIONS = ("none", "mean", "sum")


def check_reduction(
    reduction: str, allowed: tuple[str, ...] = REDUCTIONS, legacy: bool = True
) -> str:
    """``reduction`` itself, once it is known to be one of ``allowed``; the deprecated
    ``"elementwise_mean"`` is ``"mean"`` with torch's warning, as torch's ``_Reduction.get_enum``
    takes it. ``legacy`` False refuses it, as ``poisson_nll_loss`` does (it checks the name
    itself; so do ``gaussian_nll_loss``, ``multilabel_soft_margin_loss`` and
    ``triplet_margin_with_distance_loss``, in their own words)."""
    if reduction == "elementwise_mean" and legacy and "mean" in allowed:
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=3,
        )
        return "mean"
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def apply_reduction(loss: Tensor, reduction: str, weight: Tensor | None = None) -> Tensor:
    """Scale a pointwise loss by ``weight`` (when given), then reduce it ("none", "mean", "sum")."""
    if weight is not None:
        loss = loss * weight
    if reduction == "mean":
        result: Tensor = loss.mean()
        return result
    if reduction == "sum":
        result = loss.sum()
        return result
    if check_reduction(reduction) == "mean":  # the deprecated "elementwise_mean"
        result = loss.mean()
        return result
    return loss


def legacy_reduction(size_average: bool | None, reduce_: bool | None, reduction: str) -> str:
    """Map the deprecated ``size_average``/``reduce`` arguments onto ``reduction``."""
    if size_average is None and reduce_ is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce_ = True if reduce_ is None else reduce_
    result = "none" if not reduce_ else ("mean" if size_average else "sum")
    # torch's wording names the reduction the two arguments stand for.
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{result}' instead.",
        stacklevel=3,
    )
    return result


def maybe_inplace(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    """``inplace=True``: write ``out`` into ``input`` when no graph needs the old value.

    With autograd recording through ``input`` the result is returned out of place instead
    (the values are the same; only the aliasing differs).
    """
    if not inplace or (input.requires_grad or out.requires_grad):
        return out
    with no_grad():
        input.copy_(out)
    return input


def wrap(ctx: Any, arr: Any) -> Tensor:
    """A constant Tensor around a backend array computed inside a Function."""
    return Tensor.from_backend_array(arr, ctx.backend)


def input_at(ctx: Any, i: int, values: Any) -> Tensor | None:
    """A Tensor at the graph position of the Function's input ``i`` holding ``values`` (an
    array the backward rebuilt, equal to the input or, where only its softmax matters, shifted
    per row), so that a double backward reaches that input without the forward having kept
    it alive; the leaf itself for a leaf input; None if the input needs no gradient."""
    edge = ctx._edges[i]
    if edge is None:
        return None
    if isinstance(edge, Tensor):
        return edge
    t = Tensor.from_backend_array(values, ctx.out_backend, True)
    t.grad_fn, t._output_nr = edge  # as a saved output is rebuilt (autograd.function)
    return t


def fused_forward(ctx: Any, contract: KernelContract[Any], *args: Any) -> Any:
    """The output of the backend's whole-op kernel for ``contract`` on ``args`` (arrays and
    plain values), with ``ctx.fused`` and ``ctx.residuals`` set for ``fused_backward``; None
    where the backend has no such kernel or its kernel declines (``ctx.fused`` None: the
    Function's own code runs)."""
    fused = contract.find(ctx.backend)
    done = None if fused is None else fused.forward(ctx.backend, *args)
    ctx.fused = None if done is None else fused
    if done is None:
        return None
    y, ctx.residuals = done
    return y


@once_differentiable
def fused_backward(ctx: Any, g: Tensor) -> tuple[Tensor | None, ...]:
    """The gradients from a whole-op kernel (``ctx.fused``: arrays in, arrays out) and the
    residuals its forward returned (``ctx.residuals``), None for the op's other arguments."""
    grads = ctx.fused.backward(ctx.backend, ctx.residuals, g.array, ctx.needs_input_grad)
    out = [None if a is None else wrap(ctx, a) for a in grads]
    return (*out, *([None] * (len(ctx.needs_input_grad) - len(out))))


def check_float(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:  # torch: NotImplementedError ("not implemented for")
        raise NotImplementedError(f"{name}(): expected a floating point input, got {x.dtype}")
    return x


def promote_float(name: str, x: Any) -> Tensor:
    """``x`` itself when floating, an integer or bool tensor converted to the default dtype (the
    ops torch computes in floating point whatever the input: ``poisson_nll_loss``,
    ``local_response_norm``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return x
    return x.to(lucid.get_default_dtype())


# -- torch's argument checks -------------------------------------------------------------------
_POSITIONS = {"kernel_size": 2, "output_size": 2, "stride": 3, "padding": 4, "dilation": 5}


def check_tensor(fn: str, x: Any, name: str = "input", position: int = 1) -> Tensor:
    """``x`` itself when it is a Tensor, else torch's argument parser's TypeError."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")  # fmt: skip
    return x


def int_list(
    fn: str, value: Any, name: str, n: int, none_ok: bool = False, position: bool = True
) -> list[int]:
    """An ``int[n]`` argument as torch's argument parser reads it: an int repeated ``n``
    times, a sequence of ints as it is (its length is the op's to check); None (where
    ``none_ok``) an empty list."""
    if value is None and none_ok:
        return []
    try:
        return [operator.index(value)] * n
    except TypeError:
        pass
    try:
        return [operator.index(v) for v in value]
    except TypeError:
        where = f" (position {_POSITIONS.get(name, 2)})" if position else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be tuple of ints, not "
                        f"{type(value).__name__}") from None  # fmt: skip


def trunc_div(a: int, b: int) -> int:
    """C++'s integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def size_at(shape: tuple[int, ...], dim: int) -> int:
    """``shape[dim]``, or the IndexError torch's ``Tensor.size(dim)`` raises."""
    n = len(shape)
    if n == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")  # fmt: skip
    return shape[dim]


def check_dim_range(fn: str, shape: tuple[int, ...], low: int, high: int) -> None:
    """ATen's ``checkDimRange`` of argument #1 'self' (``low`` <= ndim < ``high``)."""
    if not low <= len(shape) < high:
        raise RuntimeError(f"Expected {low} to {high - 1} dimensions, but got {len(shape)}-"
                           f"dimensional tensor for argument #1 'self' (while checking arguments "
                           f"for {fn})")  # fmt: skip
