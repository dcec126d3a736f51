"""``lucid.compile``: torch.compile's signature over a capture-and-replay of the ops.

Each compiled callable keeps one entry per guard signature (the arguments' shapes, dtypes,
devices and ``requires_grad``, Python scalars by value, other objects by identity, grad
mode, autocast's state, and the ``training`` flags of the modules it calls): a replayable
:class:`Program`, or the reason it runs eagerly (a graph break, ``dynamic=True``, the
recompile limit).
"""

from __future__ import annotations

import contextlib
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
from lucid.compiler._capture import (
    BreakReason,
    FailOnRecompileLimitHit,
    InvalidBackend,
    Program,
    RecompileError,
    Recorder,
    recording,
)

# torch._dynamo.config.recompile_limit's default: captures per compiled callable before new
# input signatures run eagerly (``config.recompile_limit`` is read at each capture).
RECOMPILE_LIMIT = 8
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
# torch.compiler.set_stance's stances
STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
# torch.compiler.set_default_backend's backend (``compile(backend=None)`` takes it) and
# set_enable_guard_collectives' flag (``_extras``)
_settings: dict[str, Any] = {"backend": "inductor", "guard_collectives": False}


class _State:
    capturing = 0  # captures in progress (a compiled callable called inside one runs inline)
    disabled = 0  # lucid.compiler.disable'd calls in progress
    stance = "default"  # set_stance's
    force_eager = False  # stance == "force_eager": every compiled call runs eagerly


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
                 dynamic: bool | None = None, guard: Any = None, name: str | None = None,
                 recompile_limit: int | None = None) -> None:  # fmt: skip
        self._fn = fn
        self._guard = guard
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.name = name
        self.recompile_limit = recompile_limit  # None: ``config.recompile_limit``
        self._guard_modules: list[Any] | None = None  # found at the first call (a deep copy
        # makes this object while the module it copies is still half built)
        self.cache: dict[Any, Entry] = {}
        self.log: list[Entry] = []  # every entry made, in order (explain reads it)
        functools.update_wrapper(self, fn)
        _compiled.add(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _state.capturing or _state.disabled or _state.force_eager:
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
        if _state.stance == "fail_on_recompile":
            code = getattr(self._fn, "__code__", None) or getattr(
                getattr(self._fn, "forward", None), "__code__", None
            )
            where = "" if code is None else (f" filename: '{code.co_filename}', function name: "
                                             f"'{code.co_name}', line number: "
                                             f"{code.co_firstlineno}")  # fmt: skip
            raise RuntimeError(
                f"Detected recompile when torch.compile stance is 'fail_on_recompile'.{where}"
                f"\n    triggered by inputs {signature}, which no capture of this function "
                "matches"
            )
        if _state.stance == "eager_on_recompile":  # no capture now, and none kept
            return self._fn(*args, **kwargs)
        if self.cache and config.error_on_recompile:
            raise RecompileError(
                f"Recompiling function {_where(self._fn)}\n    triggered by inputs "
                f"{signature}, which no capture of this function matches"
            )
        if self.dynamic:
            reason = ("dynamic=True: lucid captures static shapes only, so this function runs "
                      "eagerly")  # fmt: skip
            return self._eager(key, Entry(signature, None, [BreakReason(reason)]), args, kwargs)
        limit = config.recompile_limit if self.recompile_limit is None else self.recompile_limit
        if len(self.cache) >= limit:
            if self.fullgraph:
                raise FailOnRecompileLimitHit(
                    f"Hard failure due to fullgraph=True: recompile_limit ({limit}) reached "
                    f"by {_where(self._fn)} with inputs {signature}"
                )
            reason = (f"recompile_limit ({limit}) reached: input signatures after "
                      f"the first {limit} run eagerly")  # fmt: skip
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
        return CompiledFunction(fn, fullgraph=self.fullgraph, dynamic=self.dynamic, guard=guard,
                                name=self.name, recompile_limit=self.recompile_limit)  # fmt: skip

    def reset(self) -> None:
        """Forget every capture (the next call of each signature captures again)."""
        self.cache.clear()
        self.log.clear()


def _where(fn: Any) -> str:
    """``fn``'s name and where its code is (``name in file:line``), as torch's recompile
    messages name the function."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "forward", None), "__code__", None)
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return name if code is None else f"{name} in {code.co_filename}:{code.co_firstlineno}"


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
    backend: str | Callable[..., Any] | None = None,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    name: str | None = None,
    disable: bool = False,
    recompile_limit: int | None = None,
    isolate_recompiles: bool = False,
    shapes_spec: Any = None,
) -> Any:
    """``torch.compile``: a callable that runs ``model`` (a function or a Module) by
    capturing its ops on the first call for each input signature and replaying them after.

    A Module comes back wrapped (``OptimizedModule``: ``_orig_mod`` is the original, its
    ``state_dict`` keys start with ``_orig_mod.``); a function comes back as a
    :class:`CompiledFunction`. Without ``model`` it is a decorator. ``fullgraph=True`` makes a
    graph break an error; ``dynamic=True`` runs eagerly (lucid captures static shapes);
    ``disable=True`` returns ``model`` itself. ``backend`` (None: the default backend,
    ``lucid.compiler.set_default_backend``'s) and ``mode`` are checked and otherwise ignored:
    every backend is lucid's capture and replay. ``recompile_limit`` caps this call's captures
    (None: ``lucid._dynamo.config.recompile_limit``); past it new input signatures run
    eagerly, or with ``fullgraph=True`` raise ``FailOnRecompileLimitHit``. ``name`` is kept
    as the compiled callable's ``name``. Each ``compile`` call keeps its own captures, which is
    what ``isolate_recompiles=True`` asks torch for; ``shapes_spec`` is accepted and changes
    nothing (lucid captures each static shape). See the guide, "Compiling a step with
    lucid.compile".

    >>> import lucid
    >>> f = lucid.compile(lambda x: (x * 2).sin())
    >>> f(lucid.ones(3)).shape
    lucid.Size([3])
    """
    if backend is None:
        backend = _settings["backend"]
    if model is None:

        def decorator(fn: Any) -> Any:
            if fn is None:
                raise RuntimeError("Model can't be None")
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles,
                           shapes_spec=shapes_spec)  # fmt: skip

        _check_options(backend, mode, options)
        return decorator
    _check_options(backend, mode, options)
    if not callable(model):
        raise RuntimeError(f"lucid.compile expects a callable (a function or a Module), but "
                           f"got {type(model).__name__}")  # fmt: skip
    if recompile_limit is not None and (
        isinstance(recompile_limit, bool) or not isinstance(recompile_limit, int)
    ):
        raise TypeError(
            f"lucid.compile: recompile_limit must be an int or None, got "
            f"{type(recompile_limit).__name__}"
        )
    if disable:
        return model

    def make(fn: Callable[..., Any], guard: Any = None) -> CompiledFunction:
        return CompiledFunction(fn, fullgraph=fullgraph, dynamic=dynamic, guard=guard,
                                name=name, recompile_limit=recompile_limit)  # fmt: skip

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
        raise InvalidBackend(
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


class _Config:
    """``torch._dynamo.config`` (``lucid._dynamo.config``): the options real programs set.

    ``recompile_limit`` (``cache_size_limit`` is its old name) is how many input signatures a
    compiled callable captures before later ones run eagerly; ``error_on_recompile`` makes a
    capture after the first an error. The others are kept and read back as torch's are, and
    change nothing in lucid, which captures static shapes, never raises on a failed capture
    unless ``fullgraph=True`` (what ``suppress_errors`` asks for), and compiles no Python
    bytecode. Setting a name torch's config does not have raises ``AttributeError``, as torch.
    """

    _DEFAULTS: dict[str, Any] = {
        "recompile_limit": RECOMPILE_LIMIT,
        "accumulated_recompile_limit": 256,
        "suppress_errors": False,
        "verbose": False,
        "error_on_recompile": False,
        "capture_scalar_outputs": False,
        "capture_dynamic_output_shape_ops": False,
        "automatic_dynamic_shapes": True,
        "assume_static_by_default": True,
        "optimize_ddp": True,
        "inline_inbuilt_nn_modules": True,
        "specialize_int": False,
        "specialize_float": False,
        "force_parameter_static_shapes": True,
    }
    _ALIASES = {"cache_size_limit": "recompile_limit",
                "accumulated_cache_size_limit": "accumulated_recompile_limit"}  # fmt: skip

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(self._DEFAULTS))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        key = self._ALIASES.get(name, name)
        if key in values:
            return values[key]
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        key = self._ALIASES.get(name, name)
        if key not in self._values:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        self._values[key] = value

    def __dir__(self) -> list[str]:
        return sorted({*self._values, *self._ALIASES})

    def get_config_copy(self) -> dict[str, Any]:
        """Every option and its value (torch's ``config.get_config_copy()``)."""
        return {name: getattr(self, name) for name in self.__dir__()}

    def patch(self, arg: dict[str, Any] | str | None = None, value: Any = None,
              **changes: Any) -> Any:  # fmt: skip
        """``config.patch(name=value, ...)`` (or ``patch("name", value)``, ``patch({...})``):
        a context manager and decorator setting the options inside it, restoring them after."""
        if isinstance(arg, str):
            changes[arg] = value
        elif isinstance(arg, dict):
            changes.update(arg)
        for name in changes:
            getattr(self, name)  # unknown names raise now, as torch's
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config: _Config, changes: dict[str, Any]) -> None:
        self.config, self.changes = config, changes
        self.saved: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        self.saved.append({name: getattr(self.config, name) for name in self.changes})
        for name, value in self.changes.items():
            setattr(self.config, name, value)

    def __exit__(self, *exc: Any) -> None:
        for name, value in self.saved.pop().items():
            setattr(self.config, name, value)


config = _Config()


def _set_stance(stance: str) -> str:
    if stance not in STANCES:
        raise RuntimeError(
            f"invalid torch.compile stance '{stance}': expected one of {', '.join(STANCES)}"
        )
    previous = _state.stance
    _state.stance = stance
    _state.force_eager = stance == "force_eager"
    return previous


class set_stance:  # noqa: N801 - torch's name
    """``torch.compiler.set_stance``: how compiled callables behave from now on (a plain
    call), inside a ``with`` block, or during calls of a decorated function.

    - ``"default"``: capture and replay;
    - ``"force_eager"``: every compiled callable runs its function eagerly;
    - ``"eager_on_recompile"``: replay the captures there are, and run eagerly (without
      capturing) where a call would need a new one;
    - ``"fail_on_recompile"``: raise ``RuntimeError`` where a call would need a new capture.

    ``force_backend`` is only for the default stance, as torch's; lucid has one backend, so it
    changes nothing. An unknown stance raises ``RuntimeError`` (torch raises at the next compiled
    call).
    """

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: Any = None) -> None:  # fmt: skip
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = stance
        self.prev = _set_stance(stance)

    def __call__(self, fn: Any) -> Any:  # a decorator: the stance only during its calls
        _set_stance(self.prev)
        stance = self.stance

        @functools.wraps(fn)
        def staged(*args: Any, **kwargs: Any) -> Any:
            with set_stance(stance):
                return fn(*args, **kwargs)

        return staged

    def __enter__(self) -> None:  # __init__ set it and kept the stance before
        _set_stance(self.stance)

    def __exit__(self, *exc: Any) -> None:
        _set_stance(self.prev)
