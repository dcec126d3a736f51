"""Automatic differentiation: Function, backward, grad, grad modes, gradcheck."""

from __future__ import annotations

from lucid.autograd import graph, inplace  # noqa: F401  (submodules reachable as attributes)
from lucid.autograd.engine import backward, grad
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
from lucid.autograd.gradcheck import gradcheck, gradgradcheck

__all__ = [
    "DoubleBackwardError",
    "Function",
    "backward",
    "enable_grad",
    "grad",
    "graph",
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
