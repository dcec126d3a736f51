"""``lucid.compile``: torch.compile's signature over a capture-and-replay of the ops.

Each compiled callable keeps one entry per guard signature (the arguments' shapes, dtypes,
devices and ``requires_grad``, Python scalars by value, other objects by identity, grad
mode, autocast's state, and the ``training`` flags of the modules it calls): a replayable
:class:`Program`, or the reason it runs eagerly (a graph break, ``dynamic=True``, the
recompile limit).
"""

from __future__ import annotations

import copy
import functools
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lucid._tensor import Tensor
from lucid.amp import autocast_mode
from lucid.autograd import grad_mode
from lucid.compiler import _capture
from lucid.compiler._capture import BreakReason, Program, Recorder, recording

# torch._dynamo.config.recompile_limit: captures per compiled callable before new input
# signatures run eagerly.
RECOMPILE_LIMIT = 8
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


class _State:
    capturing = 0  # captures in progress (a compiled callable called inside one runs inline)
    disabled = 0  # lucid.compiler.disable'd calls in progress


_state = _State()
_compiled: weakref.WeakSet[CompiledFunction] = weakref.WeakSet()
# (base class, wrapper) pairs lucid.nn registers: compile(module) returns wrapper(module, make)
_module_types: list[tuple[type, Callable[..., Any]]] = []


def register_module_type(base: type, wrap: Callable[..., Any]) -> None:
    """Let ``lucid.compile(obj)`` for an ``obj`` of type ``base`` return ``wrap(obj, make)``,
    where ``make(fn)`` compiles ``fn`` with the call's options guarded on ``obj``'s training
    flags (``lucid.nn`` registers its ``Module`` and ``OptimizedModule`` this way)."""
    _module_types.append((base, wrap))


@dataclass
class Entry:
    """What one input signature runs: ``program`` or, where it is None, the eager function
    (``reasons`` say why)."""

    signature: str
    program: Program | None
    reasons: list[BreakReason] = field(default_factory=list)


class CompiledFunction:
    """A callable ``lucid.compile`` made: replays the capture of its first call for each
    input signature; see :func:`compile`."""

    def __init__(self, fn: Callable[..., Any], *, fullgraph: bool = False,
                 dynamic: bool | None = None, guard: Any = None) -> None:  # fmt: skip
        self._fn = fn
        self._guard = guard
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self._guard_modules: list[Any] | None = None  # found at the first call (a deep copy
        # makes this object while the module it copies is still half built)
        self.cache: dict[Any, Entry] = {}
        self.log: list[Entry] = []  # every entry made, in order (explain reads it)
        functools.update_wrapper(self, fn)
        _compiled.add(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _state.capturing or _state.disabled:
            return self._fn(*args, **kwargs)
        leaves: list[Tensor] = []
        mods = self._guard_modules
        if mods is None:
            mods = self._guard_modules = _modules_of(
                self._fn if self._guard is None else self._guard
            )
        amp = autocast_mode._state
        key = (grad_mode._state.enabled, _spec(args, leaves), _spec(kwargs, leaves),
               tuple([m.training for m in mods]),
               amp.active and (tuple(amp.enabled.items()), tuple(amp.dtype.items())))  # fmt: skip
        entry = self.cache.get(key)
        if entry is None:
            return self._first_call(key, args, kwargs, leaves)
        program = entry.program
        if program is None:
            return self._fn(*args, **kwargs)
        return program.run(leaves)

    def _first_call(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    leaves: list[Tensor]) -> Any:  # fmt: skip
        signature = _describe(leaves, key[0])
        if self.dynamic:
            reason = ("dynamic=True: lucid captures static shapes only, so this function runs "
                      "eagerly")  # fmt: skip
            return self._eager(key, Entry(signature, None, [BreakReason(reason)]), args, kwargs)
        if len(self.cache) >= RECOMPILE_LIMIT:
            reason = (f"recompile_limit ({RECOMPILE_LIMIT}) reached: input signatures after "
                      f"the first {RECOMPILE_LIMIT} run eagerly")  # fmt: skip
            return self._eager(key, Entry(signature, None, [BreakReason(reason)]), args, kwargs)
        rec = Recorder(self.fullgraph)
        started = time.perf_counter()
        for t in leaves:
            rec.arg(t)
        _state.capturing += 1
        try:
            with recording(rec):
                out = self._fn(*args, **kwargs)
        finally:
            _state.capturing -= 1
        program = rec.program(len(leaves), out, started)
        entry = Entry(signature, program, rec.breaks)
        self.cache[key] = entry
        self.log.append(entry)
        return out

    def _eager(self, key: Any, entry: Entry, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.cache[key] = entry
        self.log.append(entry)
        return self._fn(*args, **kwargs)

    def __deepcopy__(self, memo: dict[int, Any]) -> CompiledFunction:
        # A copy compiles the copied function (a copied module's call) afresh: the captures
        # hold this one's tensors by reference.
        fn = copy.deepcopy(self._fn, memo)
        guard = None if self._guard is None else copy.deepcopy(self._guard, memo)
        return CompiledFunction(fn, fullgraph=self.fullgraph, dynamic=self.dynamic, guard=guard)

    def reset(self) -> None:
        """Forget every capture (the next call of each signature captures again)."""
        self.cache.clear()
        self.log.clear()


def _spec(x: Any, leaves: list[Tensor]) -> Any:
    """The guard of one argument; its tensors are appended to ``leaves`` in order."""
    if isinstance(x, Tensor):
        leaves.append(x)
        data = x._data
        return (data.shape, data.dtype, x._backend, x.requires_grad)
    tx = type(x)
    if tx in (int, float, bool, str, type(None)):
        return (tx, x)
    if tx is tuple or tx is list or (isinstance(x, tuple) and hasattr(tx, "_fields")):
        return (tx, tuple([_spec(v, leaves) for v in x]))
    if tx is dict:
        return (tx, tuple([(k, _spec(v, leaves)) for k, v in x.items()]))
    return (tx, id(x))


def _describe(leaves: list[Tensor], grad: bool) -> str:
    shapes = ", ".join(f"{t.dtype.name}{list(t.shape)}{'*' if t.requires_grad else ''}"
                       for t in leaves)  # fmt: skip
    return f"({shapes}) grad={'on' if grad else 'off'}"


def _modules_of(obj: Any) -> list[Any]:
    """The modules whose ``training`` flags a capture of ``obj`` depends on: ``obj`` itself
    (or the module of a bound method) and those its closure and globals name."""
    found: list[Any] = []
    bases = tuple(b for b, _ in _module_types)
    if not bases:
        return found
    seen: list[Any] = [obj, getattr(obj, "__self__", None)]
    code = getattr(obj, "__code__", None)
    if code is not None:
        seen += [c.cell_contents for c in (getattr(obj, "__closure__", None) or ())
                 if _has_contents(c)]  # fmt: skip
        glb = getattr(obj, "__globals__", {})
        seen += [glb[n] for n in code.co_names if n in glb]
    for o in seen:
        if isinstance(o, bases):
            mods: list[Any] = list(o.modules())  # type: ignore[attr-defined]
            found += [m for m in mods if all(m is not f for f in found)]
    return found


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def compile(  # noqa: A001 - torch's name
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable[..., Any] = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
) -> Any:
    """``torch.compile``: a callable that runs ``model`` (a function or a Module) by
    capturing its ops on the first call for each input signature and replaying them after.

    A Module comes back wrapped (``OptimizedModule``: ``_orig_mod`` is the original, its
    ``state_dict`` keys start with ``_orig_mod.``); a function comes back as a
    :class:`CompiledFunction`. Without ``model`` it is a decorator. ``fullgraph=True`` makes a
    graph break an error; ``dynamic=True`` runs eagerly (lucid captures static shapes);
    ``disable=True`` returns ``model`` itself. ``backend`` and ``mode`` are checked and
    otherwise ignored: every backend is lucid's capture and replay. See the guide,
    "Compiling a step with lucid.compile".

    >>> import lucid
    >>> f = lucid.compile(lambda x: (x * 2).sin())
    >>> f(lucid.ones(3)).shape
    lucid.Size([3])
    """
    _check_options(backend, mode, options)
    if model is None:

        def decorator(fn: Any) -> Any:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)  # fmt: skip

        return decorator
    if not callable(model):
        raise RuntimeError(f"lucid.compile expects a callable (a function or a Module), but "
                           f"got {type(model).__name__}")  # fmt: skip
    if disable:
        return model

    def make(fn: Callable[..., Any], guard: Any = None) -> CompiledFunction:
        return CompiledFunction(fn, fullgraph=fullgraph, dynamic=dynamic, guard=guard)

    for base, wrap in _module_types:
        if isinstance(model, base):
            return wrap(model, make)
    return make(model)


def _check_options(backend: Any, mode: Any, options: Any) -> None:
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(
            f"Invalid backend: '{backend}', see `lucid.compiler.list_backends()` for available "
            "backends."
        )
    if not isinstance(backend, str):
        raise NotImplementedError(
            f"lucid.compile(backend=<callable {getattr(backend, '__name__', backend)}>): "
            "lucid has no FX graphs to hand a custom backend; use one of "
            f"{', '.join(_BACKENDS)}"
        )


def list_backends(exclude_tags: Any = None) -> list[str]:
    """The backend names ``lucid.compile`` accepts (all run lucid's capture and replay)."""
    return sorted(_BACKENDS)


def disable(fn: Any = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """``torch.compiler.disable``: ``fn`` always runs eagerly. Called inside a capture it is a
    graph break (the calling signature then runs eagerly); ``lucid.compile(fn)`` of it runs
    eagerly too. Without ``fn`` it is a decorator."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        active = _capture.active
        if _state.capturing and active is not None:
            active.graph_break(
                f"call to {getattr(fn, '__qualname__', fn)}, marked lucid.compiler.disable"
                + (f" ({reason})" if reason else "")
            )
        _state.disabled += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _state.disabled -= 1

    return eager


def reset() -> None:
    """``torch.compiler.reset``: forget every capture of every compiled callable."""
    for c in list(_compiled):
        c.reset()


def is_compiling() -> bool:
    """``torch.compiler.is_compiling``: whether a capture is running now."""
    return _state.capturing > 0
