"""``lucid.compiler`` (``torch.compiler``): the controls of :func:`lucid.compile` — ``disable``,
``reset``, ``is_compiling``, ``list_backends`` — and ``explain`` (``torch._dynamo.explain``).

``lucid.compile`` captures a function's ops on its first call for each input signature and
replays them, without the Python between the ops, on later calls; see the guide "Compiling a
step with lucid.compile" for what is captured, what breaks a graph and how to read
``explain``.
"""

from __future__ import annotations

from lucid._replay import replayable, value_check
from lucid.compiler._api import (
    RECOMPILE_LIMIT,
    CompiledFunction,
    compile,
    disable,
    is_compiling,
    list_backends,
    register_module_type,
    reset,
)
from lucid.compiler._capture import BreakReason, Program, Unsupported
from lucid.compiler._explain import ExplainOutput, explain
from lucid.compiler._native import (
    BackendCompiler,
    NativeConfig,
    native_config,
    register_backend_compiler,
)

__all__ = [
    "RECOMPILE_LIMIT",
    "BackendCompiler",
    "BreakReason",
    "CompiledFunction",
    "ExplainOutput",
    "NativeConfig",
    "Program",
    "Unsupported",
    "compile",
    "disable",
    "explain",
    "is_compiling",
    "list_backends",
    "native_config",
    "register_backend_compiler",
    "register_module_type",
    "replayable",
    "reset",
    "value_check",
]
