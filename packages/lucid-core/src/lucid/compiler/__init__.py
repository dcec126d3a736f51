"""``lucid.compiler`` (``torch.compiler``): the controls of :func:`lucid.compile` — ``disable``,
``reset``, ``set_stance``, ``is_compiling``, ``list_backends`` and the rest of torch.compiler's
functions (``_extras``) — and ``explain`` (``torch._dynamo.explain``; ``lucid._dynamo`` holds
the ``torch._dynamo`` names programs use).

``lucid.compile`` captures a function's ops on its first call for each input signature and
replays them, without the Python between the ops, on later calls; see the guide "Compiling a
step with lucid.compile" for what is captured, what breaks a graph and how to read
``explain``.
"""

from __future__ import annotations

from lucid._replay import replayable, value_check
from lucid.compiler._api import (
    RECOMPILE_LIMIT,
    STANCES,
    CompiledFunction,
    compile,
    disable,
    is_compiling,
    list_backends,
    register_module_type,
    reset,
    set_stance,
)
from lucid.compiler._capture import BreakReason, Program, Unsupported
from lucid.compiler._explain import ExplainOutput, explain
from lucid.compiler._extras import (
    CacheInfo,
    allow_in_graph,
    assume_constant_result,
    cudagraph_mark_step_begin,
    get_default_backend,
    is_dynamo_compiling,
    is_exporting,
    keep_portable_guards_unsafe,
    keep_tensor_guards_unsafe,
    load_cache_artifacts,
    load_compiled_function,
    nested_compile_region,
    save_cache_artifacts,
    set_default_backend,
    set_enable_guard_collectives,
    skip_all_guards_unsafe,
    skip_guard_on_all_nn_modules_unsafe,
    skip_guard_on_globals_unsafe,
    skip_guard_on_inbuilt_nn_modules_unsafe,
    substitute_in_graph,
    wrap_numpy,
)
from lucid.compiler._native import (
    BackendCompiler,
    NativeConfig,
    native_config,
    register_backend_compiler,
)

__all__ = [
    "RECOMPILE_LIMIT",
    "STANCES",
    "BackendCompiler",
    "BreakReason",
    "CacheInfo",
    "CompiledFunction",
    "ExplainOutput",
    "NativeConfig",
    "Program",
    "Unsupported",
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "explain",
    "get_default_backend",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "keep_portable_guards_unsafe",
    "keep_tensor_guards_unsafe",
    "list_backends",
    "load_cache_artifacts",
    "load_compiled_function",
    "native_config",
    "nested_compile_region",
    "register_backend_compiler",
    "register_module_type",
    "replayable",
    "reset",
    "save_cache_artifacts",
    "set_default_backend",
    "set_enable_guard_collectives",
    "set_stance",
    "skip_all_guards_unsafe",
    "skip_guard_on_all_nn_modules_unsafe",
    "skip_guard_on_globals_unsafe",
    "skip_guard_on_inbuilt_nn_modules_unsafe",
    "substitute_in_graph",
    "value_check",
    "wrap_numpy",
]
