"""The rest of ``torch.compiler``'s public functions, as lucid's capture and replay gives them
meaning.

``lucid.compile`` records the ops a call runs (not Python bytecode), so the hints torch's
tracer takes about Python code (``allow_in_graph``, ``assume_constant_result``,
``substitute_in_graph``, ``nested_compile_region``) change nothing here: the function runs,
and its ops are what is captured. lucid keeps every guard (the input signature), so the
``*_unsafe`` guard filters keep every entry; there are no CUDA graphs and no cache artifacts
across processes. Each function has torch's signature and result type.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lucid._tensor import Tensor
from lucid.compiler._api import _BACKENDS, _settings, is_compiling
from lucid.compiler._capture import InvalidBackend


@dataclass
class CacheInfo:
    """``torch.compiler.CacheInfo``: the artifacts a cache load or save dealt in, by kind."""

    artifacts: defaultdict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def allow_in_graph(fn: Any) -> Any:
    """``torch.compiler.allow_in_graph``: ``fn`` itself (its ops are captured like any code)."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, but got {type(fn).__name__}")
    return fn


def assume_constant_result(fn: Any) -> Any:
    """``torch.compiler.assume_constant_result``: ``fn``, marked. A capture keeps the Python
    values a call computes as constants anyway (tensor ops are what it records)."""
    fn._dynamo_marked_constant = True
    return fn


def substitute_in_graph(
    original_fn: Callable[..., Any], *, can_constant_fold_through: bool = False,
    skip_signature_check: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:  # fmt: skip
    """``torch.compiler.substitute_in_graph``: a decorator for a Python stand-in of
    ``original_fn``; the decorated name calls ``original_fn`` (lucid records the ops that run,
    so there is no tracer for the stand-in to help)."""
    if not callable(original_fn):
        raise TypeError(f"substitute_in_graph expects a callable, got {type(original_fn).__name__}")

    def register(polyfill: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(polyfill):
            raise TypeError(f"the polyfill must be callable, got {type(polyfill).__name__}")

        @functools.wraps(original_fn)
        def call_original(*args: Any, **kwargs: Any) -> Any:
            return original_fn(*args, **kwargs)

        call_original.__torch_dynamo_polyfill__ = polyfill  # type: ignore[attr-defined]
        return call_original

    return register


def nested_compile_region(fn: Any = None, *, options: Any = None, max_reuse_entries: int = 8,
                          reuse_hash_fn: Any = None) -> Any:  # fmt: skip
    """``torch.compiler.nested_compile_region``: ``fn`` (or a decorator giving it back); its
    ops are captured inline, each call as it runs."""
    if fn is None:
        return lambda f: f
    return fn


def cudagraph_mark_step_begin() -> None:
    """``torch.compiler.cudagraph_mark_step_begin``: nothing to mark (no CUDA graphs)."""


def is_dynamo_compiling() -> bool:
    """``torch.compiler.is_dynamo_compiling``: whether a capture is running (``is_compiling``)."""
    return is_compiling()


def is_exporting() -> bool:
    """``torch.compiler.is_exporting``: False (lucid's exports record eager runs)."""
    return False


def get_default_backend() -> str | Callable[..., Any]:
    """``torch.compiler.get_default_backend``: the backend name ``set_default_backend`` set
    ("inductor" unless changed); every one runs lucid's capture and replay."""
    backend: str | Callable[..., Any] = _settings["backend"]
    return backend


def set_default_backend(backend: str | Callable[..., Any] | None) -> None:
    """``torch.compiler.set_default_backend``: one of ``list_backends()`` (None: "inductor")."""
    if backend is None:
        backend = "inductor"
    if not isinstance(backend, str):
        raise NotImplementedError(
            "lucid.compiler.set_default_backend(<callable>): lucid has no FX graphs to hand a "
            f"custom backend; use one of {', '.join(_BACKENDS)}"
        )
    if backend not in _BACKENDS:
        raise InvalidBackend(
            f"Invalid backend: '{backend}', see `lucid.compiler.list_backends()` for available "
            "backends."
        )
    _settings["backend"] = backend


def set_enable_guard_collectives(enabled: bool) -> bool:
    """``torch.compiler.set_enable_guard_collectives``: the previous setting (it changes
    nothing: lucid's guards are local to each process)."""
    previous = bool(_settings["guard_collectives"])
    _settings["guard_collectives"] = bool(enabled)
    return previous


def _keep_all(guard_entries: Any) -> list[bool]:
    return [True for _ in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries: Any) -> list[bool]:
    """A ``guard_filter_fn`` (torch's): one bool an entry, True to keep it. lucid keeps every
    guard, so every entry is True."""
    return _keep_all(guard_entries)


def skip_guard_on_all_nn_modules_unsafe(guard_entries: Any) -> list[bool]:
    """A ``guard_filter_fn``: True for every entry (lucid keeps every guard)."""
    return _keep_all(guard_entries)


def skip_guard_on_globals_unsafe(guard_entries: Any) -> list[bool]:
    """A ``guard_filter_fn``: True for every entry (lucid keeps every guard)."""
    return _keep_all(guard_entries)


def skip_all_guards_unsafe(guard_entries: Any) -> list[bool]:
    """A ``guard_filter_fn``: True for every entry (lucid keeps every guard)."""
    return _keep_all(guard_entries)


def keep_tensor_guards_unsafe(guard_entries: Any, keep_parameters: bool = False) -> list[bool]:
    """A ``guard_filter_fn``: True for every entry (lucid keeps every guard)."""
    return _keep_all(guard_entries)


def keep_portable_guards_unsafe(guard_entries: Any) -> list[bool]:
    """A ``guard_filter_fn``: True for every entry (lucid keeps every guard)."""
    return _keep_all(guard_entries)


def save_cache_artifacts() -> tuple[bytes, CacheInfo] | None:
    """``torch.compiler.save_cache_artifacts``: None, as torch gives where there is nothing to
    save (lucid's captures live in the process that made them)."""
    return None


def load_cache_artifacts(serialized_artifacts: bytes) -> CacheInfo | None:
    """``torch.compiler.load_cache_artifacts``: None (nothing loaded): lucid has no compile
    cache to warm; the first call of each signature captures as usual."""
    if not isinstance(serialized_artifacts, (bytes, bytearray, memoryview)):
        raise TypeError(
            "load_cache_artifacts expects the bytes save_cache_artifacts gave, got "
            f"{type(serialized_artifacts).__name__}"
        )
    return None


def load_compiled_function(
    file: Any, *, f_globals: dict[str, object] | None = None,
    external_data: dict[str, Any] | None = None,
) -> Callable[..., Any]:  # fmt: skip
    """``torch.compiler.load_compiled_function``: not available; lucid compiles nothing ahead
    of time (no ``aot_compile`` files to load)."""
    raise NotImplementedError(
        "lucid.compiler.load_compiled_function: lucid.compile captures in the running process "
        "and writes no ahead-of-time compiled functions (torch's aot_compile files) to load; "
        "compile the function again with lucid.compile"
    )


def wrap_numpy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.compiler.wrap_numpy``: ``fn`` over NumPy arrays as a function over Tensors
    (each Tensor argument as ``.numpy()``, each array it returns as a Tensor)."""
    import numpy as np

    from lucid._creation import as_tensor

    def to_arrays(x: Any) -> Any:
        if isinstance(x, Tensor):
            return x.numpy()
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(to_arrays(v) for v in x)
        if isinstance(x, dict):
            return {k: to_arrays(v) for k, v in x.items()}
        return x

    def to_tensors(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return as_tensor(x)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(to_tensors(v) for v in x)
        if isinstance(x, dict):
            return {k: to_tensors(v) for k, v in x.items()}
        return x

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return to_tensors(fn(*to_arrays(args), **to_arrays(kwargs)))

    return wrapped
