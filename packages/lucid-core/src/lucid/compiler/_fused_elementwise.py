"""Chains of elementwise ops as one compiled pass each way: ``lucid.compile``'s fuser.

``fuse`` finds, in a capture on NumPy arrays, groups of elementwise ops (add, sub, mul, div,
neg, square, ``**`` 2, 3 and 0.5, sqrt, rsqrt, reciprocal, relu, exp, log, tanh, sigmoid) of
one float dtype whose intermediates feed only the group and are not returned, and replaces
each group by one :class:`FusedElementwise` op: minGPT's tanh GELU (eight ops), swish
(``x * sigmoid(x)``), a hand-written RMSNorm's scaling. The inputs may broadcast; every op of a
group has the group's output shape.

- **Forward**: the arithmetic as generated numba loops over the output, the inputs read by
  index where they broadcast (never copied out); ``exp``, ``log`` and ``tanh`` as NumPy's own
  SIMD ufuncs, in place on a buffer between two loops (numba's scalar libm calls are ~45x slower
  than NumPy's ``tanh``). minGPT's GELU is two loops and one ``tanh`` pass, where eager code
  makes eight passes and eight temporaries.
- **Backward**: one loop that recomputes the arithmetic from the inputs and the kept ufunc
  results, and writes each input's gradient by reverse mode over the scalar code, each op's
  rule written as eager code's formula for it; the engine reduces a broadcast input's gradient
  as it does for eager ops.

Values: each op is computed with the float operations eager code uses (IEEE ``+ - * /`` and
``sqrt``, NumPy's ``exp``/``tanh``/``log``), so the forward gives eager code's bits; a
gradient may differ in its last bits where a value feeds several ops of a group (their sums in
another order). Where numba's kernels do not load, nothing is fused (``FUSE_ELEMENTWISE``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.backends._numpy import _compiled
from lucid.ops.elementwise import Add, Div, Mul, PowScalar, Sub
from lucid.ops.unary import Exp, Log, Neg, Reciprocal, Relu, Rsqrt, Sigmoid, Sqrt, Square, Tanh

# Whether programs built from now on fuse elementwise chains (with ``_arrays.FUSE``); off:
# each op runs as captured (A/B measurements, docs/performance.md).
FUSE_ELEMENTWISE = True
# A group of two ops is fused from this many elements (below, one call of the fused op costs
# about what the two eager ones do: docs/performance.md); three or more, at any size (a sigmoid
# counts as three).
PAIR_ELEMENTS = 1 << 16
_JIT = "_fused_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# The ufuncs that stay NumPy's (vectorised libm) between the generated loops.
_UFUNCS = {"exp": np.exp, "log": np.log, "tanh": np.tanh}

# Each rule: the op's scalar code, ``{0}``, ``{1}`` its arguments and ``{y}`` its value, and its
# gradient for each argument (``{g}`` the incoming one), eager code's formula; a ufunc name
# instead of code: NumPy's ufunc of the first argument. Constants: ``ONE``, ``ZERO``, ``C<n>``.
_ADD = ("{0} + {1}", ("{g}", "{g}"))
_SUB = ("{0} - {1}", ("{g}", "-{g}"))
_MUL = ("{0} * {1}", ("{g} * {1}", "{g} * {0}"))
_DIV = ("{0} / {1}", ("{g} / {1}", "-{g} * {0} / ({1} * {1})"))
_NEG = ("-{0}", ("-{g}",))
_SQUARE = ("{0} * {0}", ("{g} * {0} * TWO",))
_CUBE = ("{0} * {0} * {0}", ("{g} * THREE * ({0} * {0})",))
_SQRT = ("math.sqrt({0})", ("{g} / ({y} * TWO)",))
_HALF_POW = ("math.sqrt({0})", ("{g} * HALF * (ONE / math.sqrt({0}))",))
_RSQRT = ("ONE / math.sqrt({0})", ("{g} * {y} * {y} * {y} * MHALF",))
_RECIPROCAL = ("ONE / {0}", ("-{g} * {y} * {y}",))
_RELU = ("{0} if ({0} >= ZERO or {0} != {0}) else ZERO", ("{g} if {y} > ZERO else ZERO",))
_EXP = ("exp", ("{g} * {y}",))
_LOG = ("log", ("{g} / {0}",))
_TANH = ("tanh", ("{g} * (ONE - {y} * {y})",))
# sigmoid as eager code (and torch) computes it: 1 / (1 + exp(-a))
_NEGATE = ("-{0}", (None,))
_SIGMOID = ("ONE / (ONE + {1})", ("{g} * (ONE - {y}) * {y}", None))

_BINARY = {Add: _ADD, Sub: _SUB, Mul: _MUL, Div: _DIV}
_UNARY = {Neg: _NEG, Square: _SQUARE, Sqrt: _SQRT, Rsqrt: _RSQRT, Reciprocal: _RECIPROCAL,
          Relu: _RELU, Exp: _EXP, Log: _LOG, Tanh: _TANH}  # fmt: skip
_POWERS = {2: _SQUARE, 3: _CUBE, 0.5: _HALF_POW}
_NAMED = {"ONE": 1.0, "ZERO": 0.0, "TWO": 2.0, "THREE": 3.0, "HALF": 0.5, "MHALF": -0.5}


def _scalar(v: Any) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def _rules(st: tuple[Any, ...], slot: Any) -> list[tuple[Any, ...]] | None:
    """The IR nodes of an op step, ``(rule, args)`` with args ``("s", slot)``, ``("c",
    number)`` or ``("n", offset)`` (an earlier node of the same step, from the end); None where
    the op is not fused."""
    cls, args, kwargs = st[1], st[2], st[3]
    if kwargs or st[7]:
        return None
    refs: list[tuple[str, Any]] = []
    for a in args:
        if type(a) is slot:
            refs.append(("s", a.k))
        elif _scalar(a):
            refs.append(("c", a))
        else:
            return None
    if cls in _BINARY and len(refs) == 2 and any(r[0] == "s" for r in refs):
        return [(_BINARY[cls], refs)]
    if cls is PowScalar and len(refs) == 2 and refs[0][0] == "s" and refs[1][0] == "c":
        rule = _POWERS.get(refs[1][1])
        return None if rule is None or type(refs[1][1]) is bool else [(rule, refs[:1])]
    if len(refs) != 1 or refs[0][0] != "s":
        return None
    if cls is Sigmoid:
        return [(_NEGATE, refs), (_EXP, [("n", 1)]), (_SIGMOID, [refs[0], ("n", 1)])]
    rule = _UNARY.get(cls)
    return None if rule is None else [(rule, refs)]


def fuse(
    steps: list[tuple[Any, ...]],
    meta: dict[int, Any],
    reads: dict[int, int],
    outs: set[int],
    dead: set[int],
    slot: Any,
) -> tuple[list[tuple[Any, ...]], dict[int, Any], list[str]]:
    """The steps with each fusable group of elementwise ops as one ``FusedElementwise`` step
    (the module's docstring), the slots' metadata (the dropped intermediates need no gradient)
    and a line per group. ``reads``: how many steps read each slot; ``outs``: the returned
    slots; ``dead`` gets the slots no longer made; ``slot``: ``_arrays._S``."""
    if not FUSE_ELEMENTWISE or _compiled.load(_JIT) is None:
        return steps, meta, []
    nodes: dict[int, list[tuple[Any, ...]]] = {}
    for j, st in enumerate(steps):
        if st[0] != "op" or len(st[4]) != 1 or getattr(st[8], "name", "") != "numpy":
            continue
        rg, _, shape, dt = meta[st[4][0]]
        if np.dtype(dt) not in _FLOATS or 0 in shape:
            continue
        ir = _rules(st, slot)
        if ir is None:
            continue
        ins = [r[1] for _, refs in ir for r in refs if r[0] == "s"]
        if all(meta[k][3] == dt and len(meta[k][2]) <= len(shape) for k in ins):
            nodes[j] = ir
    producer = {steps[j][4][0]: j for j in nodes}
    readers: dict[int, list[int]] = {}
    for j in nodes:
        for k in {a.k for a in steps[j][2] if type(a) is slot}:
            readers.setdefault(k, []).append(j)
    new = list(steps)
    meta = dict(meta)
    done: list[str] = []
    taken: set[int] = set()
    for root in sorted(nodes, reverse=True):
        if root in taken:
            continue
        shape, dt = meta[steps[root][4][0]][2], meta[steps[root][4][0]][3]
        group = {root}
        grew = True
        while grew:
            grew = False
            for m in sorted(group):
                for a in steps[m][2]:
                    p = producer.get(a.k) if type(a) is slot else None
                    if p is None or p in group or p in taken or a.k in outs:
                        continue
                    if meta[a.k][2] != shape or meta[a.k][3] != dt:
                        continue
                    if len(readers.get(a.k, ())) != reads.get(a.k, 0):
                        continue  # read by a step that is not an elementwise op
                    if not all(r in group for r in readers[a.k]):
                        continue
                    group.add(p)
                    grew = True
        members = sorted(group)
        if len(members) < 2 or any(steps[i][0] == "grad" for i in range(members[0], root)):
            continue
        if sum(len(nodes[i]) for i in members) < 3 and math.prod(shape) < PAIR_ELEMENTS:
            continue  # two plain ops (a sigmoid counts three: its exp, and the two sides)
        plan = _Plan.make([steps[i] for i in members], [nodes[i] for i in members], meta)
        if plan is None:
            continue
        taken |= group
        for i in members[:-1]:
            new[i] = ("skip",)
            k = steps[i][4][0]
            dead.add(k)
            meta[k] = (False, *meta[k][1:])
        st = steps[root]
        inputs = tuple([slot(k) for k in plan.inputs])
        needs = (False, *[bool(meta[k][0]) for k in plan.inputs])
        new[root] = ("op", FusedElementwise, (plan, *inputs), {}, st[4], needs, st[6], False,
                     st[8])  # fmt: skip
        done.append(f"{len(members)} elementwise ops ran as one fused op ({plan.describe()})")
    return [st for st in new if st[0] != "skip"], meta, done


def _coalesce(
    shape: tuple[int, ...], shapes: list[tuple[int, ...]]
) -> tuple[list[int], list[list[bool]]]:
    """The output's dims with size-1 dims dropped and neighbours merged where every input
    spans both or neither, and for each input which of those dims it spans (else broadcasts)."""
    nd = len(shape)
    dims: list[int] = []
    masks: list[list[bool]] = [[] for _ in shapes]
    for d in range(nd):
        if shape[d] == 1:
            continue
        spans = []
        for s in shapes:
            ds = d - (nd - len(s))
            spans.append(ds >= 0 and s[ds] != 1)
        if dims and all(m[-1] == b for m, b in zip(masks, spans)):
            dims[-1] *= shape[d]
            continue
        dims.append(shape[d])
        for m, b in zip(masks, spans):
            m.append(b)
    if not dims:
        return [1], [[True] for _ in shapes]
    return dims, masks


class _Loops:
    """A plan's compiled loops for one order of the output's dims (``_Plan.loops``)."""

    dims: list[int]  # the loops' dims (``_coalesce``)
    compact: list[tuple[int, ...]]  # each input's shape as its loops read it
    stages: list[tuple[Any, list[tuple[int, str]]]]  # (loop, [(buffer, ufunc)]) per stage
    backward: Any  # None: no input needs a gradient


class _Plan:
    """One group: its scalar code (``make``), and its loops for each memory order met."""

    inputs: list[int]  # the slots read from outside the group, in argument order
    rg: list[bool]  # which of them need a gradient
    shape: tuple[int, ...]
    dtype: Any
    names: list[str]  # the ops' names (``describe``)
    nodes: list[tuple[Any, list[str]]]  # (rule, argument names) in order; the last is the output
    aligned: list[tuple[int, ...]]  # each input's shape with leading 1s to the output's ndim
    n_bufs: int
    out_buf: int  # the buffer that is the output (-1: the last loop's own output)
    loops: dict[tuple[int, ...], _Loops]  # by the permutation of the dims they run in

    @classmethod
    def make(cls, steps: list[tuple[Any, ...]], irs: list[list[tuple[Any, ...]]],
             meta: dict[int, Any]) -> _Plan | None:  # fmt: skip
        self = cls()
        out_slot = steps[-1][4][0]
        self.shape, self.dtype = tuple(meta[out_slot][2]), np.dtype(meta[out_slot][3])
        value_of: dict[int, str] = {}  # slot made in the group -> its node
        self.inputs, self.nodes, self.names, self.loops = [], [], [], {}
        for st, ir in zip(steps, irs):
            made: list[str] = []
            for rule, refs in ir:
                names = []
                for r in refs:
                    if r[0] == "n":
                        names.append(made[-r[1]])
                    elif r[0] == "c":
                        names.append(f"K{r[1]!r}")
                    elif r[1] in value_of:
                        names.append(value_of[r[1]])
                    else:
                        if r[1] not in self.inputs:
                            self.inputs.append(r[1])
                        names.append(f"x{self.inputs.index(r[1])}")
                self.nodes.append((rule, names))
                made.append(f"v{len(self.nodes) - 1}")
            value_of[st[4][0]] = made[-1]
            self.names.append(getattr(st[1], "__name__", "?"))
        self.rg = [bool(meta[k][0]) for k in self.inputs]
        nd = len(self.shape)
        self.aligned = [(1,) * (nd - len(meta[k][2])) + tuple(meta[k][2]) for k in self.inputs]
        self.n_bufs = sum(rule[0] in _UFUNCS for rule, _ in self.nodes)
        last_is_ufunc = self.nodes[-1][0][0] in _UFUNCS
        self.out_buf = self.n_bufs - 1 if last_is_ufunc else -1
        try:
            self._warm()
        except Exception:  # noqa: BLE001  (numba could not compile it: the ops run unfused)
            return None
        return self

    def describe(self) -> str:
        return " ".join(self.names)

    def _loops(self, perm: tuple[int, ...]) -> _Loops:
        """The loops for the output's dims taken in the order ``perm``, made at first use."""
        got = self.loops.get(perm)
        if got is None:
            shape = tuple(self.shape[d] for d in perm)
            shapes = [tuple(s[d] for d in perm) for s in self.aligned]
            dims, masks = _coalesce(shape, shapes)
            got = self.loops[perm] = _generate(self.nodes, dims, masks, self.rg, self.dtype)
        return got

    def _warm(self) -> None:
        """Compile the loops of the output's own order now (at capture), on one-element arrays
        of the same types."""
        lp = self._loops(tuple(range(len(self.shape))))
        one = _Loops()
        one.dims, one.compact = [1] * len(lp.dims), [(1,) * len(c) for c in lp.compact]
        one.stages, one.backward = lp.stages, lp.backward
        xs = [np.ones(c, dtype=self.dtype) for c in one.compact]
        out, bufs = self._run(one, xs)
        self._back(one, bufs, xs, out, np.ones(one.dims, dtype=self.dtype))

    # -- running ----------------------------------------------------------------------------
    def _order(self, xs: tuple[Any, ...]) -> tuple[int, ...]:
        """The order of the output's dims to run in: the memory order of the first input of the
        output's shape where it is a permutation of a C-ordered array (NumPy's "K" order, so
        the results have its layout, as eager ops' have), else the output's own."""
        nd = len(self.shape)
        ident = tuple(range(nd))
        for x, a in zip(xs, self.aligned):
            if a != self.shape or x.ndim != nd:
                continue
            if x.flags.c_contiguous:
                return ident
            perm = tuple(sorted(ident, key=lambda d: -abs(x.strides[d]) if x.shape[d] > 1 else 0))
            if all(s >= 0 for s in x.strides) and x.transpose(perm).flags.c_contiguous:
                return perm
            return ident
        return ident

    def forward(self, xs: tuple[Any, ...]) -> tuple[Any, Any]:
        """The output, and what the backward reads."""
        perm = self._order(xs)
        lp = self._loops(perm)
        ident = perm == tuple(range(len(perm)))
        args = []
        for x, a, c in zip(xs, self.aligned, lp.compact):
            if not ident:
                x = x.reshape(a).transpose(perm)
            args.append(np.ascontiguousarray(x).reshape(c))
        out, bufs = self._run(lp, args)
        return self._unperm(out, perm, ident), (perm, lp, bufs, args, out)

    def _unperm(self, a: Any, perm: tuple[int, ...], ident: bool) -> Any:
        """A result of the loops in the output's shape (a view in its memory order)."""
        if ident:
            return a.reshape(self.shape)
        inv = tuple(np.argsort(perm))
        return a.reshape([self.shape[d] for d in perm]).transpose(inv)

    def _run(self, lp: _Loops, args: list[Any]) -> tuple[Any, list[Any]]:
        dims, dt = lp.dims, self.dtype
        bufs = [np.empty(dims, dtype=dt) for _ in range(self.n_bufs)]
        out = bufs[self.out_buf] if self.out_buf >= 0 else np.empty(dims, dtype=dt)
        for loop, ufuncs in lp.stages:
            loop(out, *bufs, *args)
            for b, name in ufuncs:
                _UFUNCS[name](bufs[b], out=bufs[b])
        return out, bufs

    def backward(self, saved: Any, g: Any) -> list[Any]:
        """Each input's gradient (None where it needs none), in the output's shape."""
        perm, lp, bufs, args, out = saved
        ident = perm == tuple(range(len(perm)))
        if not ident:
            g = g.transpose(perm)
        g2 = np.ascontiguousarray(g, dtype=self.dtype).reshape(lp.dims)
        grads = self._back(lp, bufs, args, out, g2)
        return [None if a is None else self._unperm(a, perm, ident) for a in grads]

    def _back(self, lp: _Loops, bufs: list[Any], args: list[Any], out: Any, g: Any) -> list[Any]:
        if lp.backward is None:
            return [None] * len(self.inputs)
        grads = [np.empty(lp.dims, dtype=self.dtype) if need else None for need in self.rg]
        lp.backward(out, *bufs, *args, g, *[a for a in grads if a is not None])
        return grads


def _generate(nodes: list[tuple[Any, list[str]]], dims: list[int], masks: list[list[bool]],
              rg: list[bool], dtype: Any) -> _Loops:  # fmt: skip
    """A group's loops over ``dims`` (each input spanning the dims of its mask): a stage per
    depth of ufuncs, then the backward, compiled."""
    jit = _compiled.load(_JIT)
    assert jit is not None
    lp = _Loops()
    lp.dims = dims
    lp.compact = [tuple(d for d, m in zip(dims, mk) if m) or (1,) for mk in masks]
    idx = ", ".join(f"i{d}" for d in range(len(dims)))
    loads = {f"x{i}": f"X{i}[{', '.join(f'i{d}' for d, m in enumerate(mk) if m) or '0'}]"
             for i, mk in enumerate(masks)}  # fmt: skip
    dt = dtype.type
    consts: dict[str, Any] = {k: dt(v) for k, v in _NAMED.items()}
    for _, args in nodes:
        for a in args:
            if a.startswith("K"):
                consts[_const_name(a)] = dt(float(a[1:]))
    stage: dict[str, int] = {}
    ufunc_nodes: list[int] = []
    for n, (rule, args) in enumerate(nodes):
        s = max([stage.get(a, 0) for a in args] or [0])
        if rule[0] in _UFUNCS:
            s += 1
            ufunc_nodes.append(n)
        stage[f"v{n}"] = s
    last = len(nodes) - 1
    root_is_ufunc = nodes[last][0][0] in _UFUNCS
    n_stages = stage[f"v{last}"] + (0 if root_is_ufunc else 1)
    buf_of = {n: b for b, n in enumerate(ufunc_nodes)}
    bufs = ", ".join(f"b{b}" for b in range(len(ufunc_nodes)))
    xs = ", ".join(f"X{i}" for i in range(len(masks)))

    def value(a: str) -> str:
        return _const_name(a) if a.startswith("K") else a

    def emit(targets: list[int], upto: int) -> list[str]:
        """Code computing the nodes ``targets`` need, reading the ufunc results of stages up to
        ``upto`` from their buffers."""
        need: set[int] = set()
        todo = list(targets)
        while todo:
            n = todo.pop()
            if n in need:
                continue
            need.add(n)
            rule, args = nodes[n]
            if rule[0] in _UFUNCS and stage[f"v{n}"] <= upto:
                continue  # read from its buffer
            todo += [int(a[1:]) for a in args if a.startswith("v")]
        body: list[str] = []
        used_x = sorted({a for n in need for a in nodes[n][1] if a.startswith("x")})
        body += [f"{a} = {loads[a]}" for a in used_x]
        for n in sorted(need):
            rule, args = nodes[n]
            if rule[0] in _UFUNCS:
                if stage[f"v{n}"] <= upto:
                    body.append(f"v{n} = b{buf_of[n]}[{idx}]")
                continue
            body.append(f"v{n} = " + rule[0].format(*[value(a) for a in args]))
        return body

    lp.stages = []
    for s in range(n_stages):
        writes = [n for n in ufunc_nodes if stage[f"v{n}"] == s + 1]
        wanted: list[int] = []
        stores: list[str] = []
        for n in writes:
            arg = nodes[n][1][0]
            if arg.startswith("v"):
                wanted.append(int(arg[1:]))
                stores.append(f"b{buf_of[n]}[{idx}] = {arg}")
            else:  # the ufunc of an input
                stores.append(f"b{buf_of[n]}[{idx}] = {loads[arg]}")
        if s == n_stages - 1 and not root_is_ufunc:
            wanted.append(last)
            stores.append(f"o[{idx}] = v{last}")
        src = _loop("stage", f"o, {bufs}, {xs}" if bufs else f"o, {xs}", dims,
                    emit(wanted, s) + stores)  # fmt: skip
        ufuncs = [(buf_of[n], nodes[n][0][0]) for n in writes]
        lp.stages.append((jit.build(src, "stage", consts), ufuncs))
    # the backward: recompute, then reverse mode over the nodes (later consumers first, as the
    # engine sums a value's gradients)
    body = emit(list(range(len(nodes))), n_stages)
    body.append(f"d{last} = g[{idx}]")
    has: set[str] = {f"d{last}"}
    for n in range(last, -1, -1):
        if f"d{n}" not in has:
            continue
        rule, args = nodes[n]
        for a, grad in zip(args, rule[1]):
            if grad is None or a.startswith("K"):
                continue
            expr = grad.format(*[value(v) for v in args], g=f"d{n}", y=f"v{n}")
            tgt = f"d{a[1:]}" if a.startswith("v") else f"dx{a[1:]}"
            if tgt in has:
                body.append(f"{tgt} = {tgt} + ({expr})")
            else:
                body.append(f"{tgt} = {expr}")
                has.add(tgt)
    outs = []
    for i, need in enumerate(rg):
        if need:
            outs.append(f"gx{i}")
            body.append(f"gx{i}[{idx}] = " + (f"dx{i}" if f"dx{i}" in has else "ZERO"))
    params = ", ".join(p for p in ("o", bufs, xs, "g", ", ".join(outs)) if p)
    src = _loop("backward", params, dims, body)
    lp.backward = jit.build(src, "backward", consts) if outs else None
    return lp


def _const_name(a: str) -> str:
    """The global name of a literal's constant (``K0.5`` -> ``K0_5``...)."""
    return "K" + a[1:].replace("-", "m").replace(".", "_").replace("+", "p")


def _loop(name: str, params: str, dims: list[int], body: list[str]) -> str:
    """A function ``name(params)`` running ``body`` for every index of ``o``'s shape."""
    lines = [f"def {name}({params}):"]
    nd = len(dims)
    lines.append(
        "    "
        + ", ".join(f"n{d}" for d in range(nd))
        + (", = o.shape" if nd == 1 else " = o.shape")
    )
    for d in range(nd):
        lines.append("    " * (d + 1) + f"for i{d} in range(n{d}):")
    pad = "    " * (nd + 1)
    lines += [pad + ln for ln in body]
    return "\n".join(lines) + "\n"


class FusedElementwise(Function):
    """A group of elementwise ops as ``lucid.compile`` runs it (the module's docstring)."""

    @staticmethod
    def forward(ctx: Any, plan: _Plan, *xs: Any) -> Any:
        out, ctx.kept = plan.forward(xs)
        ctx.plan = plan
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        grads = ctx.plan.backward(ctx.kept, g._data)
        bk = g.backend
        return (None, *[None if a is None else Tensor.from_backend_array(a, bk) for a in grads])
