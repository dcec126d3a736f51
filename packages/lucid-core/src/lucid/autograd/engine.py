"""The autograd engine: one iterative walk of the graph in reverse topological order.

Each node's backward runs once, after every gradient flowing into it has been summed; leaf
gradients are summed over the whole pass, passed through the leaf's hooks, then accumulated
into ``.grad``. No recursion, so graphs of any depth work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid._creation import from_data, ones_like, zeros, zeros_like
from lucid._tensor import Tensor
from lucid.amp import autocast_mode
from lucid.autograd import anomaly_mode, grad_mode
from lucid.autograd.function import _FREED_MSG, Function
from lucid.autograd.inplace import set_data_inplace


def _root_grads(outputs: Sequence[Any], grads: Sequence[Any]) -> list[Any]:
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(out)
        elif not isinstance(g, Tensor):
            g = from_data(g, dtype=out.dtype, device=out.device)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                f"output[{i}] has a shape of {tuple(out.shape)}."
            )
        result.append(g)
    return result


def _reduce_to(g: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Undo broadcasting: sum ``g`` down to ``shape``. The one place this happens."""
    if tuple(g.shape) != tuple(shape):
        g = g.sum_to_size(shape)
    if g._data.dtype != dtype:
        target = g.backend.dtype_from_native(dtype)
        if g.dtype.is_complex and not target.is_complex:
            g = g.real  # a real input's gradient is the real part (PyTorch's convention)
        g = g.to(target)
    return g


def _collect(roots: list[Function]) -> dict[Function, int]:
    deps: dict[Function, int] = {}
    stack = list(roots)
    seen = set(roots)
    while stack:
        node = stack.pop()
        for e in node._edges:
            if type(e) is tuple:
                nxt = e[0]
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return deps


def run_backward(
    outputs: Sequence[Any],
    grad_outputs: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    allow_unused: bool = False,
) -> tuple[Any, ...] | None:
    """Backpropagate. With ``inputs`` (autograd.grad), return their grads, don't accumulate."""
    grads = _root_grads(outputs, grad_outputs)
    task = _GraphTask(retain_graph)
    pending = task.pending
    roots: list[Function] = []
    for out, g in zip(outputs, grads):
        if out.grad_fn is None:
            _add_leaf(task.leaf_grads, out, g)
            continue
        node = out.grad_fn
        if node not in pending:
            pending[node] = [None] * len(node._out_meta)
            roots.append(node)
        slot = pending[node]
        k = out._output_nr
        slot[k] = g if slot[k] is None else slot[k] + g
    task.deps = _collect(roots)
    ready = task.ready
    ready.extend([n for n in roots if task.deps.get(n, 0) == 0])
    if inputs is not None:
        task.capture = capture = _capture_map(inputs)
        task.needed = _needed(roots, capture, inputs)
    with grad_mode.set_grad_enabled(create_graph), autocast_mode.suspended():
        while ready:
            node = ready.pop()
            task.run_node(node, pending.pop(node))
        if task.capture is None:
            _accumulate(task.leaf_grads, create_graph)
            return None
        return _captured(inputs or (), task.capture, task.leaf_grads, allow_unused)


class _GraphTask:
    """The state of one backward pass: gradients waiting at each node, the count of edges
    into each node not yet run, the nodes ready to run, the leaves' summed gradients and,
    for ``autograd.grad``, where to capture the inputs' gradients and which nodes must run."""

    __slots__ = ("retain_graph", "pending", "deps", "ready", "leaf_grads", "capture", "needed")

    def __init__(self, retain_graph: bool) -> None:
        self.retain_graph = retain_graph
        self.pending: dict[Function, list[Any]] = {}  # per node: one gradient slot per output
        self.deps: dict[Function, int] = {}  # per node: the edges into it still to run
        self.ready: list[Function] = []  # nodes whose gradients are all summed
        self.leaf_grads: dict[int, list[Any]] = {}  # id(leaf) -> [leaf, summed gradient]
        self.capture: dict[tuple[Function, int], Any] | None = None  # (node, output) -> grad
        self.needed: set[Function] | None = None  # nodes with a path to the inputs

    def run_node(self, node: Function, grads: list[Any]) -> None:
        """Run ``node``'s backward on its summed ``grads`` and pass the results along its
        edges: to the next nodes' slots (readying those with nothing more to wait for) and to
        the leaves' sums; then free what it saved unless the graph is retained."""
        if node._pre_hooks or node._retained:
            grads = _apply_output_hooks(node, grads)
        if node._node_pre_hooks:
            grads = _apply_node_hooks(node._node_pre_hooks, grads, (grads,), "prehook")
        capture = self.capture
        if capture is not None:
            for k, g in enumerate(grads):
                if (node, k) in capture:
                    capture[(node, k)] = g
        edges = node._edges
        needed = self.needed
        if _any_not_none(grads) and (needed is None or node in needed):
            if node._freed and node._had_saved:
                raise RuntimeError(_FREED_MSG)
            if anomaly_mode._state.enabled:
                in_grads = _call_backward_checked(node, grads)
            else:
                in_grads = _call_backward(node, grads)
        else:
            in_grads = (None,) * len(edges)
        if node._post_hooks:
            in_grads = tuple(_apply_node_hooks(node._post_hooks, in_grads, (in_grads, grads),
                                               "hook"))  # fmt: skip
        pending, deps = self.pending, self.deps
        for edge, g in zip(edges, in_grads):
            if edge is None:
                continue
            if type(edge) is tuple:
                nxt, k = edge
                slot = pending.get(nxt)
                if slot is None:
                    slot = pending[nxt] = [None] * len(nxt._out_meta)
                if g is not None:
                    shape, dtype = nxt._out_meta[k]
                    data = g._data
                    if data.shape != shape or data.dtype != dtype:
                        g = _reduce_to(g, shape, dtype)
                    old = slot[k]
                    slot[k] = g if old is None else old + g
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    self.ready.append(nxt)
            elif g is not None:
                data = g._data
                if data.shape != edge._data.shape or data.dtype != edge._data.dtype:
                    g = _reduce_to(g, tuple(edge._data.shape), edge._data.dtype)
                _add_leaf(self.leaf_grads, edge, g)
        if not self.retain_graph:
            node._had_saved = node._saved is not None
            node._saved = None
            node._freed = True


def _needed(
    roots: list[Function], capture: dict[tuple[Function, int], Any], inputs: Sequence[Any]
) -> set[Function]:
    """Nodes with a path to one of ``inputs``: only their backward must run (autograd.grad)."""
    leaf_ids = {id(t) for t in inputs if t.grad_fn is None}
    targets = {node for node, _ in capture}
    needed: set[Function] = set()
    done: set[Function] = set()
    stack: list[tuple[Function, bool]] = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            for e in node._edges:
                if e is None:
                    continue
                if type(e) is tuple:
                    if e[0] in needed or e[0] in targets:
                        needed.add(node)
                        break
                elif id(e) in leaf_ids:
                    needed.add(node)
                    break
            done.add(node)
            continue
        if node in done:
            continue
        stack.append((node, True))
        for e in node._edges:
            if type(e) is tuple and e[0] not in done:
                stack.append((e[0], False))
    return needed


def _capture_map(inputs: Sequence[Any]) -> dict[tuple[Function, int], Any]:
    capture: dict[tuple[Function, int], Any] = {}
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if t.grad_fn is not None:
            capture[(t.grad_fn, t._output_nr)] = None
    return capture


def _any_not_none(items: list[Any]) -> bool:
    for g in items:  # (not `in`/`count`: they would call Tensor.__eq__)
        if g is not None:
            return True
    return False


def _conjugates(node: Function, grads: list[Any]) -> bool:
    """Whether ``node`` is a built-in holomorphic op that sees a complex gradient.

    PyTorch's convention hands a complex input ``g * conj(f'(z))``, the conjugate of the real
    formula ``g * f'(z)`` applied to ``conj(g)``; so the ops of ``lucid.ops`` write their
    formulas once, as for real numbers, and this runs them between two conjugations. The
    non-holomorphic ops (``abs``, ``real``, ``angle``, FFTs...) set ``complex_aware`` and write
    the convention themselves; custom Functions are left as written, as in torch.
    """
    impl = node._impl
    rule = _CONJ_RULE.get(impl)
    if rule is None:
        aware = getattr(impl, "complex_aware", False)
        rule = not aware and impl.__module__.startswith(("lucid.ops.", "lucid.linalg."))
        _CONJ_RULE[impl] = rule
    if not rule:
        return False
    for g in grads:
        native = g._data.dtype
        is_complex = _COMPLEX_NATIVE.get(native)
        if is_complex is None:
            is_complex = _COMPLEX_NATIVE[native] = g.dtype.is_complex
        if is_complex:
            return True
    return False


# Cached per Function class and per native dtype: the backward pass asks for every node, and
# Tensor.dtype is a backend call.
_CONJ_RULE: dict[type, bool] = {}
_COMPLEX_NATIVE: dict[Any, bool] = {}


def _call_backward(node: Function, grads: list[Any]) -> tuple[Any, ...]:
    for g in grads:
        if g is None:
            grads = _fill_missing(node, grads)
            break
    conj = _conjugates(node, grads)
    if conj:
        grads = [g.conj() for g in grads]
    result: tuple[Any, ...] = node._impl.backward(node, *grads)
    if type(result) is not tuple:
        result = (result,)
    if conj:
        result = tuple(r.conj() if isinstance(r, Tensor) else r for r in result)
    n = len(node._edges)
    if len(result) != n:
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        else:
            raise RuntimeError(
                f"function {node.name} returned an incorrect number of gradients "
                f"(expected {n}, got {len(result)})"
            )
    return result


def _call_backward_checked(node: Function, grads: list[Any]) -> tuple[Any, ...]:
    """``_call_backward`` under anomaly detection: an error, or a NaN in a result (with
    ``check_nan``), is reported with the forward stack that recorded ``node``."""
    try:
        result = _call_backward(node, grads)
    except Exception:
        anomaly_mode.warn_anomaly(node)
        raise
    if anomaly_mode._state.check_nan:
        for i, g in enumerate(result):
            if g is not None and bool(g._backend.xp.isnan(g._data).any()):
                anomaly_mode.raise_nan(node, i)
    return result


def _apply_node_hooks(
    hooks: dict[int, Any], grads_in: Any, args: tuple[Any, ...], kind: str
) -> list[Any]:
    """Run a node's ``register_hook``/``register_prehook`` hooks; each may replace ``grads``."""
    grads: list[Any] = list(grads_in)
    for hook in list(hooks.values()):
        r = hook(*args)
        if r is not None:
            r = list(r) if isinstance(r, (tuple, list)) else [r]
            if len(r) != len(grads):
                raise RuntimeError(
                    f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number "
                    f"of values (got {len(r)}, but expected {len(grads)})"
                )
            grads = r
            args = (tuple(grads),) if kind == "prehook" else (tuple(grads), args[1])
    return grads


def _fill_missing(node: Function, grads: list[Any]) -> list[Any]:
    """Zeros for the outputs no gradient reached (multi-output ops see a full set)."""
    backend = node.out_backend
    return [
        g if g is not None else zeros(shape, dtype=backend.dtype_from_native(dt), device=backend)
        for g, (shape, dt) in zip(grads, node._out_meta)
    ]


def _apply_output_hooks(node: Function, grads: list[Any]) -> list[Any]:
    grads = list(grads)
    for k, hooks in (node._pre_hooks or {}).items():
        if grads[k] is None:
            continue
        for hook in hooks.values():
            r = hook(grads[k])
            if r is not None:
                grads[k] = r
    for k, ref in (node._retained or {}).items():
        t = ref()
        if t is not None and grads[k] is not None:
            g = grads[k] if grad_mode.is_grad_enabled() else grads[k].detach()
            t.grad = g if t.grad is None else t.grad + g
    return grads


def _add_leaf(leaf_grads: dict[int, list[Any]], leaf: Any, g: Any) -> None:
    entry = leaf_grads.get(id(leaf))
    if entry is None:
        leaf_grads[id(leaf)] = [leaf, g]
    else:
        entry[1] = entry[1] + g


def _accumulate(leaf_grads: dict[int, list[Any]], create_graph: bool) -> None:
    for leaf, g in leaf_grads.values():
        for hook in (leaf._hooks or {}).values():
            r = hook(g)
            if r is not None:
                g = r
        if leaf.grad is None:
            leaf.grad = g if create_graph else g.detach()._fresh_copy()
        elif create_graph:
            leaf.grad = leaf.grad + g
        else:
            old = leaf.grad
            set_data_inplace(old, old._data + g._data)
        post = getattr(leaf, "_post_acc_hooks", None)  # unset on most tensors: no slot cost
        if post:
            for hook in list(post.values()):
                hook(leaf)


def _captured(
    inputs: Sequence[Any],
    capture: dict[tuple[Function, int], Any],
    leaf_grads: dict[int, list[Any]],
    allow_unused: bool,
) -> tuple[Any, ...]:
    result = []
    for i, t in enumerate(inputs):
        if t.grad_fn is not None:
            g = capture.get((t.grad_fn, t._output_nr))
        else:
            entry = leaf_grads.get(id(t))
            g = entry[1] if entry is not None else None
            if g is not None:
                for hook in (t._hooks or {}).values():
                    r = hook(g)
                    if r is not None:
                        g = r
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) appears to not have been used "
                "in the graph. Set allow_unused=True if this is the desired behavior."
            )
        result.append(g)
    return tuple(result)


# -- the public entry points (lucid.autograd.backward / grad) ------------------------------------
def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (torch.autograd)."""
    outs = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"grad_tensors has {len(grads)} entries but tensors has {len(outs)}")
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is not None:
        ins = _as_list(inputs)
        result = run_backward(outs, grads, retain, create_graph, inputs=ins, allow_unused=True)
        for t, g in zip(ins, result or ()):
            if g is None:
                continue
            g = g if create_graph else g.detach()._fresh_copy()
            t.grad = g if t.grad is None else t.grad + g
            post = getattr(t, "_post_acc_hooks", None)
            if post:
                for hook in list(post.values()):
                    hook(t)
        return
    run_backward(outs, grads, retain, create_graph)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated)."""
    outs = _as_list(outputs)
    ins: Sequence[Any] = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outs)
    retain = create_graph if retain_graph is None else retain_graph
    result = run_backward(outs, grads, retain, create_graph, inputs=ins,
                          allow_unused=allow_unused or materialize_grads)  # fmt: skip
    assert result is not None
    if materialize_grads:
        result = tuple(zeros_like(t) if g is None else g for t, g in zip(ins, result))
    return result
