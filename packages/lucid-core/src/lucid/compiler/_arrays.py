"""The array-level replay of a capture: the forward as kernel calls over array slots, and
its backward as one graph node that replays the recorded backward formulas on arrays.

A :class:`ArrayProgram` is built from a :class:`~lucid.compiler._capture.Recorder` next to
its op-level :class:`~lucid.compiler._capture.Program` (which stays the fallback). Its
forward calls each op's ``forward(ctx, *arrays)`` directly: no Tensor per intermediate, no
graph node per op. Where an input needs a gradient the outputs get one node,
:class:`CompiledFunction`, whose backward runs the program's backward:

- the first backward of a program *traces*: it runs each op's own ``backward`` formula, in
  the order and with the gradient sums of the autograd engine, and records the ops those
  formulas call (``observe_ops``) as kernel calls over arrays: the forward's arrays, the
  incoming gradients, and what the op's ``ctx`` kept (its attributes, ``save_for_backward``);
- an op whose backward cannot be recorded that way (it computes on arrays outside the ops,
  makes tensors with factories, writes in place) stays *opaque*: its backward formula is
  called on its ``ctx`` at each replay, which then keeps that ``ctx`` (``opaque`` lists
  them);
- later backwards run the recorded kernel calls; the forward keeps only the arrays and
  ``ctx`` objects they read.

In-place writes replay on arrays where they update a buffer outside autograd (running
statistics); what does not fit (other in-place writes, hooks on saved tensors, anomaly mode,
vmap, complex gradients, parameters whose ``requires_grad`` changed) replays through the
op-level program.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from lucid import _memory_format, _replay
from lucid._tensor import Tensor
from lucid.autograd import anomaly_mode, engine, grad_mode
from lucid.autograd import function as _function
from lucid.autograd.engine import _reduce_to
from lucid.autograd.function import Function, SavedTensor, observe_ops
from lucid.backends._numpy import _compiled
from lucid.compiler import _fused_conv, _fused_elementwise, _fused_gelu
from lucid.ops.elementwise import Mul, Where
from lucid.ops.join import Cat
from lucid.ops.matmul import Matmul
from lucid.ops.shape import Permute, Reshape
from lucid.ops.softmax import Softmax
from lucid.ops.special import Gelu
from lucid.ops.unary import Relu

# Methods that read a tensor's values into Python (a branch on data: a graph break in a
# capture; in a traced backward formula, that op's backward stays whole).
VALUE_READS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__",
               "__array__", "__repr__", "__str__", "__format__", "__dlpack__")  # fmt: skip
# Whether programs built from now on rewrite op chains (``_commute_relu_max_pool``...); off:
# each op runs as captured (A/B measurements, docs/performance.md).
FUSE = True
# Whether recorded backwards run two independent matrix products at once
# (``_paired_products``, with ``FUSE``); off: one after the other, each split as ``matmul``
# splits it.
PAIR_PRODUCTS = True
# Whether such a pair leaves its second product (a weight gradient) running while the recorded
# backward goes on, waiting just before its result is read (``matmul_defer``); off: both are
# waited for at once (``matmul_pair``).
DEFER_PRODUCTS = True
PAIRED = "two independent matrix products ran at once (matmul_pair)"  # its line in ``rewrites``
# Whether the generated forward and backward drop each array's local name after its last use
# (``_free_dead``), so that NumPy's allocator reuses the freed buffer, warm in cache, for the next
# op's result, as eager code's temporaries are; off: every intermediate lives to the return.
FREE_DEAD = True
# Replayed calls that only draw from the generator (their results need no gradient).
_SAMPLERS = ("normal", "uniform", "_random", "randint", "bernoulli", "multinomial", "poisson",
             "rand", "randn", "rand_like", "randn_like", "randint_like", "randperm",
             "exponential", "geometric", "log_normal", "cauchy")  # fmt: skip


class _S:
    """A tensor's slot in a recorded step's arguments."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


class _D(_S):
    """A slot's bare array in a recorded step's arguments."""

    __slots__ = ()


class CompiledFunction(Function):
    """The one graph node of a compiled call: its backward replays the program's backward
    on arrays (``grad_fn.name()`` is ``CompiledFunctionBackward0``)."""

    prog: ArrayProgram
    frame: list[Any] | None
    # None (not zeros) for the outputs no gradient reached, where the engine honours
    # ``set_materialize_grads(False)``: eager mode leaves the inputs only they reach at None
    _materialize = False

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        """The gradients of the program's inputs that need them, in edge order."""
        if grad_mode._state.enabled:
            raise RuntimeError(
                "lucid.compile: a compiled function's backward is not differentiable "
                "(create_graph=True through it is not supported, as in torch.compile); "
                "call the function uncompiled for higher-order gradients"
            )
        prog, frame = ctx.prog, ctx.frame
        if frame is None:
            raise RuntimeError(_function._FREED_MSG)
        tasks = engine._running.tasks
        if not tasks or not tasks[-1].retain_graph:
            ctx.frame = None  # freed as the eager nodes free what they saved
        bk = ctx.backend
        dead = [i for i, g in enumerate(grads) if g is None]
        if dead:  # the program runs on zeros there; what only they reach stays None below
            grads = tuple([Tensor.from_backend_array(_zeros(bk, *ctx._out_meta[i]), bk)
                           if g is None else g for i, g in enumerate(grads)])  # fmt: skip
        if prog.bwd is None:
            got = prog.trace(ctx, frame, list(grads))
        else:
            arrays = prog.bwd(frame, [g._data for g in grads], prog.consts)
            got = tuple([None if r is None else Tensor.from_backend_array(r, bk) for r in arrays])
        if not dead:
            return got
        reach = prog.reach()
        live = set().union(*[reach[i] for i in range(len(grads)) if i not in dead])
        return tuple([g if e in live else None for e, g in enumerate(got)])


def _save(c: Any) -> None:
    """Give ``c`` what ``Function.apply`` would have saved for its backward formula."""
    items = c._to_save
    if items:
        c._saved = [SavedTensor(i, i._version) if isinstance(i, Tensor) else SavedTensor(i, 0)
                    for i in items]  # fmt: skip


def _opaque(cls: Any, c: Any, grads: list[Any], bk: Any, n: int) -> list[Any]:
    """An opaque step: ``cls.backward`` on ``c`` and Tensor gradients; the arrays of its
    first ``n`` results (one per input)."""
    r = cls.backward(c, *[Tensor.from_backend_array(g, bk) for g in grads])
    if type(r) is not tuple:
        r = (r,)
    return [None if g is None else g._data for g in r[:n]]


def _zeros(bk: Any, shape: tuple[int, ...], dt: Any) -> Any:
    return bk.xp.zeros(shape, dtype=dt)


class ArrayProgram:
    """A capture replayed on arrays; see the module's docstring. ``build`` returns why not
    (a string) where the capture does not fit."""

    meta: dict[int, tuple[bool, Any, Any, Any]]  # slot -> rg, backend, shape, native dtype
    n: int  # slots
    steps: list[tuple[Any, ...]]
    n_args: int
    out_t: Any  # the output structure, slots for tensors
    out_slots: list[int]
    ext_rg: list[int]  # slots from outside that need a gradient: the node's edges
    ops: list[int]  # the steps that are ops
    ctx_at: dict[int, int]  # op step -> frame index of its ctx
    any_rg: bool
    node_outs: list[int]  # output slots the program makes (the node's outputs)
    const_t: list[tuple[int, Any]]
    tensor_of: dict[int, Any]  # const slot -> its tensor
    checks: list[tuple[Tensor, bool]]
    bk: Any
    fwd_plain: Any
    fwd_trace: Any
    fwd_lean: Any

    def __init__(self) -> None:
        self.consts: list[Any] = []
        self.bwd: Any = None  # the recorded backward (after the first traced one)
        self._reach: list[frozenset[int]] | None = None  # see reach()
        self.failed = ""  # why the backward could not be recorded (then: op-level replay)
        self.opaque: list[str] = []  # ops whose backward formula runs as written
        self.rewrites: list[str] = []  # what the program does otherwise than the capture
        self.fwd_source = self.bwd_source = ""  # the generated code (the last forward built)
        self.dead: set[int] = set()  # slots a rewrite no longer makes
        # why only a backend compiler can run it (its forward cannot replay here), or ""
        self.native_only = ""

    # -- building -------------------------------------------------------------------------------
    def _c(self, v: Any) -> str:
        tv = type(v)
        if tv in (int, bool, type(None), str) or (
            tv is float and v == v and abs(v) != float("inf")
        ):
            return repr(v)
        self.consts.append(v)
        return f"C[{len(self.consts) - 1}]"

    def _render(self, x: Any, wrap: str | None = None) -> str:
        if type(x) is _D or (type(x) is _S and wrap is None):
            return f"a{x.k}"
        if type(x) is _S:
            return f"_T(a{x.k}, {wrap})"
        tx = type(x)
        if tx is tuple:
            return "(" + "".join(self._render(v, wrap) + ", " for v in x) + ")"
        if tx is list:
            return "[" + ", ".join(self._render(v, wrap) for v in x) + "]"
        if tx is dict:
            return "{" + ", ".join(f"{k!r}: {self._render(v, wrap)}" for k, v in x.items()) + "}"
        return self._c(x)

    def _call(self, args: Any, kwargs: dict[str, Any], wrap: str | None) -> str:
        parts = [self._render(a, wrap) for a in args]
        return ", ".join(parts + [f"{k}={self._render(v, wrap)}" for k, v in kwargs.items()])

    @classmethod
    def build(cls, rec: Any, n_args: int, out: Any) -> ArrayProgram | str:
        """The array program of ``rec``'s capture, or why there is none."""
        self = cls()
        steps = rec.tsteps
        tensor_of = {st[1]: st[2] for st in steps if st[0] == "const"}
        meta = rec.slot_meta  # slot -> (requires_grad, backend, shape, native dtype)
        for st in steps:
            kind = st[0]
            if kind == "call":
                name = getattr(st[1], "__name__", "")
                if name == "_inplace_result":
                    why = _buffer_write(st, n_args, tensor_of, rec.made)
                    if why == _MADE_WRITE and _plain_write(rec, st[2][0].k):
                        self.native_only = why  # a pure function rebinds it; fwd() cannot
                    elif why:
                        return why
                elif name not in _SAMPLERS or any(st[5]):
                    return f"{name.lstrip('_')} is replayed as a call"
            if kind == "const" and st[1] in rec.mutated:
                return "a constant is written in place"
            if kind == "alias" and st[3]:
                return "a detached tensor is made to require grad"
            if kind == "op" and _nested(st[2], st[3]):
                return f"{st[1].__name__} takes tensors inside lists or keywords"
        for _, bk, _, dt in meta.values():
            if getattr(dt, "kind", "f") == "c":
                return "complex tensors"
        out_t = rec.tmpl(out)
        if FUSE:
            steps, meta, self.rewrites = _commute_relu_max_pool(steps, meta, out_t)
            steps, meta, fused = _fuse_masked_softmax(steps, meta, out_t, self.dead)
            self.rewrites += fused
            steps, meta, fused = _fuse_conv_max_pool(steps, meta, out_t, self.dead)
            self.rewrites += fused
            steps, fused = _fuse_gelu(steps, meta)
            self.rewrites += fused
            reads, returned = _reads_and_outs(steps, out_t)
            steps, meta, fused = _fused_elementwise.fuse(
                steps, meta, reads, returned, self.dead, _S
            )
            self.rewrites += fused
        self.meta = meta
        self.n = rec.n
        self.steps = steps
        self.n_args = n_args
        self.out_t = out_t
        outs: list[int] = []
        _slots_in(self.out_t, outs)
        self.out_slots = list(dict.fromkeys(outs))
        made = {t for st in steps if st[0] in ("op", "call") for t in st[4]}
        made |= {st[1] for st in steps if st[0] == "alias"}
        self.ext_rg = [k for k in range(rec.n) if k not in made and meta[k][0]]
        self.ops = [j for j, st in enumerate(steps) if st[0] == "op"]
        self.ctx_at = {j: rec.n + i for i, j in enumerate(self.ops)}  # frame index of a ctx
        self.any_rg = bool(self.ext_rg)
        self.node_outs = [k for k in self.out_slots if k in made]
        self.const_t = [(st[1], st[2]) for st in steps if st[0] == "const"]
        self.tensor_of = tensor_of
        self.checks = [(t, t.requires_grad) for _, t in self.const_t if isinstance(t, Tensor)]
        self.bk = meta[self.node_outs[0]][1] if self.node_outs else None
        if self.native_only:
            return self
        self.fwd_plain = self._forward(None, set())
        self.fwd_trace = self._forward(True, set()) if self.any_rg and self.bk else None
        self.fwd_lean = None
        return self

    def _forward(self, keep: Any, save: set[int]) -> Any:
        """The forward's source, compiled. ``keep``: None (no backward), True (keep every
        array and ctx: the traced backward reads them), or the frame indices to keep;
        ``save``: the ops whose ctx gets its saved tensors (opaque backwards)."""
        lines = ["def fwd(A, C, G):"]
        b = lines.append
        for k in range(self.n_args):
            b(f"    a{k} = A[{k}]._data")
        toggles = any(st[0] == "grad" for st in self.steps)
        if toggles:
            b("    g0 = G.enabled")
            b("    try:")
        for j, st in enumerate(self.steps):
            kind = st[0]
            if kind == "grad":
                b(f"    G.enabled = {st[1]}")
            elif kind == "const":
                b(f"    a{st[1]} = {self._c(st[2])}._data")
            elif kind == "alias":
                b(f"    a{st[1]} = a{st[2]}")
            elif kind == "op":
                _, op, args, kwargs, outs, needs, _, is_tuple, bk = st
                K, B = self._c(op), self._c(bk)
                b(f"    c = {K}.__new__({K}); c.backend = c.out_backend = {B}; "
                  f"c.xp = {B}.xp; c.needs_input_grad = {self._c(needs)}")  # fmt: skip
                call = self._call(args, kwargs, None)
                lhs = "".join(f"a{o}, " for o in outs) if is_tuple else f"a{outs[0]}"
                b(f"    {lhs} = {K}.forward(c, {call})")
                want = keep is True or (keep is not None and self.ctx_at[j] in keep)
                if keep is True or j in save:
                    b("    _save(c)")
                if want:
                    b(f"    x{j} = c")
            elif kind == "call" and st[1].__name__ == "_inplace_result":
                # a buffer's in-place update (running statistics): on the tensor itself
                _, fn, (target, value), _, outs, _, _, bk = st
                k = target.k
                t, new = self._c(self.tensor_of[k]), f"_T(a{value.k}, {self._c(bk)})"
                b(f"    a{outs[0]} = a{k} = {self._c(fn)}({t}, {new})._data")
            elif kind == "call":
                _, fn, args, kwargs, outs, _, is_tuple, bk = st
                B = self._c(bk)
                call = self._call(args, kwargs, B)
                if is_tuple:
                    lhs = "".join(f"a{o}, " for o in outs)
                    b(f"    {lhs} = [t._data for t in {self._c(fn)}({call})]")
                else:
                    b(f"    a{outs[0]} = {self._c(fn)}({call})._data")
        if toggles:  # the steps between try and finally, one level in
            body = lines[lines.index("    try:") + 1 :]
            lines[lines.index("    try:") + 1 :] = ["    " + ln for ln in body]
            lines += ["    finally:", "        G.enabled = g0"]
        ret = "(" + "".join(f"a{k}, " for k in self.out_slots) + ")"
        if keep is None:
            b(f"    return {ret}, None")
        else:
            frame = []
            for i in range(self.n + len(self.ops)):
                want = (keep is True and i not in self.dead) or (keep is not True and i in keep)
                if want and i < self.n:
                    frame.append(f"a{i}")
                elif want:
                    frame.append(f"x{self.ops[i - self.n]}")
                else:
                    frame.append("None")
            b(f"    return {ret}, [{', '.join(frame)}]")
        if FREE_DEAD:
            lines = _free_dead(lines, _FWD_NAME)
        ns: dict[str, Any] = {"_save": _save, "_T": Tensor.from_backend_array}
        self.fwd_source = "\n".join(lines) + "\n"
        exec(compile("\n".join(lines) + "\n", "<lucid.compile arrays>", "exec"), ns)  # noqa: S102
        return ns["fwd"]

    # -- running --------------------------------------------------------------------------------
    def usable(self) -> bool:
        """Whether this call can run on arrays (else the op-level program runs it)."""
        if (_function._observers or _function._interceptors or _function.saved_hooks.stack
                or anomaly_mode._state.enabled or _memory_format._marked):  # fmt: skip
            return False
        for t, rg in self.checks:
            if t.requires_grad is not rg:
                return False
        if self.any_rg and grad_mode._state.enabled:
            return not self.failed and self.bk is not None
        return True

    def run(self, leaves: list[Tensor]) -> Any:
        """The outputs of one call (with one graph node where an input needs a gradient)."""
        make = Tensor.from_backend_array
        meta = self.meta
        env: dict[int, Tensor] = {k: leaves[k] for k in range(self.n_args)}
        for k, t in self.const_t:
            env[k] = t
        if self.any_rg and grad_mode._state.enabled:
            fwd = self.fwd_trace if self.bwd is None else self.fwd_lean
            arrays, frame = fwd(leaves, self.consts, grad_mode._state)
            node = CompiledFunction.__new__(CompiledFunction)
            node.backend = node.out_backend = bk = self.bk
            node.xp = bk.xp
            ext = [env[k] for k in self.ext_rg]
            node._edges = [t if t.grad_fn is None else (t.grad_fn, t._output_nr) for t in ext]
            node.needs_input_grad = (True,) * len(ext)
            node._impl = CompiledFunction
            node._saved = []  # (a second backward without retain_graph raises, as eager)
            node.prog, node.frame = self, frame
            node._out_meta = tuple([(meta[k][2], meta[k][3]) for k in self.node_outs])
            nr = {k: i for i, k in enumerate(self.node_outs)}
            for k, a in zip(self.out_slots, arrays):
                if k in nr:
                    rg = meta[k][0]
                    t = make(a, meta[k][1], rg)
                    if rg:
                        t.grad_fn, t._output_nr = node, nr[k]
                    env[k] = t
        else:
            arrays, _ = self.fwd_plain(leaves, self.consts, grad_mode._state)
            for k, a in zip(self.out_slots, arrays):
                if k not in env:
                    env[k] = make(a, meta[k][1])
        return _rebuild(self.out_t, env)

    # -- the backward ---------------------------------------------------------------------------
    def reach(self) -> list[frozenset[int]]:
        """Per node output, the node's edges (inputs needing a gradient) whose gradient
        depends on it: an edge that no output with a gradient reaches gets None, as eager."""
        if self._reach is None:
            steps = self.steps
            ext_at = {k: i for i, k in enumerate(self.ext_rg)}
            producer: dict[int, int] = {}
            of_op: dict[int, frozenset[int]] = {}
            for j in self.ops:  # in forward order: an input's producer comes first
                found: set[int] = set()
                for a, need in zip(steps[j][2], steps[j][5]):
                    if not need:
                        continue
                    if a.k in producer:
                        found |= of_op[producer[a.k]]
                    elif a.k in ext_at:
                        found.add(ext_at[a.k])
                of_op[j] = frozenset(found)
                for o in steps[j][4]:
                    producer[o] = j
            self._reach = [of_op[producer[k]] if k in producer else frozenset()
                           for k in self.node_outs]  # fmt: skip
        return self._reach

    def trace(self, node: Any, frame: list[Any], grads: list[Tensor]) -> tuple[Any, ...]:
        """Run the backward formulas as the engine would (same order, same sums), recording
        their ops on arrays; the recorded backward serves the next calls."""
        rec = _BackwardRecorder(self, frame)
        try:
            result = rec.run(grads)
        except _Abort as exc:
            self.failed = str(exc)
            raise RuntimeError(f"lucid.compile: the backward could not be replayed ({exc})")
        if rec.failed:
            self.failed = rec.failed
        else:
            self.opaque = sorted({type(frame[self.ctx_at[j]]).__name__ for j in rec.opaque})
            self.bwd = rec.compile()
            self.bwd_source = rec.source
            self.fwd_lean = self._forward(rec.used, set(rec.opaque))
        return result


class _Abort(Exception):
    pass


class _BackwardRecorder:
    """One traced backward: the engine's walk over the program's ops, with ``observe_ops``
    turning each op the backward formulas call into a line of the recorded backward."""

    def __init__(self, prog: ArrayProgram, frame: list[Any]) -> None:
        self.p = prog
        self.frame = frame
        self.lines: list[str] = []
        self.name: dict[int, str] = {}  # id(array) -> its expression in the recorded backward
        self.keep: list[Any] = []  # every array named, alive (ids stay unique)
        self.used: set[int] = set()  # frame indices the recorded backward reads
        self.opaque: list[int] = []
        self.failed = ""
        self.n = 0
        self.sub: list[str] | None = None  # lines of the op whose formula runs now
        self.sub_ok = True
        self.sub_ctx: Any = None
        self.sub_j = -1
        self.cur_used = self.used  # where a lookup notes the frame indices it reads
        self.sub_names: list[int] = []  # ids named by the op whose formula runs now
        self.frame_idx: dict[str, int] = {}
        for k in range(prog.n):
            a = frame[k]
            if a is not None and id(a) not in self.name:
                self._name(a, f"F[{k}]", k)

    def _name(self, a: Any, expr: str, idx: int | None = None) -> None:
        self.name[id(a)] = expr
        self.keep.append(a)
        if idx is not None:
            self.frame_idx[expr] = idx

    def _new(self, a: Any) -> str:
        v = f"b{self.n}"
        self.n += 1
        if self.sub is not None:
            self.sub_names.append(id(a))
        self.name[id(a)] = v
        self.keep.append(a)
        return v

    def _lookup(self, a: Any) -> str | None:
        expr = self.name.get(id(a))
        if expr is not None:
            idx = self.frame_idx.get(expr)
            if idx is not None:
                self.cur_used.add(idx)
            return expr
        c = self.sub_ctx
        if c is None:
            return None
        ci = self.p.ctx_at[self.sub_j]
        for i, item in enumerate(c.__dict__.get("_to_save", ())):
            if item is a:
                self.cur_used.add(ci)
                return f"F[{ci}]._to_save[{i}]"
        for attr, v in c.__dict__.items():
            if not attr.isidentifier() or attr.startswith("_"):
                continue
            if v is a:
                self.cur_used.add(ci)
                return f"F[{ci}].{attr}"
            if type(v) in (tuple, list):  # the forward kept several arrays (per group...)
                for i, item in enumerate(v):
                    if item is a:
                        self.cur_used.add(ci)
                        return f"F[{ci}].{attr}[{i}]"
        return None

    def _arg(self, x: Any) -> str:
        if isinstance(x, Tensor):
            x = x._data
        tx = type(x)
        if tx in (tuple, list, dict) and x:
            expr = self._lookup(x)  # a container the op's ctx holds (the forward fills it)
            if expr is not None:
                return expr
        if tx is tuple:
            return "(" + "".join(self._arg(v) + ", " for v in x) + ")"
        if tx is list:
            return "[" + ", ".join(self._arg(v) for v in x) + "]"
        if tx is dict:
            return "{" + ", ".join(f"{k!r}: {self._arg(v)}" for k, v in x.items()) + "}"
        if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.generic):
            expr = self._lookup(x)
            if expr is None:
                raise _Abort("an array made outside the recorded ops")
            return expr
        if isinstance(x, np.generic):
            # NumPy gives a scalar for 0-d arithmetic (a scalar loss's gradient, ``g / n``):
            # one a recorded op made is that op's result, not a constant
            expr = self._lookup(x)
            if expr is not None:
                return expr
        return self.p._c(x)

    def on_op(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        """``observe_ops``' callback: one op of a backward formula becomes one line."""
        if self.failed or (self.sub is not None and not self.sub_ok):
            return
        try:
            parts = [self._arg(a) for a in args] + [
                f"{k}={self._arg(v)}" for k, v in kwargs.items()
            ]
        except _Abort as exc:
            if self.sub is None:  # in the engine's sums: nothing to record (values stay right)
                self.failed = str(exc)
            self.sub_ok = False
            return
        outs = result if type(result) is tuple else (result,)
        bk = outs[0]._backend
        needs = tuple([isinstance(a, Tensor) and a.requires_grad for a in args])
        K, B = self.p._c(cls), self.p._c(bk)
        names = [self._new(t._data) for t in outs]
        lhs = "".join(f"{v}, " for v in names) if type(result) is tuple else names[0]
        lines = self.lines if self.sub is None else self.sub
        lines.append(f"    c = {K}.__new__({K}); c.backend = c.out_backend = {B}; "
                     f"c.xp = {B}.xp; c.needs_input_grad = {self.p._c(needs)}")  # fmt: skip
        lines.append(f"    {lhs} = {K}.forward(c, {', '.join(parts)})")

    def on_call(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A replayed call (sampling, an in-place write) inside a formula: not recordable."""
        if self.sub is None:
            self.failed = f"{getattr(fn, '__name__', fn)} in the engine's sums"
        self.sub_ok = False
        return fn(*args, **kwargs)

    def _reading(self, orig: Any) -> Any:
        def method(t: Tensor, *args: Any, **kwargs: Any) -> Any:
            if self.sub is None:  # in the engine's sums (not expected): record nothing more
                self.failed = self.failed or "a tensor's values read in the backward"
            self.sub_ok = False  # a formula that branches on values stays whole
            return orig(t, *args, **kwargs)

        return method

    def run(self, grads: list[Tensor]) -> tuple[Any, ...]:
        p = self.p
        steps = p.steps
        producer: dict[int, tuple[int, int]] = {}
        for j in p.ops:
            for i, o in enumerate(steps[j][4]):
                producer[o] = (j, i)
        ext_at = {k: i for i, k in enumerate(p.ext_rg)}
        # the edges of each op (as Function.apply records them): per input, producer or leaf
        edges: dict[int, list[Any]] = {}
        for j in p.ops:
            _, _, args, _, _, needs, _, _, _ = steps[j]
            into: list[Any] = []
            for a, need in zip(args, needs):
                if not need:
                    into.append(None)
                elif a.k in producer:
                    into.append(producer[a.k])
                else:
                    into.append(("leaf", ext_at[a.k]))
            edges[j] = into
        pending: dict[int, list[Any]] = {}
        roots: list[int] = []
        for i, (k, g) in enumerate(zip(p.node_outs, grads)):
            self._name(g._data, f"G[{i}]")
            if not p.meta[k][0] or k not in producer:
                continue
            j, o = producer[k]
            if j not in pending:
                pending[j] = [None] * len(steps[j][4])
                roots.append(j)
            pending[j][o] = g
        deps: dict[int, int] = {}
        stack, seen = list(roots), set(roots)
        while stack:
            j = stack.pop()
            for e in edges[j]:
                if e is not None and e[0] != "leaf":
                    deps[e[0]] = deps.get(e[0], 0) + 1
                    if e[0] not in seen:
                        seen.add(e[0])
                        stack.append(e[0])
        ready = [j for j in roots if deps.get(j, 0) == 0]
        leaf: dict[int, Tensor] = {}
        listeners = _replay.listeners
        listeners.append(self.on_call)
        saved = {name: getattr(Tensor, name) for name in VALUE_READS}
        for name, orig in saved.items():
            setattr(Tensor, name, self._reading(orig))
        try:
            with observe_ops(self.on_op):
                while ready:
                    j = ready.pop()
                    in_grads = self._node(j, pending.pop(j), len(edges[j]))
                    for e, g, a in zip(edges[j], in_grads, steps[j][2]):
                        if e is None:
                            continue
                        if g is not None:
                            _, _, shape, dt = p.meta[a.k]
                            if g._data.shape != shape or g._data.dtype != dt:
                                g = _reduce_to(g, shape, dt)
                        if e[0] == "leaf":
                            if g is not None:
                                old = leaf.get(e[1])
                                leaf[e[1]] = g if old is None else old + g
                            continue
                        nxt, o = e
                        slot = pending.get(nxt)
                        if slot is None:
                            slot = pending[nxt] = [None] * len(steps[nxt][4])
                        if g is not None:
                            slot[o] = g if slot[o] is None else slot[o] + g
                        deps[nxt] -= 1
                        if deps[nxt] == 0:
                            ready.append(nxt)
        except _Abort as exc:
            self.failed = str(exc)
            raise
        finally:
            listeners.remove(self.on_call)
            for name, orig in saved.items():
                setattr(Tensor, name, orig)
        result = tuple([leaf.get(i) for i in range(len(p.ext_rg))])
        if not self.failed:
            try:
                self.ret = (
                    "[" + ", ".join("None" if g is None else self._arg(g) for g in result) + "]"
                )
            except _Abort as exc:
                self.failed = str(exc)
        return result

    def _node(self, j: int, grads: list[Any], n_edges: int) -> tuple[Any, ...]:
        """One op's backward formula, recorded as kernel calls (or as one opaque call)."""
        if all(g is None for g in grads):
            return (None,) * n_edges
        p = self.p
        st = p.steps[j]
        ctx = self.frame[p.ctx_at[j]]
        for i, g in enumerate(grads):
            if g is None:  # the engine's _fill_missing: zeros for outputs no gradient reached
                _, bk, shape, dt = p.meta[st[4][i]]
                z = Tensor.from_backend_array(_zeros(bk, shape, dt), bk)
                v = self._new(z._data)
                self.lines.append(f"    {v} = _zeros({p._c(bk)}, {shape!r}, {p._c(dt)})")
                grads[i] = z
        gexpr: list[str] = []
        if not self.failed:
            try:
                gexpr = [self._arg(g) for g in grads]
            except _Abort as exc:
                self.failed = str(exc)
        if self.failed:  # nothing more is recorded: the formula runs for its values only
            got = st[1].backward(ctx, *grads)
            return tuple((got if type(got) is tuple else (got,))[:n_edges])
        self.sub, self.sub_ok, self.sub_ctx, self.sub_j = [], True, ctx, j
        self.cur_used, self.sub_names = set(), []
        result: Any
        try:
            result = st[1].backward(ctx, *grads)
        finally:
            sub, ok, self.sub, self.sub_ctx = self.sub, self.sub_ok, None, None
            sub_used, self.cur_used = self.cur_used, self.used
        results: tuple[Any, ...] = tuple((result if type(result) is tuple else (result,))[:n_edges])
        if ok:
            for g in results:
                if isinstance(g, Tensor) and self.name.get(id(g._data)) is None:
                    ok = False  # a result made outside the ops
        if ok:
            self.lines += sub
            self.used |= sub_used
            return results
        for i in self.sub_names:  # the formula's own arrays: not lines of the program
            self.name.pop(i, None)
        self.opaque.append(j)
        ci = p.ctx_at[j]
        self.used.add(ci)
        names = [self._new(g._data) if isinstance(g, Tensor) else "_" for g in results]
        bk = p._c(ctx.backend)
        self.lines.append(f"    {''.join(v + ', ' for v in names)}= _opaque({p._c(st[1])}, "
                          f"F[{ci}], [{', '.join(gexpr)}], {bk}, {n_edges})")  # fmt: skip
        return results

    def compile(self) -> Any:
        """The recorded backward as a function ``bwd(F, G, C)``."""
        lines = self.lines
        if FUSE:
            lines, done = _cat_of_moved(lines, self.p.consts, self.ret)
            self.p.rewrites += done
        if FUSE and PAIR_PRODUCTS:
            lines, done = _paired_products(lines, self.p.consts)
            self.p.rewrites += done
        if FREE_DEAD:
            lines = _free_dead([*lines, f"    return {self.ret}"], _BWD_NAME)[:-1]
        if any("_defer(_W" in ln for ln in lines):  # products left running: waited on errors
            body = "\n".join("    " + ln for ln in lines)
            src = (f"def bwd(F, G, C):\n    _W = []\n    try:\n{body}\n        return {self.ret}\n"
                   "    except BaseException:\n        _settle(_W)\n        raise\n")  # fmt: skip
        else:
            src = "def bwd(F, G, C):\n" + "\n".join(lines) + f"\n    return {self.ret}\n"
        ns: dict[str, Any] = {"_opaque": _opaque, "_zeros": _zeros, "_cat_parts": _cat_parts,
                              "_pair": _pair, "_defer": _defer, "_settle": _settle}  # fmt: skip
        exec(compile(src, "<lucid.compile backward>", "exec"), ns)  # noqa: S102
        self.source = src
        return ns["bwd"]


_CALL = re.compile(r"    (b\d+) = C\[(\d+)\]\.forward\(c, (.*)\)$")


def _split_args(text: str) -> list[str]:
    """A call's arguments, split at its top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _cat_of_moved(lines: list[str], consts: list[Any], ret: str) -> tuple[list[str], list[str]]:
    """``cat`` of ``reshape(permute(g))`` pieces in a recorded backward (the gradients of
    attention's heads going back into one q, k, v projection) as one ``_cat_parts``: each
    piece is written once, transposed, into its place in the result, instead of a copy by
    ``reshape`` and another by ``cat``. Lines whose result another line reads stay."""
    from_cls = {Cat: "cat", Reshape: "reshape", Permute: "permute"}
    made: dict[str, tuple[int, str, list[str]]] = {}  # name -> (line, kind, args)
    for i, ln in enumerate(lines):
        m = _CALL.match(ln)
        if m:
            kind = from_cls.get(consts[int(m.group(2))])
            if kind:
                made[m.group(1)] = (i, kind, _split_args(m.group(3)))
    text = "\n".join(lines) + "\n" + ret
    uses = {name: len(re.findall(rf"\b{name}\b", text)) - 1 for name in made}
    drop: set[int] = set()
    done: list[str] = []
    out = list(lines)
    for name, (i, kind, args) in made.items():
        if kind != "cat" or len(args) < 2:
            continue
        pieces, fused = [], 0
        for a in args[1:]:
            r = made.get(a)
            q = made.get(r[2][0]) if r is not None and r[1] == "reshape" else None
            if r is None or q is None or q[1] != "permute" or uses[a] != 1 or uses[r[2][0]] != 1:
                pieces.append(f"({a}, None, None)")
                continue
            pieces.append(f"({q[2][0]}, {q[2][1]}, {r[2][1]})")
            drop |= {r[0], r[0] - 1, q[0], q[0] - 1}  # each call and its ctx line
            fused += 1
        if fused:
            out[i] = f"    {name} = _cat_parts({args[0]}, [{', '.join(pieces)}])"
            drop.add(i - 1)
            done.append(f"cat of {fused} permuted reshapes ran as one strided copy each")
    return [ln for i, ln in enumerate(out) if i not in drop], done


def _paired_products(lines: list[str], consts: list[Any]) -> tuple[list[str], list[str]]:
    """Each two consecutive matrix products of a recorded backward where the second reads
    nothing the first made (a Linear's input and weight gradients, ``g @ w`` and ``g.mT @ x``)
    as one ``_pair`` call in the second's place: the backend's ``matmul_pair`` runs them at
    once, one a thread, as the eager Linear's backward does, instead of splitting each over the
    threads in turn (two hand-offs and two waits; docs/performance.md, issue 31). The products
    are the same GEMMs, so the values are the eager step's."""
    calls: list[tuple[int, str, list[str]]] = []
    for i, ln in enumerate(lines):
        m = _CALL.match(ln)
        if (
            m
            and consts[int(m.group(2))] is Matmul
            and i > 0
            and lines[i - 1].startswith("    c = ")
        ):
            args = _split_args(m.group(3))
            if len(args) == 2:
                calls.append((i, m.group(1), args))
    out = list(lines)
    drop: set[int] = set()
    done: list[str] = []
    deferred: list[tuple[int, str, str]] = []  # (line, second product's name, its wait)
    k = 0
    while k + 1 < len(calls):
        (i, first, args1), (j, second, args2) = calls[k], calls[k + 1]
        word = re.compile(rf"\b{first}\b")
        if any(word.search(lines[n]) for n in range(i + 1, j + 1)):
            k += 1  # the second product (or what it reads) needs the first's result
            continue
        ctx = lines[j - 1].split(";")[1].split("=")[-1].strip()  # the backend: c.backend = B
        operands = ", ".join(args1 + args2)
        if DEFER_PRODUCTS:
            wait = f"_w{len(deferred)}"
            out[j] = f"    {first}, {second}, {wait} = _defer(_W, {ctx}, {operands})"
            deferred.append((j, second, wait))
        else:
            out[j] = f"    {first}, {second} = _pair({ctx}, {operands})"
        drop |= {i - 1, i, j - 1}
        done.append(PAIRED)
        k += 2
    waits: dict[int, list[str]] = {}  # line -> the waits that go before it
    for j, second, wait in deferred:
        word = re.compile(rf"\b{second}\b")
        at = next((n for n in range(j + 1, len(out)) if n not in drop and word.search(out[n])),
                  len(out))  # fmt: skip
        waits.setdefault(at, []).append(f"    {wait}()")
    result: list[str] = []
    for n, ln in enumerate(out):
        result += waits.get(n, [])
        if n not in drop:
            result.append(ln)
    return result + waits.get(len(out), []), done


def _defer(pending: list[Any], backend: Any, a: Any, b: Any, c: Any, d: Any) -> tuple[Any, ...]:
    """``(a @ b, c @ d, wait)``: ``c @ d`` left running on the backend's pool while the
    recorded backward goes on (``matmul_defer``, as the eager Linear leaves its weight
    gradient), ``wait()`` called before its result is read; ``pending`` keeps the waits for an
    error on the way. Where the backend has no ``matmul_defer`` or declines, ``_pair``'s."""
    defer = getattr(backend.xp, "matmul_defer", None)
    got = None if defer is None else defer(a, b, c, d)
    if got is None:
        return (*_pair(backend, a, b, c, d), _done)
    pending.append(got[2])
    return got  # type: ignore[no-any-return]


def _done() -> None:
    pass


def _settle(pending: list[Any]) -> None:
    """Wait for every product ``_defer`` left running, after an error in the recorded
    backward (its own error, if any, is not raised over the first one)."""
    for wait in pending:
        try:
            wait()
        except BaseException:  # noqa: BLE001, S110
            pass


def _pair(backend: Any, a: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any]:
    """``(a @ b, c @ d)`` as ``Matmul.forward`` computes each (``backend.xp.matmul``), at once
    where the backend has a ``matmul_pair`` (``_paired_products``)."""
    xp = backend.xp
    pair = getattr(xp, "matmul_pair", None)
    if pair is None:
        return xp.matmul(a, b), xp.matmul(c, d)
    return pair(a, b, c, d)  # type: ignore[no-any-return]


def _cat_parts(dim: int, pieces: list[tuple[Any, Any, Any]]) -> Any:
    """``cat([reshape(permute(src, perm), shape) or src ...], dim)`` with each moved piece
    copied once into its place (``_cat_of_moved``); the same values."""
    moved = [src if perm is None else np.transpose(src, perm) for src, perm, _ in pieces]
    final = [m if shape is None else None for m, (_, _, shape) in zip(moved, pieces)]
    shapes = [tuple(m.shape) if shape is None else tuple(shape) for m, (_, _, shape)
              in zip(moved, pieces)]  # fmt: skip
    dt = moved[0].dtype
    if any(type(m) is not np.ndarray or m.dtype != dt for m in moved):  # another backend's
        return np.concatenate([m if f is not None else np.reshape(m, s)
                               for m, f, s in zip(moved, final, shapes)], axis=dim)  # fmt: skip
    d = dim % len(shapes[0])
    size = [*shapes[0]]
    size[d] = sum(s[d] for s in shapes)
    out = np.empty(size, dtype=dt)
    at = 0
    for m, f, s in zip(moved, final, shapes):
        region = out[(slice(None),) * d + (slice(at, at + s[d]),)]
        at += s[d]
        if f is not None:
            region[...] = f
            continue
        try:  # the region seen in the piece's layout, without a copy
            view = np.reshape(region, m.shape, copy=False)
        except (TypeError, ValueError):  # (NumPy < 2.1 has no copy=, or it needs one)
            region[...] = np.reshape(m, s)
        else:
            view[...] = m
    return out


def _buffer_write(st: tuple[Any, ...], n_args: int, tensor_of: dict[int, Any],
                  made: set[int]) -> str:  # fmt: skip
    """Why an in-place write cannot replay on arrays ("" where it can: a tensor from outside
    that is not a view, nothing needing a gradient, as a buffer's running statistics); the
    written slot's tensor goes into ``tensor_of``."""
    args = st[2]
    if len(args) != 2 or type(args[0]) is not _S or type(args[1]) is not _S or any(st[5]):
        return "an in-place write on a tensor that needs a gradient"
    k = args[0].k
    t = tensor_of.get(k)
    if k >= n_args and t is None:
        return _MADE_WRITE
    if t is not None and (not isinstance(t, Tensor) or t._base is not None or k in made):
        return "an in-place write on a view"
    if k < n_args:
        return "an in-place write on an argument"
    tensor_of[st[4][0]] = t
    return ""


_FWD_NAME = re.compile(r"\ba\d+\b")
_BWD_NAME = re.compile(r"\bb\d+\b")


def _free_dead(lines: list[str], name: re.Pattern[str]) -> list[str]:
    """``lines`` (a generated function, its ``return`` last) with ``del v`` after the last line
    that names each local ``v`` matching ``name``, unless the return names it: a dropped array
    goes back to the allocator at once (``FREE_DEAD``)."""
    last: dict[str, int] = {}
    for i, ln in enumerate(lines[:-1]):
        for v in name.findall(ln):
            last[v] = i
    returned = set(name.findall(lines[-1]))
    after: dict[int, list[str]] = {}
    for v, i in last.items():
        if v not in returned:
            after.setdefault(i, []).append(v)
    out: list[str] = []
    for i, ln in enumerate(lines):
        out.append(ln)
        dead = after.get(i)
        if dead and not ln.rstrip().endswith(":"):
            pad = ln[: len(ln) - len(ln.lstrip())]
            out.append(f"{pad}del {', '.join(sorted(dead))}")
    return out


def _slots_read(x: Any, into: set[int]) -> None:
    """Every slot (tensor or bare array) named in a step's arguments."""
    if isinstance(x, _S):
        into.add(x.k)
    elif type(x) in (tuple, list) or isinstance(x, tuple):
        for v in x:
            _slots_read(v, into)
    elif type(x) is dict:
        for v in x.values():
            _slots_read(v, into)


def _reads_and_outs(steps: list[tuple[Any, ...]], out_t: Any) -> tuple[dict[int, int], set[int]]:
    """How many steps read each slot, and the slots the function returns: a rewrite that
    drops an intermediate needs it read once (by the op it fuses into) and not returned."""
    reads: dict[int, int] = {}
    for st in steps:
        found: set[int] = set()
        if st[0] in ("op", "call"):
            _slots_read((st[2], st[3]), found)
        elif st[0] == "alias":
            found.add(st[2])
        for k in found:
            reads[k] = reads.get(k, 0) + 1
    outs: set[int] = set()
    _slots_read(out_t, outs)
    return reads, outs


def _is_max_pool(cls: Any) -> bool:
    # lucid-nn's max pooling op, by name: the compiler sits below lucid.nn (imports go down)
    return getattr(cls, "__name__", "") == "MaxPool" and cls.__module__.startswith("lucid.nn")


def _commute_relu_max_pool(
    steps: list[tuple[Any, ...]], meta: dict[int, Any], out_t: Any
) -> tuple[list[tuple[Any, ...]], dict[int, Any], list[str]]:
    """``max_pool(relu(x))`` as ``relu(max_pool(x))`` where the ReLU's output feeds only the
    pooling: the same values (max commutes with the monotone ReLU), and the ReLU and its
    backward mask run on the pooled tensor (a quarter of the elements for a 2 x 2 pool).
    The gradient reaches each window's maximum of ``x`` instead of that of ``relu(x)``; the
    two differ only in windows whose maximum is <= 0, where the ReLU's mask zeroes it.
    Returns the steps, the slots' metadata (the ReLU's slot now holds the pooled input) and
    a line per rewrite."""
    ops = [j for j, st in enumerate(steps) if st[0] in ("op", "call", "alias", "grad")]
    reads, outs = _reads_and_outs(steps, out_t)
    new = list(steps)
    meta = dict(meta)
    done: list[str] = []
    for a, b in zip(ops, ops[1:]):
        r, p = new[a], new[b]
        if r[0] != "op" or p[0] != "op" or r[1] is not Relu or not _is_max_pool(p[1]):
            continue
        if len(r[2]) != 1 or r[3] or type(r[2][0]) is not _S or len(p[2]) != 7 or p[3]:
            continue
        mid = r[4][0]
        x, kernel, stride, padding, dilation, ceil_mode, ret_idx = p[2]
        if type(x) is not _S or x.k != mid or ret_idx is not False or reads.get(mid) != 1:
            continue
        if ceil_mode or any(np.atleast_1d(padding)):
            continue  # a padded pool's backward returns a strided view (a reduction over it
            # downstream, batch norm's, rounds unlike eager's over the ReLU's contiguous copy)
        if mid in outs or len(p[4]) != 1:
            continue
        pooled = p[4][0]
        new[a] = ("op", p[1], (r[2][0], *p[2][1:]), {}, [mid], p[5], r[6], False, p[8])
        new[b] = ("op", Relu, (_S(mid),), {}, [pooled], r[5], p[6], False, r[8])
        rg, bk, _, dt = meta[mid]
        meta[mid] = (rg, bk, meta[pooled][2], dt)
        done.append(f"relu then max_pool{len(meta[pooled][2]) - 2}d ran as max_pool then relu")
    return new, meta, done


_JIT_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _jit(x: Any, rows: Any) -> Any:
    """``_attention_jit`` where it takes ``x`` (float rows up to its ``MAX_ROW``, every row
    with its mask row), else None."""
    if x.size == 0 or x.dtype not in _JIT_FLOATS or rows.shape[0] == 0:
        return None
    if (x.size // x.shape[-1]) % rows.shape[0]:
        return None
    jit = _compiled.load("_attention_jit")
    return jit if jit is not None and x.shape[-1] <= jit.MAX_ROW else None


class ScaledMaskedSoftmax(Function):
    """``softmax(where(cond, fill, x * scale), dim=-1)`` (``where(cond, x * scale, fill)``
    with ``inv``) in one op: attention's scores to weights, as the compiled program runs them
    (``_fuse_masked_softmax``). The same values and gradient as the three ops, bit for bit
    (NumPy's passes in place, or ``_attention_jit``'s with ``lucid-core[numba]``)."""

    @staticmethod
    def forward(ctx: Any, x: Any, cond: Any, fill: Any, scale: Any, inv: bool) -> Any:
        dt = x.dtype.type
        fill, scale = dt(fill), dt(scale)
        n = x.shape[-1]
        conds = np.broadcast_to(cond, x.shape)
        if cond.ndim >= 2 and cond.size == cond.shape[-2] * n and cond.shape[-1] == n:
            rows = cond.reshape(-1, n)  # one (T, n) mask for every batch and head
        else:
            rows = np.ascontiguousarray(conds).reshape(-1, n)
        ctx.cond, ctx.inv, ctx.scale, ctx.conds = rows, inv, scale, conds
        jit = _jit(x, rows)
        if jit is not None:
            x2 = np.ascontiguousarray(x).reshape(-1, n)
            out = np.empty_like(x2)
            if _compiled.run("_attention_jit", "shifted", x2, rows, inv, fill, scale, out):
                np.exp(out, out=out)  # NumPy's SIMD exp: as the op's
                if _compiled.run("_attention_jit", "normalize", out):
                    ctx.y = out.reshape(x.shape)
                    return ctx.y
        # the three ops' NumPy passes (softmax's small path), in one buffer
        s = np.multiply(x, scale)
        np.copyto(s, fill, where=np.logical_not(conds) if inv else conds)
        np.subtract(s, np.maximum.reduce(s, axis=-1, keepdims=True), out=s)
        np.exp(s, out=s)
        np.divide(s, np.add.reduce(s, axis=-1, keepdims=True), out=s)
        ctx.y = s
        return s

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        y, ga = ctx.y, g._data
        n = y.shape[-1]
        out = None
        if ga.dtype == y.dtype and _jit(y, ctx.cond) is not None:
            g2, y2 = np.ascontiguousarray(ga).reshape(-1, n), y.reshape(-1, n)
            o = np.empty_like(g2)
            if _compiled.run("_attention_jit", "backward", g2, y2, ctx.cond, ctx.inv,
                             ctx.scale, o):  # fmt: skip
                out = o.reshape(y.shape)
        if out is None:  # softmax's gradient, where's and mul's, as NumPy passes
            out = np.multiply(ga, y)
            s = np.add.reduce(out, axis=-1, keepdims=True)
            np.subtract(out, np.multiply(y, s), out=out)
            np.copyto(out, 0, where=np.logical_not(ctx.conds) if ctx.inv else ctx.conds)
            np.multiply(out, ctx.scale, out=out)
        return Tensor.from_backend_array(out, g.backend), None, None, None, None


def _fuse_masked_softmax(
    steps: list[tuple[Any, ...]], meta: dict[int, Any], out_t: Any, dead: set[int]
) -> tuple[list[tuple[Any, ...]], dict[int, Any], list[str]]:
    """``x * scale``, then ``where`` with a mask and a fill, then ``softmax`` over the last
    dim (attention as nanoGPT writes it), as one ``ScaledMaskedSoftmax``: the two temporaries
    and four of the six passes each way go. Only where each intermediate feeds only the next
    op, the mask and fill need no gradient, and the dtypes stay the input's."""
    reads, outs = _reads_and_outs(steps, out_t)
    producer = {st[4][0]: j for j, st in enumerate(steps) if st[0] == "op" and len(st[4]) == 1}
    new = list(steps)
    meta = dict(meta)
    done: list[str] = []
    for j, st in enumerate(steps):
        if st[0] != "op" or st[1] is not Softmax or st[3] or len(st[2]) != 2:
            continue
        if getattr(st[8], "name", "") != "numpy":  # the fused op computes on NumPy arrays
            continue
        (w, dim), dtype = st[2], meta[st[4][0]][3]
        if type(w) is not _S or w.k in outs or reads.get(w.k) != 1:
            continue
        ndim = len(meta[w.k][2])
        if dim not in (-1, ndim - 1) or ndim == 0 or getattr(dtype, "kind", "") != "f":
            continue
        jw = producer.get(w.k)
        if jw is None or steps[jw][1] is not Where or steps[jw][3] or len(steps[jw][2]) != 3:
            continue
        cond, a, b = steps[jw][2]
        if type(a) is _S and a.k in producer and steps[producer[a.k]][1] is Mul:
            mid, fill, inv = a, b, True
        else:
            mid, fill, inv = b, a, False
        if type(mid) is not _S or type(cond) is not _S or mid.k in outs or reads.get(mid.k) != 1:
            continue
        if meta[cond.k][0] or meta[cond.k][3] != np.bool_ or meta[w.k][3] != dtype:
            continue
        if type(fill) is _S:
            if meta[fill.k][0] or meta[fill.k][2] != () or meta[fill.k][3] != dtype:
                continue
        elif type(fill) not in (int, float):
            continue
        jm = producer.get(mid.k)
        if jm is None or steps[jm][1] is not Mul or steps[jm][3] or meta[mid.k][3] != dtype:
            continue
        x, scale = steps[jm][2]
        if type(x) is not _S:
            x, scale = scale, x
        if type(x) is not _S or type(scale) not in (int, float) or meta[x.k][3] != dtype:
            continue
        cshape = meta[cond.k][2]
        if len(cshape) > ndim or any(c not in (1, s) for c, s in
                                     zip(cshape[::-1], meta[x.k][2][::-1])):  # fmt: skip
            continue
        if any(steps[i][0] == "grad" for i in range(jm, j)):
            continue
        needs = (steps[jm][5][0 if steps[jm][2][0] is x else 1], False, False, False, False)
        new[jm] = new[jw] = ("skip",)
        new[j] = ("op", ScaledMaskedSoftmax, (x, cond, fill, scale, inv), {}, st[4], needs,
                  st[6], False, st[8])  # fmt: skip
        for k in (mid.k, w.k):
            dead.add(k)
            meta[k] = (False, *meta[k][1:])
        done.append("mul, where and softmax ran as one scaled masked softmax")
    return [st for st in new if st[0] != "skip"], meta, done


def _is_conv(cls: Any) -> bool:
    # lucid-nn's convolution op, by name (as ``_is_max_pool``)
    return getattr(cls, "__name__", "") == "Convolution" and cls.__module__.startswith("lucid.nn")


def _fuse_conv_max_pool(
    steps: list[tuple[Any, ...]], meta: dict[int, Any], out_t: Any, dead: set[int]
) -> tuple[list[tuple[Any, ...]], dict[int, Any], list[str]]:
    """``max_pool2d(conv2d(x, w, b))`` as one ``_fused_conv.ConvMaxPool`` where ``x`` has one
    channel and needs no gradient (a first layer on images), the convolution has stride and
    dilation 1 and one group, the pool's window is its stride (no padding or dilation, no
    indices returned) and the convolution's output feeds only the pool: the output is never
    written (the pool reads it from a scratch plane) and the backward makes no scattered
    gradient (``_fused_conv``)."""
    reads, outs = _reads_and_outs(steps, out_t)
    ops = [j for j, st in enumerate(steps) if st[0] in ("op", "call", "alias", "grad")]
    new = list(steps)
    meta = dict(meta)
    done: list[str] = []
    for a, b in zip(ops, ops[1:]):
        c, p = new[a], new[b]
        if c[0] != "op" or p[0] != "op" or not _is_conv(c[1]) or not _is_max_pool(p[1]):
            continue
        if c[3] or p[3] or len(c[2]) != 7 or len(p[2]) != 7 or len(p[4]) != 1:
            continue
        x, w, bias, stride, padding, dilation, groups = c[2]
        mid = c[4][0]
        y, kernel, pstride, ppad, pdil, ceil_mode, ret_idx = p[2]
        if type(x) is not _S or type(w) is not _S or (bias is not None and type(bias) is not _S):
            continue
        if type(y) is not _S or y.k != mid or reads.get(mid) != 1 or mid in outs:
            continue
        if c[5][0] or stride != (1, 1) or dilation != (1, 1) or groups != 1:
            continue
        if tuple(kernel) != tuple(pstride) or tuple(ppad) != (0, 0) or tuple(pdil) != (1, 1):
            continue
        if ceil_mode is not False or ret_idx is not False or len(kernel) != 2:
            continue
        if getattr(c[8], "name", "") != "numpy":  # the fused op computes on NumPy arrays
            continue
        _, _, xshape, dt = meta[x.k]
        if meta[w.k][3] != dt or (bias is not None and meta[bias.k][3] != dt):
            continue
        wshape = meta[w.k][2]
        if len(wshape) != 4 or not _fused_conv.fusable(xshape, dt, wshape[2:], padding, kernel):
            continue
        needs = (False, c[5][1], c[5][2], False, False, False)
        exact = bool(_fused_conv.EXACT)  # the mode the program keeps
        new[a] = ("skip",)
        new[b] = ("op", _fused_conv.ConvMaxPool, (x, w, bias, padding, tuple(kernel), exact),
                  {}, p[4], needs, p[6], False, p[8])  # fmt: skip
        dead.add(mid)
        meta[mid] = (False, *meta[mid][1:])
        done.append(_fused_conv.REWRITE + ("" if exact else _fused_conv.INEXACT_NOTE))
    return [st for st in new if st[0] != "skip"], meta, done


def _fuse_gelu(
    steps: list[tuple[Any, ...]], meta: dict[int, Any]
) -> tuple[list[tuple[Any, ...]], list[str]]:
    """``gelu(x)`` (exact) on a float32 NumPy array that needs a gradient as
    ``_fused_gelu.GeluSlope``: the forward keeps the slope, the backward is one multiply; the
    same bits."""
    new = list(steps)
    done: list[str] = []
    for j, st in enumerate(steps):
        if st[0] != "op" or st[1] is not Gelu or st[3] or len(st[2]) != 2 or not st[5][0]:
            continue
        x, approximate = st[2]
        if type(x) is not _S or approximate != "none" or len(st[4]) != 1:
            continue
        if getattr(st[8], "name", "") != "numpy" or meta[st[4][0]][3] != meta[x.k][3]:
            continue
        if not _fused_gelu.fusable(meta[x.k][2], meta[x.k][3]):
            continue
        new[j] = ("op", _fused_gelu.GeluSlope, (x,), {}, st[4], (True,), st[6], False, st[8])
        done.append("gelu ran keeping its slope for the backward")
    return new, done


_MADE_WRITE = "an in-place write on a tensor the function made"


def _plain_write(rec: Any, k: int) -> bool:
    """Whether the tensor of slot ``k``, written in place, shares storage with no other
    tensor of the capture (no view of another, none a view of it): rebinding its slot to the
    written value is then the whole write."""
    t = rec.keep[rec._kept[k]]
    if t._base is not None:
        return False
    return not any(getattr(o, "_base", None) is t for o in rec.keep)


def _has_tensor(x: Any) -> bool:
    tx = type(x)
    if tx is _S:
        return True
    if tx in (tuple, list):
        return any(_has_tensor(v) for v in x)
    if tx is dict:
        return any(_has_tensor(v) for v in x.values())
    return False


def _nested(args: Any, kwargs: dict[str, Any]) -> bool:
    """Whether an op's arguments hold a tensor below the top level or in its keywords
    (``Function.apply`` hands those to ``forward`` as Tensors, not arrays)."""
    return any(type(a) is not _S and _has_tensor(a) for a in args) or _has_tensor(kwargs)


def _slots_in(t: Any, out: list[int]) -> None:
    if type(t) is _S:
        out.append(t.k)
    elif type(t) in (tuple, list) or isinstance(t, tuple):
        for v in t:
            _slots_in(v, out)
    elif type(t) is dict:
        for v in t.values():
            _slots_in(v, out)


def _rebuild(t: Any, env: dict[int, Tensor]) -> Any:
    tt = type(t)
    if tt is _S:
        return env[t.k]
    if tt is tuple:
        return tuple([_rebuild(v, env) for v in t])
    if tt is list:
        return [_rebuild(v, env) for v in t]
    if tt is dict:
        return {k: _rebuild(v, env) for k, v in t.items()}
    if isinstance(t, tuple):  # a named tuple
        return tt(*[_rebuild(v, env) for v in t])
    return t
