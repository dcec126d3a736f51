"""Automatic differentiation: Function, backward, grad, grad modes, gradcheck."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid.autograd.function import (
    DoubleBackwardError,
    Function,
    observe_ops,
    once_differentiable,
)
from lucid.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (torch.autograd)."""
    from lucid.autograd.engine import run_backward

    outs = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"grad_tensors has {len(grads)} entries but tensors has {len(outs)}")
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is not None:
        ins = _as_list(inputs)
        result = run_backward(outs, grads, retain, create_graph, inputs=ins, allow_unused=True)
        for t, g in zip(ins, result or ()):
            if g is None:
                continue
            g = g if create_graph else g.detach()._fresh_copy()
            t.grad = g if t.grad is None else t.grad + g
        return
    run_backward(outs, grads, retain, create_graph)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated)."""
    from lucid.autograd.engine import run_backward

    outs = _as_list(outputs)
    ins: Sequence[Any] = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outs)
    retain = create_graph if retain_graph is None else retain_graph
    result = run_backward(outs, grads, retain, create_graph, inputs=ins,
                          allow_unused=allow_unused or materialize_grads)  # fmt: skip
    assert result is not None
    if materialize_grads:
        from lucid._creation import zeros_like

        result = tuple(zeros_like(t) if g is None else g for t, g in zip(ins, result))
    return result


from lucid.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: E402

__all__ = [
    "DoubleBackwardError",
    "Function",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "observe_ops",
    "once_differentiable",
    "set_grad_enabled",
]
