"""``lucid.jit`` (``torch.jit``): TorchScript's names, for programs that use them, run eagerly.

lucid has no TorchScript compiler (and torch 2.13 deprecates TorchScript: the functions it
deprecates warn here in its words): ``script`` and ``trace`` give back the module or function
they are handed (``trace`` runs it once on the example inputs, with ``is_tracing()`` True, so
an input it cannot take fails there as in torch), marked so that ``isinstance(m,
lucid.jit.ScriptModule)``, ``freeze`` and ``optimize_for_inference`` accept it. The
annotations and decorators model code carries for TorchScript (``is_scripting``, ``ignore``,
``unused``, ``export``, ``annotate``, ``Final``, ``interface``...) behave as they do in
torch's eager mode. What needs TorchScript itself raises ``NotImplementedError`` saying what
to use: ``save``/``load`` of TorchScript archives (save a ``state_dict`` with
``lucid.save``), ``CompilationUnit`` (TorchScript source) and ``export_opnames`` (mobile).
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import importlib
import os
import types
import typing
import warnings
from collections.abc import Callable
from typing import Any, Final

from lucid._toplevel import Future
from lucid._toplevel import fork as _fork
from lucid.utils._weak_ids import WeakIdMap

__all__ = [
    "Attribute",
    "CompilationUnit",
    "Error",
    "Final",
    "Future",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "export_opnames",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "isinstance",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "save",
    "script",
    "script_if_tracing",
    "set_fusion_strategy",
    "strict_fusion",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

_NO_TORCHSCRIPT = "lucid has no TorchScript: modules and functions run eagerly"
_SWITCH = "Please switch to `torch.compile` or `torch.export`."
_USE_COMPILE = "Please use `torch.compile` instead."


def _deprecated(name: str, advice: str) -> None:
    """torch 2.13's DeprecationWarning for ``torch.jit.<name>``, in its words."""
    warnings.warn(f"`torch.jit.{name}` is deprecated. {advice}", DeprecationWarning, stacklevel=3)


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """``torch.jit.fork``: ``func(*args, **kwargs)`` run now, as a done :class:`Future`."""
    _deprecated("fork", _USE_COMPILE)
    return _fork(func, *args, **kwargs)


def wait(future: Future) -> Any:
    """``torch.jit.wait``: the result of a :class:`Future` (``fork``'s)."""
    _deprecated("wait", _USE_COMPILE)
    return future.wait()


# torch.jit.Attribute: a (value, type) pair a ScriptModule's __init__ declares an attribute with
Attribute = collections.namedtuple("Attribute", ["value", "type"])


class Error(RuntimeError):
    """``torch.jit.Error``: what a failing TorchScript program raises."""


# The objects ``script``/``trace`` gave back (by identity, dropped with them).
_scripted: WeakIdMap[bool] = WeakIdMap()


class _ScriptedMeta(type):
    _modules = True  # the class's kind: modules (with parameters) or functions

    def __instancecheck__(cls, obj: Any) -> bool:
        if obj not in _scripted:
            return False
        return callable(obj) and (cls._modules == hasattr(obj, "parameters"))


class ScriptModule(metaclass=_ScriptedMeta):
    """``isinstance(m, lucid.jit.ScriptModule)`` is True for a module ``script`` or ``trace``
    gave back (the module itself, run eagerly)."""

    _modules = True

    def __init__(self) -> None:
        raise NotImplementedError(f"lucid.jit.ScriptModule(): {_NO_TORCHSCRIPT}; subclass "
                                  "lucid.nn.Module instead")  # fmt: skip


class ScriptFunction(metaclass=_ScriptedMeta):
    """``isinstance(f, lucid.jit.ScriptFunction)`` is True for a function ``script`` or
    ``trace`` gave back (the function itself)."""

    _modules = False

    def __init__(self) -> None:
        raise NotImplementedError(f"lucid.jit.ScriptFunction(): {_NO_TORCHSCRIPT}")


class CompilationUnit:
    """``torch.jit.CompilationUnit``: TorchScript source compiled to functions. Not available:
    lucid has no TorchScript compiler (define the functions in Python)."""

    def __init__(self, lang: str | None = None, _frames_up: int = 0) -> None:
        raise NotImplementedError(
            f"lucid.jit.CompilationUnit: {_NO_TORCHSCRIPT}, so TorchScript source cannot be "
            "compiled; write the functions in Python"
        )


class _Tracing:
    depth = 0


_tracing = _Tracing()


def is_scripting() -> bool:
    """``torch.jit.is_scripting``: False (code never runs under TorchScript in lucid)."""
    return False


def is_tracing() -> bool:
    """``torch.jit.is_tracing``: True while ``trace`` runs its function on the examples."""
    return _tracing.depth > 0


def annotate(the_type: Any, the_value: Any) -> Any:
    """``torch.jit.annotate``: ``the_value`` (a type hint for TorchScript)."""
    return the_value


def _matches(obj: Any, target: Any) -> bool:
    origin = typing.get_origin(target)
    if target is Any:
        return True
    if origin is None:
        return builtins.isinstance(obj, target)
    args = typing.get_args(target)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(obj, a) for a in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return not args or all(_matches(v, args[0]) for v in obj)
    if origin is dict:
        return not args or all(_matches(k, args[0]) and _matches(v, args[1])
                               for k, v in obj.items())  # fmt: skip
    if origin is tuple:
        if not args:
            return True
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(_matches(v, a) for v, a in zip(obj, args))
    return True


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - torch's name
    """``torch.jit.isinstance``: ``isinstance`` that also checks the contents of containers
    against a parameterised type (``list[int]``, ``dict[str, Tensor]``, ``tuple[int, ...]``,
    ``Optional[...]``)."""
    return _matches(obj, target_type)


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``torch.jit.ignore`` (``@ignore`` or ``@ignore(drop=True)``): the function itself."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.jit.unused``: the function itself."""
    return fn


def export(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.jit.export``: the method itself."""
    return fn


def interface(obj: Any) -> Any:
    """``torch.jit.interface``: the class itself."""
    _deprecated("interface", _USE_COMPILE)
    return obj


def script_if_tracing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.jit.script_if_tracing``: the function itself."""
    return fn


def script(obj: Any, optimize: None = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:  # fmt: skip
    """``torch.jit.script``: ``obj`` itself (it runs eagerly), marked as scripted."""
    _deprecated("script", _SWITCH)
    if not callable(obj):
        raise RuntimeError(
            f"lucid.jit.script: expected a module, function or class, got {type(obj).__name__}"
        )
    _scripted.setdefault(obj, lambda: True)
    return obj


def _run_examples(fn: Callable[..., Any], inputs: Any, kwargs: Any) -> None:
    args = inputs if builtins.isinstance(inputs, tuple) else (inputs,)
    _tracing.depth += 1
    try:
        fn(*args, **(kwargs or {}))
    finally:
        _tracing.depth -= 1


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: dict[str, Any] | None = None,
          _store_inputs: bool = True) -> Any:  # fmt: skip
    """``torch.jit.trace``: ``func`` itself, after one call on ``example_inputs`` (a tuple, or
    one tensor) with ``is_tracing()`` True. Unlike a torch trace it keeps its Python control
    flow: later inputs take the branches they call for."""
    _deprecated("trace", _SWITCH)
    if not callable(func):
        raise RuntimeError(
            f"lucid.jit.trace: expected a module or function, got {type(func).__name__}"
        )
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
    _run_examples(func, () if example_inputs is None else example_inputs, example_kwarg_inputs)
    _scripted.setdefault(func, lambda: True)
    return func


def trace_module(mod: Any, inputs: dict[str, Any], optimize: Any = None,
                 check_trace: bool = True, check_inputs: Any = None,
                 check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None,
                 _compilation_unit: Any = None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True) -> Any:  # fmt: skip
    """``torch.jit.trace_module``: ``mod`` itself, after calling each method ``inputs`` names
    on its example inputs (``{"forward": (x,)}``)."""
    _deprecated("trace_method", _SWITCH)  # (torch's words)
    if not builtins.isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_examples(method, (), example)
        else:
            _run_examples(method, example, None)
    _scripted.setdefault(mod, lambda: True)
    return mod


def freeze(mod: Any, preserved_attrs: list[str] | None = None,
           optimize_numerics: bool = True) -> Any:  # fmt: skip
    """``torch.jit.freeze``: ``mod`` itself (a scripted module in eval mode, as torch
    requires)."""
    _deprecated("freeze", _USE_COMPILE)
    if mod not in _scripted:
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use torch.jit.script or "
            "torch.jit.trace to script your 'nn.Module'."
        )
    if getattr(mod, "training", False):
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    return mod


def optimize_for_inference(mod: Any, other_methods: list[str] | None = None) -> Any:
    """``torch.jit.optimize_for_inference``: ``freeze(mod.eval())``."""
    _deprecated("optimize_for_inference", _USE_COMPILE)
    if mod not in _scripted:
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script"
            " or torch.jit.trace to script your 'nn.Module'."
        )
    return freeze(mod.eval(), preserved_attrs=other_methods)  # warns too, as torch's


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """``torch.jit.save``: not available (no TorchScript archives)."""
    _deprecated("save", "Please switch to `torch.export`.")
    raise NotImplementedError(
        f"lucid.jit.save: {_NO_TORCHSCRIPT}, and there is no TorchScript archive to write; "
        "save the weights with lucid.save(model.state_dict(), f) and rebuild the model in code"
    )


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:  # fmt: skip
    """``torch.jit.load``: not available (no TorchScript interpreter); a missing file raises
    torch's ValueError first."""
    _deprecated("load", "Please switch to `torch.export`.")
    if builtins.isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
    raise NotImplementedError(
        f"lucid.jit.load: {_NO_TORCHSCRIPT}, so a TorchScript archive's code cannot run; load "
        "a state_dict saved with torch.save through lucid.load into the model built in Python"
    )


def export_opnames(m: Any) -> list[str]:
    """``torch.jit.export_opnames`` (mobile builds): not available."""
    raise NotImplementedError(f"lucid.jit.export_opnames: {_NO_TORCHSCRIPT}")


_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    """``torch.jit.enable_onednn_fusion``: kept (TorchScript's fuser; nothing to fuse)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """``torch.jit.onednn_fusion_enabled``: what ``enable_onednn_fusion`` set (False)."""
    return bool(_fusion["onednn"])


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``torch.jit.set_fusion_strategy``: the previous strategy (kept; nothing to fuse)."""
    _deprecated("set_fusion_strategy", _USE_COMPILE)
    previous: list[tuple[str, int]] = list(_fusion["strategy"])  # type: ignore[call-overload]
    _fusion["strategy"] = list(strategy)
    return previous


class strict_fusion(contextlib.ContextDecorator):  # noqa: N801 - torch's name
    """``torch.jit.strict_fusion``: a block (TorchScript checks its ops all fused; eager code
    has nothing to check)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


# torch.jit.annotations, reached as an attribute. Imported by name: ``from lucid.jit import
# annotations`` would find this module's ``from __future__ import annotations`` feature instead.
annotations = importlib.import_module("lucid.jit.annotations")  # type: ignore[assignment]
