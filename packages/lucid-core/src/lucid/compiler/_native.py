"""A backend's own compiler under ``lucid.compile`` (MLX's ``mx.compile``).

A backend plugin registers a :class:`BackendCompiler` for its backend type
(:func:`register_backend_compiler`); this module never imports the plugin. Where a capture's
:class:`~lucid.compiler._arrays.ArrayProgram` runs on such a backend, its forward becomes one
pure function of arrays, ``pure(X) -> outputs``, with ``X`` the arguments' arrays, then the
arrays of the tensors it reads from outside (parameters, buffers, constants: read at each
call, so optimizer updates are seen) and the random draws. The backend compiles it; where an
input needs a gradient, the outputs get one graph node whose backward runs the backend's
compiled vector-Jacobian product of the same function.

- Random draws run before the compiled call, eagerly, in the capture's order: lucid's
  generator advances as in eager mode and the draws are the same numbers.
- In-place writes on buffers (running statistics) come back as extra outputs and are written
  after the call with the same function eager mode uses.
- The first compiled call runs at the end of the capture, on the capture's own arrays; its
  outputs are compared with the eager ones, and (in a capture that needs gradients) its
  gradients, for fixed random cotangents, with those of lucid's backward formulas. A compile
  error or a difference beyond float tolerances keeps the array replay, with the reason
  (``Program.native_why``, shown by ``explain``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from lucid import _memory_format
from lucid._tensor import Tensor
from lucid.autograd import anomaly_mode, engine, grad_mode
from lucid.autograd import function as _function
from lucid.autograd.function import Function
from lucid.compiler._arrays import _D, _S, _SAMPLERS, ArrayProgram, _rebuild

# Float tolerances of the check against eager at capture (float32: fused kernels and another
# summation order change the last bits; anything larger is a different computation).
RTOL = 1e-3
ATOL = 1e-4  # times the largest magnitude of the eager value


class BackendCompiler(Protocol):
    """What a backend plugin gives ``lucid.compile``: its compiler over pure array functions."""

    name: str  # as ``explain`` shows it, e.g. "mx.compile"

    def compile(self, fn: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
        """``fn`` (lists of arrays to a list of arrays, no side effects), compiled."""
        ...

    def vjp(self, fn: Callable[..., list[Any]], primals: list[Any],
            cotangents: list[Any]) -> list[Any]:  # fmt: skip
        """The gradients of ``fn(*primals)`` (a list of arrays) for ``cotangents``, one per
        primal; called inside a function that :meth:`compile` compiles."""
        ...

    def stop_gradient(self, a: Any) -> Any:
        """``a``, with no gradient flowing through it in :meth:`vjp`."""
        ...


class NativeConfig:
    """Settings of the backend compilers under ``lucid.compile``
    (``lucid.compiler.native_config``)."""

    # A training call whose outputs are not one loss (a Module returning logits): its
    # backward's vjp computes the forward again, since the cotangents are not known when the
    # forward runs. Off by default: on MLX's CPU that measured slower than eager and than the
    # array replay (docs/performance.md), which then runs such calls.
    recompute_in_backward = False


native_config = NativeConfig()
_factories: list[tuple[type, Callable[[Any], BackendCompiler]]] = []
_made: dict[int, tuple[Any, BackendCompiler]] = {}  # id(backend) -> (backend, its compiler)


def register_backend_compiler(
    backend_type: type, factory: Callable[[Any], BackendCompiler]
) -> None:
    """Let ``lucid.compile`` compile captures whose tensors live on a backend of
    ``backend_type`` with ``factory(backend)`` (a :class:`BackendCompiler`); the MLX plugin
    registers ``mx.compile`` this way."""
    _factories.append((backend_type, factory))


def compiler_for(bk: Any) -> BackendCompiler | None:
    """The registered compiler of backend ``bk`` (made once per backend), or None."""
    got = _made.get(id(bk))
    if got is not None and got[0] is bk:
        return got[1]
    for base, factory in _factories:
        if isinstance(bk, base):
            comp = factory(bk)
            _made[id(bk)] = (bk, comp)
            return comp
    return None


def native_missing(meta: dict[int, tuple[bool, Any, Any, Any]], why: str) -> str:
    """Why a capture with no array program (``why``) is not compiled by its backend's
    compiler ("" where its tensors' backend has none)."""
    for _, bk, _, _ in meta.values():
        comp = compiler_for(bk)
        if comp is not None:
            return f"the capture has no array program ({why}), which {comp.name} needs"
    return ""


class CompiledFunction(Function):
    """The one graph node of a natively compiled call: its backward runs the backend's
    compiled vector-Jacobian product (``grad_fn.name()`` is ``CompiledFunctionBackward0``)."""

    prog: NativeProgram
    inputs: tuple[list[Any], list[Any] | None] | None  # (the call's arrays, the loss's grads)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        """The gradients of the inputs that need them, in edge order."""
        if grad_mode._state.enabled:
            raise RuntimeError(
                "lucid.compile: a compiled function's backward is not differentiable "
                "(create_graph=True through it is not supported, as in torch.compile); "
                "call the function uncompiled for higher-order gradients"
            )
        inputs = ctx.inputs
        if inputs is None:
            raise RuntimeError(_function._FREED_MSG)
        tasks = engine._running.tasks
        if not tasks or not tasks[-1].retain_graph:
            ctx.inputs = None  # freed as the eager nodes free what they saved
        prog = ctx.prog
        bk = ctx.backend
        xs, ones = inputs
        cots = [grads[i]._data for i in prog.rg_at]
        j = prog.vg_at
        others = [a for i, a in enumerate(cots) if i != j]
        if ones is not None and not any([_nonzero(bk, a) for a in others]):
            # the loss's gradients for a cotangent of 1, made with the forward: scaled (the
            # other outputs' cotangents are zeros: the engine's fill where none reached them)
            c = cots[j].reshape(())
            got = [g * c if g.dtype == c.dtype else (g * c).astype(g.dtype) for g in ones]
        else:
            got = prog.vjp(xs, cots)
        return tuple([Tensor.from_backend_array(g, bk) for g in got])


def _nonzero(bk: Any, a: Any) -> bool:
    """Whether array ``a`` has a nonzero element (a sync of one boolean)."""
    return bool(bk.to_numpy(bk.xp.any(a != 0)))


class NativeProgram:
    """An :class:`ArrayProgram` compiled by its backend's compiler; see the module's
    docstring. ``build`` returns why not (a string) where it does not fit."""

    pure: Callable[[list[Any]], list[Any]]  # the forward on arrays, as written
    fwd: Callable[..., list[Any]]  # compiled
    vjp_c: Callable[..., list[Any]] | None  # its vector-Jacobian product, compiled
    fwd_vg: Callable[..., list[Any]] | None  # the forward and its gradients, compiled
    vg: bool  # training calls run fwd_vg (one output needing a gradient has one element)
    vg_at: int  # which of the outputs needing gradients that one is
    source: str

    def __init__(self, ap: ArrayProgram, comp: BackendCompiler) -> None:
        self.ap = ap
        self.comp = comp
        self.consts: list[Any] = []
        self.name = comp.name

    @classmethod
    def build(cls, ap: ArrayProgram, rec: Any) -> NativeProgram | str:
        """The compiled program of ``ap`` (from the capture ``rec``), or why there is none."""
        bk = ap.bk
        if bk is None:
            return "the function makes no tensors"
        comp = compiler_for(bk)
        if comp is None:
            return ""  # no compiler for this backend: the array replay, nothing to report
        if any(m[1] is not bk for m in ap.meta.values()):
            return f"tensors on more than one device ({comp.name} compiles one)"
        self = cls(ap, comp)
        why = self._layout()
        if why:
            return why
        train = bool(self.diff_at) and grad_mode._state.enabled
        self.pure = self._source(train)
        self.fwd = comp.compile(self.pure)  # (compiled functions trace at their first call)
        self.vg = self.vg and train
        self.fwd_vg = comp.compile(self._vg_fn) if self.vg else None
        if train and not self.vg and not native_config.recompute_in_backward:  # (see it)
            return (f"a call needing gradients whose outputs are not one loss: {comp.name}'s "
                    "backward would compute the forward again (lucid.compiler.native_config."
                    "recompute_in_backward = True to run it so)")  # fmt: skip
        full = train and (not self.vg or len(self.rg_out) > 1)  # (traced only where called)
        self.vjp_c = comp.compile(self._vjp_fn) if full else None
        if self.vg:
            self.name = f"{comp.name} (forward and gradients in one call)"
        elif train:
            self.name = f"{comp.name} (forward; the backward's vjp computes it again)"
        try:
            why = self._check(rec)
        except Exception as exc:  # noqa: BLE001 - any failure of the backend's compiler
            why = f"{comp.name} failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
        return why or self

    # -- building -------------------------------------------------------------------------------
    def _layout(self) -> str:
        """Where each input of the pure function comes from; why not, where it cannot."""
        ap = self.ap
        made: set[int] = set(range(ap.n_args))
        self.x_const: list[tuple[int, Tensor]] = []  # (slot, tensor read at each call)
        self.samples: list[tuple[Any, ...]] = []  # sampler steps, drawn before the call
        self.writes: list[tuple[Any, Tensor, int]] = []  # (fn, buffer, slot of its new value)
        for st in ap.steps:
            kind = st[0]
            if kind == "const":
                self.x_const.append((st[1], st[2]))
                made.add(st[1])
            elif kind == "call" and st[1].__name__ in _SAMPLERS:
                used: list[int] = []
                _slots(st[2], used)
                _slots(st[3], used)
                if any(k not in made for k in used):
                    return (f"a random draw ({st[1].__name__.lstrip('_')}) reads values the "
                            "function computes")  # fmt: skip
                self.samples.append(st)
                made.update(st[4])
            elif kind == "call":  # an in-place write (ArrayProgram.build checked it)
                target, value = st[2]
                if ap.meta[target.k][3] != ap.meta[value.k][3]:
                    return "an in-place write that changes a tensor's dtype"
                if target.k in ap.tensor_of:  # a buffer: written after the call
                    self.writes.append((st[1], ap.tensor_of[target.k], value.k))
                made.update(st[4])  # (a tensor the function made: its slot is rebound)
            elif kind == "op":
                made.update(st[4])
        self.n_x = ap.n_args + len(self.x_const) + sum(len(st[4]) for st in self.samples)
        slot_x = list(range(ap.n_args)) + [k for k, _ in self.x_const]
        slot_x += [o for st in self.samples for o in st[4]]
        self.slot_x = slot_x  # input index -> slot
        x_of = {k: i for i, k in enumerate(slot_x)}
        self.diff_at = [x_of[k] for k in ap.ext_rg]  # inputs needing a gradient (the edges)
        self.n_out = len(ap.out_slots)
        rg_slots = [k for k in ap.node_outs if ap.meta[k][0]]
        self.rg_at = [ap.node_outs.index(k) for k in rg_slots]  # node outputs with gradients
        self.rg_out = [ap.out_slots.index(k) for k in rg_slots]
        # one output with one element needing a gradient (a loss): its gradients are made
        # with the forward, for a cotangent of 1, and scaled by the one backward brings
        # (other outputs may need gradients too, as nanoGPT's logits: where their cotangents
        # are zeros, as when only the loss is backpropagated, the loss's gradients serve)
        ones = [i for i, k in enumerate(rg_slots) if math.prod(ap.meta[k][2]) == 1]
        self.vg = len(ones) == 1
        self.vg_at = ones[0] if ones else -1
        return ""

    def _source(self, train: bool) -> Any:
        """``pure(X)``: the forward's ops on arrays, the outputs then the buffers' new values.
        In a training call, what eager mode leaves without a gradient (an op's output under
        ``no_grad``, a ``detach``, an index output) gets none from the vjp either."""
        ap = self.ap
        lines = ["def pure(X):"]
        b = lines.append
        for i, k in enumerate(self.slot_x):
            b(f"    a{k} = X[{i}]")
        sg = self._c(self.comp.stop_gradient)
        for st in ap.steps:
            kind = st[0]
            if kind == "alias":
                cut = train and ap.meta[st[2]][0] and not st[3]
                b(f"    a{st[1]} = {sg}(a{st[2]})" if cut else f"    a{st[1]} = a{st[2]}")
            elif kind == "op":
                _, op, args, kwargs, outs, needs, _, is_tuple, bk = st
                K, B = self._c(op), self._c(bk)
                b(f"    c = {K}.__new__({K}); c.backend = c.out_backend = {B}; "
                  f"c.xp = {B}.xp; c.needs_input_grad = {self._c(needs)}")  # fmt: skip
                call = self._call(args, kwargs)
                lhs = "".join(f"a{o}, " for o in outs) if is_tuple else f"a{outs[0]}"
                b(f"    {lhs} = {K}.forward(c, {call})")
                if train and any(needs):
                    for o, rg in zip(outs, st[6]):
                        if not rg:
                            b(f"    a{o} = {sg}(a{o})")
            elif kind == "call" and st[1].__name__ not in _SAMPLERS:
                target, value = st[2]
                b(f"    a{st[4][0]} = a{target.k} = a{value.k}")
        outs = [f"a{k}" for k in ap.out_slots] + [f"a{v}" for _, _, v in self.writes]
        b(f"    return [{', '.join(outs)}]")
        ns: dict[str, Any] = {"C": self.consts}
        exec(compile("\n".join(lines) + "\n", "<lucid.compile native>", "exec"), ns)  # noqa: S102
        self.source = "\n".join(lines) + "\n"
        return ns["pure"]

    def _c(self, v: Any) -> str:
        tv = type(v)
        if tv in (int, bool, type(None), str) or (
            tv is float and v == v and abs(v) != float("inf")
        ):
            return repr(v)
        self.consts.append(v)
        return f"C[{len(self.consts) - 1}]"

    def _render(self, x: Any) -> str:
        if type(x) is _D or type(x) is _S:
            return f"a{x.k}"
        tx = type(x)
        if tx is tuple:
            return "(" + "".join(self._render(v) + ", " for v in x) + ")"
        if tx is list:
            return "[" + ", ".join(self._render(v) for v in x) + "]"
        if tx is dict:
            return "{" + ", ".join(f"{k!r}: {self._render(v)}" for k, v in x.items()) + "}"
        return self._c(x)

    def _call(self, args: Any, kwargs: dict[str, Any]) -> str:
        parts = [self._render(a) for a in args]
        return ", ".join(parts + [f"{k}={self._render(v)}" for k, v in kwargs.items()])

    def _vg_fn(self, xs: list[Any]) -> list[Any]:
        """The forward's outputs (and buffer writes), then the gradients of ``diff_at`` for a
        cotangent of 1 on the one output that needs a gradient."""
        diff_at, pure, ap = self.diff_at, self.pure, self.ap
        k = self.rg_out[self.vg_at]
        _, bk, shape, dt = ap.meta[ap.out_slots[k]]
        side: list[Any] = []

        def f(*d: Any) -> list[Any]:
            ys = list(xs)
            for i, v in zip(diff_at, d):
                ys[i] = v
            side[:] = pure(ys)
            return [side[k]]

        grads = self.comp.vjp(f, [xs[i] for i in diff_at], [bk.xp.ones(shape, dtype=dt)])
        return [*side, *grads]

    def _vjp_fn(self, xs: list[Any], cots: list[Any]) -> list[Any]:
        diff_at, rg_out, pure = self.diff_at, self.rg_out, self.pure

        def f(*d: Any) -> list[Any]:
            ys = list(xs)
            for i, v in zip(diff_at, d):
                ys[i] = v
            out = pure(ys)
            return [out[i] for i in rg_out]

        return self.comp.vjp(f, [xs[i] for i in diff_at], cots)

    # -- checking against eager ---------------------------------------------------------------
    def _check(self, rec: Any) -> str:
        """Run the compiled forward (and gradients) on the capture's arrays and compare them
        with the eager run's; why they differ, or ""."""
        ap = self.ap

        def eager(k: int) -> Tensor:
            t: Tensor = rec.keep[rec._kept[k]]
            return t

        xs = [eager(k)._data for k in self.slot_x]
        got = self.fwd(xs) if self.fwd_vg is None else self.fwd_vg(xs)
        bk = ap.bk
        for k, a in zip(ap.out_slots, got[: self.n_out]):
            why = _differs(bk, a, eager(k)._data, f"output (slot {k})")
            if why:
                return why
        if not self.diff_at or not grad_mode._state.enabled:
            return ""
        outs = [eager(k) for k in ap.node_outs if ap.meta[k][0]]
        if any(t.grad_fn is None for t in outs):
            return "an output that needs a gradient has no graph in the capture"
        rng = np.random.default_rng(0)  # fixed cotangents (lucid's generator is not touched)
        cots = [bk.asarray(rng.standard_normal(t._data.shape).astype(np.dtype(t.dtype.name)))
                for t in outs]  # fmt: skip
        ins = [eager(k) for k in ap.ext_rg]
        if self.vjp_c is not None:
            want = engine.grad(outs, ins, [Tensor.from_backend_array(c, bk) for c in cots],
                               retain_graph=True, allow_unused=True)  # fmt: skip
            why = _grads_differ(bk, ap.ext_rg, self.vjp(xs, cots), want)
            if why:
                return why
        if self.fwd_vg is None:
            return ""
        j = self.vg_at  # the loss alone backpropagated: the gradients made with the forward
        want = engine.grad([outs[j]], ins, [Tensor.from_backend_array(cots[j], bk)],
                           retain_graph=True, allow_unused=True)  # fmt: skip
        c = cots[j].reshape(())
        return _grads_differ(bk, ap.ext_rg, [g * c for g in got[self.n_out + len(self.writes) :]],
                             want)  # fmt: skip

    # -- running --------------------------------------------------------------------------------
    def usable(self) -> bool:
        """Whether this call can run compiled (else the array replay runs it)."""
        if (_function._observers or _function._interceptors or _function.saved_hooks.stack
                or anomaly_mode._state.enabled or _memory_format._marked):  # fmt: skip
            return False
        return all(t.requires_grad is rg for t, rg in self.ap.checks)

    def vjp(self, xs: list[Any], cots: list[Any]) -> list[Any]:
        """The gradients of the inputs in ``diff_at`` order for the outputs' ``cots``."""
        assert self.vjp_c is not None
        got: list[Any] = self.vjp_c(xs, cots)
        return got

    def run(self, leaves: list[Tensor]) -> Any:
        """The outputs of one call (with one graph node where an input needs a gradient)."""
        ap = self.ap
        make = Tensor.from_backend_array
        xs = [t._data for t in leaves]
        xs += [t._data for _, t in self.x_const]
        for st in self.samples:  # the draws, in the capture's order, as eager makes them
            _, fn, args, kwargs, outs, _, is_tuple, bk = st
            have = dict(zip(self.slot_x, xs))
            r = fn(*_wrap(args, have, bk), **_wrap(kwargs, have, bk))
            xs += [t._data for t in r] if is_tuple else [r._data]
        train = self.diff_at and grad_mode._state.enabled
        vg = self.fwd_vg
        got = vg(xs) if train and vg is not None else self.fwd(xs)
        n = self.n_out + len(self.writes)
        for (fn, buf, _), a in zip(self.writes, got[self.n_out : n]):
            fn(buf, make(a, ap.bk))
        meta = ap.meta
        env: dict[int, Tensor] = {k: leaves[k] for k in range(ap.n_args)}
        for k, t in self.x_const:
            env[k] = t
        nr = {k: i for i, k in enumerate(ap.node_outs)}
        node = None
        if train:
            node = CompiledFunction.__new__(CompiledFunction)
            node.backend = node.out_backend = ap.bk
            node.xp = ap.bk.xp
            ext = [env[k] for k in ap.ext_rg]
            node._edges = [t if t.grad_fn is None else (t.grad_fn, t._output_nr) for t in ext]
            node.needs_input_grad = (True,) * len(ext)
            node._impl = CompiledFunction
            node._saved = []
            node.prog, node.inputs = self, (xs, got[n:] if vg is not None else None)
            node._out_meta = tuple([(meta[k][2], meta[k][3]) for k in ap.node_outs])
        for k, a in zip(ap.out_slots, got[: self.n_out]):
            if k in env:
                continue
            rg = node is not None and meta[k][0]
            t = make(a, meta[k][1], rg)
            if rg and k in nr:
                t.grad_fn, t._output_nr = node, nr[k]
            env[k] = t
        return _rebuild(ap.out_t, env)


def _grads_differ(bk: Any, slots: list[int], mine: list[Any], want: Any) -> str:
    """Why gradients ``mine`` are not lucid's ``want`` (Tensors or None) within tolerance."""
    refs = [bk.xp.zeros(g.shape, dtype=g.dtype) if w is None else w._data
            for g, w in zip(mine, want)]  # fmt: skip
    # one scale for all: a gradient that is zero in exact arithmetic (a bias before a
    # normalisation) is rounding noise in both, compared with the gradients that are not
    scale = max([float(np.max(np.abs(bk.to_numpy(r)))) for r in refs if r.size] or [0.0])
    for k, g, r in zip(slots, mine, refs):
        why = _differs(bk, g, r, f"gradient (slot {k})", scale)
        if why:
            return why
    return ""


def _differs(bk: Any, got: Any, want: Any, what: str, scale: float | None = None) -> str:
    """Why ``got`` is not ``want`` within the float tolerances ("" where it is); ``scale``:
    the magnitude ``ATOL`` is relative to (``want``'s largest by default)."""
    g = np.asarray(bk.to_numpy(got))
    w = np.asarray(bk.to_numpy(want))
    if g.shape != w.shape or g.dtype != w.dtype:
        return f"{what}: {g.dtype}{list(g.shape)} where eager gives {w.dtype}{list(w.shape)}"
    if g.dtype.kind not in "fc":
        return "" if np.array_equal(g, w) else f"{what} differs from eager"
    if scale is None:
        scale = float(np.max(np.abs(w))) if w.size else 0.0
    if np.allclose(g, w, rtol=RTOL, atol=ATOL * scale, equal_nan=True):
        return ""
    worst = float(np.max(np.abs(g.astype(np.float64) - w)))
    return f"{what} differs from eager by up to {worst:.3g} (largest |value| {scale:.3g})"


def _slots(x: Any, out: list[int]) -> None:
    tx = type(x)
    if tx is _S or tx is _D:
        out.append(x.k)
    elif tx in (tuple, list):
        for v in x:
            _slots(v, out)
    elif tx is dict:
        for v in x.values():
            _slots(v, out)


def _wrap(x: Any, env: dict[int, Any], bk: Any) -> Any:
    """A sampler's recorded arguments with this call's arrays (Tensors for ``_S`` slots)."""
    tx = type(x)
    if tx is _D:
        return env[x.k]
    if tx is _S:
        return Tensor.from_backend_array(env[x.k], bk)
    if tx is tuple:
        return tuple([_wrap(v, env, bk) for v in x])
    if tx is list:
        return [_wrap(v, env, bk) for v in x]
    if tx is dict:
        return {k: _wrap(v, env, bk) for k, v in x.items()}
    return x
