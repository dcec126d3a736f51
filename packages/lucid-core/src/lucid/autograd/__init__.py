"""Automatic differentiation: Function, backward, grad, grad modes, gradcheck."""

from __future__ import annotations

from lucid.autograd import anomaly_mode, grad_mode, graph, inplace  # noqa: F401  (submodules reachable as attributes)
from lucid.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from lucid.autograd.engine import backward, grad
from lucid.autograd.function import (
    DoubleBackwardError,
    Function,
    observe_ops,
    once_differentiable,
)
from lucid.autograd.grad_mode import *  # noqa: F403  (the grad modes: grad_mode.__all__)
from lucid.autograd.gradcheck import gradcheck, gradgradcheck
from lucid.autograd.variable import (
    Variable,
    enforce_grad_layout_policy,
    set_multithreading_enabled,
    variable,
)

__all__ = [
    "DoubleBackwardError",
    "Function",
    "Variable",
    "backward",
    "detect_anomaly",
    "enforce_grad_layout_policy",
    "set_detect_anomaly",
    "set_multithreading_enabled",
    "grad",
    "graph",
    "gradcheck",
    "gradgradcheck",
    "observe_ops",
    "once_differentiable",
    "variable",
]
__all__ += grad_mode.__all__
