"""Capture: run a function once eagerly while recording every step that makes a tensor, and
turn the record into straight-line Python (a :class:`Program`) that replays those steps.

The steps are the ops (``Function.apply``, seen through ``observe_ops``) and the calls marked
``lucid._replay.replayable`` (random sampling, in-place writes). A replay calls each op's
``apply`` on the tensors of this call, so autograd records the same graph as the eager run
(same nodes, same saved tensors, hooks inside ops and double backward included); what it
skips is the Python around the ops: module calls, argument checks, shape arithmetic. Python
that reads tensor values (``item``, ``bool``, ``tolist``, NumPy conversion) is a graph break:
the capture keeps running eagerly and reports it (or raises, with ``fullgraph=True``).
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from lucid import _replay
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import observe_ops
from lucid.compiler._arrays import _D, _S, VALUE_READS, ArrayProgram
from lucid.compiler._native import NativeProgram, native_missing

# Where a tensor may be made outside the recorded steps and still be a constant of the
# program: the factories (from Python data, zeros, full...) and Tensor's own aliasing methods.
_CONSTANT_MAKERS = ("lucid._creation", "lucid._legacy", "lucid.ops._util", "lucid._compat",
                    "lucid._tensor", "lucid._binder")  # fmt: skip
# Methods that read a tensor's values into Python: a graph break inside a capture.
_VALUE_READS = VALUE_READS
# Methods that change a tensor's autograd state without an op: not replayed, so a break too.
_STATE_CHANGES = ("register_hook", "retain_grad", "requires_grad_")


class TorchDynamoException(RuntimeError):
    """The base of the compile errors (``torch._dynamo.exc.TorchDynamoException``)."""


class Unsupported(TorchDynamoException):
    """A graph break under ``fullgraph=True`` (``torch._dynamo.exc.Unsupported``)."""


class RecompileError(TorchDynamoException):
    """A capture after the first with ``config.error_on_recompile`` set
    (``torch._dynamo.exc.RecompileError``)."""


class InvalidBackend(TorchDynamoException):
    """A ``backend=`` name no compile accepts (``torch._dynamo.exc.InvalidBackend``)."""


class FailOnRecompileLimitHit(Exception):  # noqa: N818 - torch's name
    """``fullgraph=True`` and the recompile limit reached
    (``torch._dynamo.exc.FailOnRecompileLimitHit``; an ``Exception``, as torch's)."""


@dataclass
class BreakReason:
    """Why a capture ended in a graph break, and where in the user's code it happened."""

    reason: str
    user_stack: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        where = f" ({self.user_stack[-1]})" if self.user_stack else ""
        return f"{self.reason}{where}"


class Program:
    """A captured function as straight-line Python: ``run(leaves)`` calls its steps on the
    tensors of this call (``leaves``: the arguments' tensors, in order) and returns the
    output structure."""

    def __init__(self, source: str, consts: list[Any], ops: list[str], seconds: float) -> None:
        self.source = source
        self.ops = ops
        self.capture_seconds = seconds
        namespace: dict[str, Any] = {"_alias": _alias, "_fresh": _fresh}
        exec(compile(source, "<lucid.compile program>", "exec"), namespace)  # noqa: S102
        self._run = namespace["run"]
        self._consts = consts
        self.arrays: ArrayProgram | None = None  # the array-level replay, where it fits
        self.arrays_why = ""  # why there is none
        self.native: NativeProgram | None = None  # the backend's compiler's, where it fits
        self.native_why = ""  # why the backend's compiler does not run it ("": none applies)
        self.ordered = False  # the function returned an OrderedDict (the replay a dict)

    @property
    def op_count(self) -> int:
        """How many steps (ops and replayed calls) one replay runs."""
        return len(self.ops)

    def run(self, leaves: list[Tensor]) -> Any:
        """Replay the steps on ``leaves`` (tensors with the guarded shapes and dtypes)."""
        if self.ordered:
            return OrderedDict(self._replay(leaves))
        return self._replay(leaves)

    def _replay(self, leaves: list[Tensor]) -> Any:
        native = self.native
        if native is not None and native.usable():
            return native.run(leaves)
        fast = self.arrays
        if fast is not None and fast.usable():
            return fast.run(leaves)
        return self._run(leaves, self._consts, grad_mode._state)


def user_frame(skip_lucid: bool = True) -> str:
    """``file:line in function`` of the innermost frame outside lucid's own packages (the
    model zoo, ``lucid.models``, counts as user code)."""
    f: Any = sys._getframe(1)
    while f is not None:
        name = f.f_globals.get("__name__", "")
        inside = name == "lucid" or (
            name.startswith("lucid.") and not name.startswith("lucid.models")
        )
        if not (skip_lucid and inside):
            return f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"
        f = f.f_back
    return "<unknown>"


def _maker() -> str:
    """The module that asked for the tensor being made (the first frame outside Tensor's
    constructors)."""
    f: Any = sys._getframe(2)
    while f is not None and f.f_code.co_name in (
        "born",
        "_set_fields",
        "from_backend_array",
        "__init__",
    ):
        f = f.f_back
    return "" if f is None else str(f.f_globals.get("__name__", ""))


class Recorder:
    """The state of one capture: slots (one Python local per tensor), the statements that
    make them, constants, and the first graph break."""

    def __init__(self, fullgraph: bool) -> None:
        self.fullgraph = fullgraph
        self.stmts: list[tuple[list[int], str, list[int]]] = []  # (targets, code, uses)
        self.consts: list[Any] = []
        self.slot_of: dict[int, int] = {}  # id(tensor) -> slot
        self.array_slot: dict[int, int] = {}  # id(array) -> slot holding a tensor of it
        self.made: set[int] = set()  # constant slots made during the capture (by factories)
        self.mutated: set[int] = set()  # of those, the ones written in place
        self.born: dict[int, str] = {}  # id(tensor made during the capture) -> its maker
        self.keep: list[Any] = []  # every tensor seen, alive until the end (ids stay unique)
        self._kept: dict[int, int] = {}  # slot -> index of its tensor in keep
        self.n = 0
        self.depth = 0  # inside a replayable call: its inner ops are not steps of their own
        self.breaks: list[BreakReason] = []
        self.ops: list[str] = []
        self.grad0 = self.grad = grad_mode._state.enabled
        self.grad_toggles = False
        self.tsteps: list[tuple[Any, ...]] = []  # the steps as data, for the array replay
        self.slot_meta: dict[int, tuple[bool, Any, Any, Any]] = {}  # rg, backend, shape, dtype

    # -- graph breaks ---------------------------------------------------------------------------
    def graph_break(self, reason: str) -> None:
        """Note a break (the first one decides); with ``fullgraph`` raise it at once."""
        where = user_frame()
        if self.fullgraph:
            raise Unsupported(
                f"lucid.compile(fullgraph=True): graph break at {where}: {reason}. Move this "
                "out of the compiled function, or compile without fullgraph=True (the "
                "function then runs eagerly for this input signature)."
            )
        self.breaks.append(BreakReason(reason, [where]))

    # -- slots ------------------------------------------------------------------------------------
    def _new_slot(self, t: Tensor) -> int:
        n = self.n
        self.n += 1
        self.slot_of[id(t)] = n
        self.array_slot[id(t._data)] = n
        self._kept[n] = len(self.keep)
        self.keep.append(t)
        d = t._data
        self.keep.append(d)  # alive too: an in-place write replaces it, and array_slot must
        # not meet its id again on another array (a new tensor taken for an alias of the slot)
        self.slot_meta[n] = (t.requires_grad, t._backend, tuple(d.shape), d.dtype)
        return n

    def _const(self, value: Any) -> str:
        self.consts.append(value)
        return f"C[{len(self.consts) - 1}]"

    def arg(self, t: Tensor) -> int:
        """A slot for an argument's tensor (read from ``A`` at each replay)."""
        return self._new_slot(t)

    def ref(self, t: Tensor) -> int:
        """The slot of ``t``, making one for a tensor from outside (a parameter, a buffer, a
        global: read by reference at each replay), for a constant made by a factory, or for
        an alias of a slot's storage (``detach``, ``.data``)."""
        k = self.slot_of.get(id(t))
        if k is not None:
            return k
        maker = self.born.get(id(t))
        if maker is not None:
            src = self.array_slot.get(id(t._data))
            if src is not None and t.grad_fn is None:
                n = self._new_slot(t)
                self.stmts.append(([n], f"_alias(s{src}, {t.requires_grad})", [src]))
                self.tsteps.append(("alias", n, src, t.requires_grad))
                return n
            if maker not in _CONSTANT_MAKERS:
                self.graph_break(f"a tensor made outside the recorded ops (by {maker})")
        n = self._new_slot(t)
        value = t
        if maker is not None:  # made here: its value now (later in-place writes replay)
            self.made.add(n)
            value = Tensor.from_backend_array(t._backend.copy(t._data), t._backend,
                                              t.requires_grad)  # fmt: skip
        self.stmts.append(([n], self._const(value), []))
        self.tsteps.append(("const", n, value))
        return n

    def tmpl(self, x: Any) -> Any:
        """``x`` (arguments or outputs, after ``render``) as data: slots for tensors."""
        if isinstance(x, Tensor):
            return _S(self.ref(x))
        tx = type(x)
        if tx is tuple or tx is list:
            return tx([self.tmpl(v) for v in x])
        if isinstance(x, tuple) and hasattr(tx, "_fields"):
            return tx(*[self.tmpl(v) for v in x])
        if tx is dict:
            return {k: self.tmpl(v) for k, v in x.items()}
        if tx not in (int, float, bool, str, type(None)):
            a = self.array_slot.get(id(x))
            if a is not None and self.keep[self._kept[a]]._data is x:
                return _D(a)
        return x

    def render(self, x: Any, uses: list[int]) -> str:
        """``x`` (an argument) as Python source over the slots and constants."""
        if isinstance(x, Tensor):
            k = self.ref(x)
            uses.append(k)
            return f"s{k}"
        tx = type(x)
        if tx is tuple:
            return "(" + "".join(self.render(v, uses) + ", " for v in x) + ")"
        if tx is list:
            return "[" + ", ".join(self.render(v, uses) for v in x) + "]"
        if tx is dict and all(type(k) is str for k in x):
            return "{" + ", ".join(f"{k!r}: {self.render(v, uses)}" for k, v in x.items()) + "}"
        if tx in (int, bool, type(None)) or (tx is float and x == x and abs(x) != float("inf")):
            return repr(x)
        a = self.array_slot.get(id(x))
        if a is not None and self.keep[self._kept[a]]._data is x:  # a tensor's array, bare
            uses.append(a)
            return f"s{a}._data"
        return self._const(x)

    def _call_code(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                   uses: list[int]) -> str:  # fmt: skip
        parts = [self.render(a, uses) for a in args]
        parts += [f"{k}={self.render(v, uses)}" for k, v in kwargs.items()]
        return f"{self._const(fn)}({', '.join(parts)})"

    def _outputs(self, result: Any) -> list[int] | None:
        if isinstance(result, Tensor):
            return [self._new_slot(result)]
        if type(result) is tuple and all(isinstance(r, Tensor) for r in result):
            return [self._new_slot(r) for r in result]
        return None

    def _grad_mode_step(self) -> None:
        enabled = grad_mode._state.enabled
        if enabled != self.grad:
            self.grad = enabled
            self.grad_toggles = True
            self.stmts.append(([], f"G.enabled = {enabled}", []))
            self.tsteps.append(("grad", enabled))

    # -- listeners ------------------------------------------------------------------------------
    def on_op(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        """``observe_ops``' callback: one ``Function.apply`` becomes one step."""
        if self.depth or self.breaks:
            return
        self._grad_mode_step()
        uses: list[int] = []
        if "device" not in kwargs and not any(isinstance(a, Tensor) for a in args):
            kwargs = {**kwargs, "device": result_device(result)}  # apply popped it
        code = self._call_code(getattr(cls, "apply"), args, kwargs, uses)  # noqa: B009
        outs = self._outputs(result)
        assert outs is not None  # apply returns a Tensor or a tuple of them
        self.stmts.append((outs, code, uses))
        self.ops.append(cls.__name__)
        res = result if type(result) is tuple else (result,)
        needs = tuple([isinstance(a, Tensor) and a.requires_grad for a in args])
        self.tsteps.append(("op", cls, self.tmpl(args), self.tmpl(kwargs), outs, needs,
                            tuple([r.requires_grad for r in res]), type(result) is tuple,
                            res[0]._backend))  # fmt: skip

    def on_call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``_replay``'s listener: a replayable call runs here and becomes one step."""
        if self.depth or self.breaks or getattr(fn, "_lucid_value_check", False):
            self.depth += 1  # (a value check: neither recorded nor a break)
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth -= 1
        self._grad_mode_step()
        uses: list[int] = []
        code = self._call_code(fn, args, kwargs, uses)
        targs, tkw = self.tmpl(args), self.tmpl(kwargs)  # (before the call: a write re-slots)
        if fn.__name__ == "_inplace_result" and uses and uses[0] in self.made:
            self.mutated.add(uses[0])
        self.depth += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        outs = self._outputs(result)
        if outs is None:
            self.graph_break(f"{fn.__name__} returned {type(result).__name__}, not tensors")
        else:
            self.stmts.append((outs, code, uses))
            self.ops.append(fn.__name__.lstrip("_"))
            res = result if type(result) is tuple else (result,)
            rgs = [a.requires_grad for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
            self.tsteps.append(("call", fn, targs, tkw, outs,
                                tuple(rgs + [r.requires_grad for r in res]),
                                type(result) is tuple, res[0]._backend))  # fmt: skip
        return result

    def on_born(self, t: Tensor) -> None:
        """A tensor was made: remember by whom, to tell constants from unrecorded work."""
        self.born[id(t)] = _maker()
        self.keep.append(t)

    # -- the program ----------------------------------------------------------------------------
    def render_output(self, out: Any, uses: list[int]) -> str | None:
        """The returned structure as source, or None (and a break) for one it cannot rebuild."""
        if isinstance(out, Tensor):
            return self.render(out, uses)
        tx = type(out)
        if tx in (tuple, list) or (isinstance(out, tuple) and hasattr(tx, "_fields")):
            items = [self.render_output(v, uses) for v in out]
            if any(i is None for i in items):
                return None
            body = "".join(f"{i}, " for i in items)
            if tx is list:
                return f"[{body}]"
            return f"({body})" if tx is tuple else f"{self._const(tx)}({body})"
        if tx is dict:
            pairs = [(self._const(k), self.render_output(v, uses)) for k, v in out.items()]
            if any(v is None for _, v in pairs):
                return None
            return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        if out is None or tx in (int, float, bool, str):
            return self._const(out)
        self.graph_break(
            f"the function returned a {tx.__name__}, which lucid.compile cannot rebuild "
            "(return tensors, or tuples, lists and dicts of them)"
        )
        return None

    def program(self, n_args: int, out: Any, started: float) -> Program | None:
        """The straight-line replay of what was recorded, or None after a graph break."""
        if self.breaks:
            return None
        ordered = type(out) is OrderedDict  # torchvision's segmentation models return one
        if ordered:
            out = dict(out)  # the program returns a dict, ``run`` the OrderedDict
        uses: list[int] = []
        ret = self.render_output(out, uses)
        if ret is None or self.breaks:
            return None
        lines = ["def run(A, C, G):"]
        if n_args:
            lines.append("    " + "".join(f"s{i}, " for i in range(n_args)) + "= A")
        last = _last_uses(self.stmts, set(uses))
        body: list[str] = []
        for k, (targets, code, _) in enumerate(self.stmts):
            if targets and targets[0] in self.mutated:  # a constant written in place: a copy
                code = f"_fresh({code})"
            lhs = "".join(f"s{t}, " for t in targets) if len(targets) > 1 else ""
            if len(targets) == 1:
                lhs = f"s{targets[0]}"
            body.append(f"{lhs} = {code}" if targets else code)
            dead = last.get(k)
            if dead:
                body.append("del " + ", ".join(f"s{d}" for d in sorted(dead)))
        body.append(f"return {ret}")
        if self.grad_toggles:
            lines += ["    try:"] + [f"        {b}" for b in body]
            lines += ["    finally:", f"        G.enabled = {self.grad0}"]
        else:
            lines += [f"    {b}" for b in body]
        source = "\n".join(lines) + "\n"
        prog = Program(source, self.consts, self.ops, time.perf_counter() - started)
        prog.ordered = ordered
        fast = ArrayProgram.build(self, n_args, out)
        if isinstance(fast, str):
            prog.arrays_why = fast
            prog.native_why = native_missing(self.slot_meta, fast)
        else:
            prog.arrays = fast
            native = NativeProgram.build(fast, self)
            if isinstance(native, str):
                prog.native_why = native
            else:
                prog.native = native
            if fast.native_only:  # only the backend's compiler can run this on arrays
                prog.arrays, prog.arrays_why = None, fast.native_only
                if isinstance(native, str) and not native:
                    prog.native_why = native_missing(self.slot_meta, fast.native_only)
            prog.capture_seconds = time.perf_counter() - started
        return prog


def _alias(t: Tensor, requires_grad: bool) -> Tensor:
    """A tensor on ``t``'s storage without its graph (what ``detach()`` / ``.data`` made)."""
    out = Tensor.from_backend_array(t._data, t._backend, requires_grad)
    out._vc = t._counter()
    return out


def _fresh(t: Tensor) -> Tensor:
    """A copy of a constant that the program writes in place (each replay starts from it)."""
    return Tensor.from_backend_array(t._backend.copy(t._data), t._backend, t.requires_grad)


def result_device(result: Any) -> str:
    """The device of an op's (first) output."""
    t = result[0] if type(result) is tuple else result
    return str(t.device)


def _last_uses(
    stmts: list[tuple[list[int], str, list[int]]], keep: set[int]
) -> dict[int, set[int]]:
    """Per statement, the slots read or made there for the last time (``del`` after it)."""
    last: dict[int, int] = {}
    for k, (targets, _, uses) in enumerate(stmts):
        for s in (*targets, *uses):
            last[s] = k
    out: dict[int, set[int]] = {}
    for s, k in last.items():
        if s not in keep:
            out.setdefault(k, set()).add(s)
    return out


@contextmanager
def recording(rec: Recorder) -> Iterator[None]:
    """Listen to ops, replayable calls, tensor births, value reads and autograd-state
    changes for the duration of one capture."""
    saved = {name: getattr(Tensor, name) for name in (*_VALUE_READS, *_STATE_CHANGES)}
    set_fields = Tensor._set_fields

    def born(self: Tensor, data: Any, backend: Any, requires_grad: bool) -> None:
        set_fields(self, data, backend, requires_grad)
        rec.on_born(self)

    def breaking(name: str, orig: Any) -> Any:
        def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            if not rec.depth and not rec.breaks:
                what = "reads the tensor's values" if name in _VALUE_READS else "is not an op"
                rec.graph_break(f"Tensor.{name}() {what}")
            return orig(self, *args, **kwargs)

        return method

    global active
    outer, active = active, rec
    for name, orig in saved.items():
        setattr(Tensor, name, breaking(name, orig))
    Tensor._set_fields = born  # type: ignore[method-assign]
    _replay.listeners.append(rec.on_call)
    try:
        with observe_ops(rec.on_op):
            yield
    finally:
        _replay.listeners.remove(rec.on_call)
        Tensor._set_fields = set_fields  # type: ignore[method-assign]
        for name, orig in saved.items():
            setattr(Tensor, name, orig)
        active = outer


active: Recorder | None = None  # the capture in progress (lucid.compiler.disable breaks it)
