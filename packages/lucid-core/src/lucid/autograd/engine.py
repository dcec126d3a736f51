"""The autograd engine: one iterative walk of the graph in reverse topological order.

Each node's backward runs once, after every gradient flowing into it has been summed; leaf
gradients are summed over the whole pass, passed through the leaf's hooks, then accumulated
into ``.grad``. No recursion, so graphs of any depth work.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from sys import getrefcount
from typing import Any, cast

import numpy as np

from lucid import _memory_format
from lucid._creation import from_data, ones_like, zeros, zeros_like
from lucid._tensor import Tensor
from lucid.amp import autocast_mode
from lucid.autograd import anomaly_mode, grad_mode
from lucid.autograd import function as _function
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
            if _memory_format._marked:
                g = ones_like(out)
            else:  # ones_like's array without its factory checks (every loss.backward())
                data, backend = out._data, out._backend
                if type(data) is np.ndarray:  # np.full's two steps, without its Python wrapper
                    arr = np.empty(data.shape, dtype=data.dtype)
                    arr.fill(1.0)
                else:
                    arr = backend.xp.full(data.shape, 1.0, dtype=data.dtype)
                g = Tensor.from_backend_array(arr, backend)
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
    if len(roots) == 1:
        # one root (``loss.backward()``): no edge leads back to it (the graph has no cycles),
        # so a node is new exactly when it has no count yet: one dict, no ``seen`` set
        while stack:
            node = stack.pop()
            for e in node._edges:
                if type(e) is tuple:
                    nxt = e[0]
                    if nxt in deps:
                        deps[nxt] += 1
                    else:
                        deps[nxt] = 1
                        stack.append(nxt)
        return deps
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
    _running.append(task)
    try:
        result = _run(task, outputs, grads, create_graph, inputs, allow_unused)
    finally:
        _running.pop()
    for callback in task.callbacks:  # queue_callback: the pass is over, its grads are final
        callback()
    return result


def _run(  # the pass itself (run_backward keeps the running-task stack around it)
    task: _GraphTask,
    outputs: Sequence[Any],
    grads: list[Any],
    create_graph: bool,
    inputs: Sequence[Any] | None,
    allow_unused: bool,
) -> tuple[Any, ...] | None:
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
        try:
            while ready:
                node = ready.pop()
                task.run_node(node, pending.pop(node))
        except BaseException:
            _wait_deferred(task, quiet=True)
            raise
        if task.deferred:
            _wait_deferred(task)
        if task.capture is None:
            _accumulate(task.leaf_grads, create_graph)
            return None
        return _captured(inputs or (), task.capture, task.leaf_grads, allow_unused)


class _Running(threading.local):
    """This thread's backward passes in progress, innermost last."""

    def __init__(self) -> None:
        self.tasks: list[_GraphTask] = []

    def append(self, task: _GraphTask) -> None:
        self.tasks.append(task)

    def pop(self) -> None:
        self.tasks.pop()


_running = _Running()


def deferring() -> bool:
    """Whether a backward pass runs on this thread that can wait for work left running
    (:func:`defer`): not in anomaly mode, whose checks read every gradient as it is made."""
    return bool(_running.tasks) and not anomaly_mode._state.enabled


def defer(wait: Callable[[], None]) -> None:
    """Have this thread's running backward pass call ``wait()`` before it next reads a leaf's
    gradient (a second term for the same leaf) and before the pass ends (the leaves' hooks and
    ``.grad``, ``autograd.grad``'s results): for a gradient a node's backward left being
    computed on another thread, which flows only to a leaf (lucid-nn's Linear: its weight's
    gradient on the pool while the pass goes on; docs/performance.md). Only where
    :func:`deferring` said True."""
    _running.tasks[-1].deferred.append(wait)


def _wait_deferred(task: _GraphTask, quiet: bool = False) -> None:
    """Wait for the work the pass left running (``defer``), every piece even after an error;
    the first error is raised unless ``quiet`` (the pass is failing already)."""
    waits, task.deferred = task.deferred, []
    error: BaseException | None = None
    for wait in waits:
        try:
            wait()
        except BaseException as e:  # noqa: BLE001  (raised below, after the others are done)
            if error is None:
                error = e
    if error is not None and not quiet:
        raise error


def queue_callback(callback: Callable[[], None]) -> None:
    """Call ``callback()`` once the backward pass now running has finished (its leaves'
    ``.grad`` accumulated, or ``autograd.grad``'s results gathered), as PyTorch's
    ``Variable._execution_engine.queue_callback``; for hooks that need the whole pass."""
    if not _running.tasks:
        raise RuntimeError("queue_callback can only be called during a backward pass")
    _running.tasks[-1].callbacks.append(callback)


class _GraphTask:
    """The state of one backward pass: gradients waiting at each node, the count of edges
    into each node not yet run, the nodes ready to run, the leaves' summed gradients and,
    for ``autograd.grad``, where to capture the inputs' gradients and which nodes must run."""

    __slots__ = ("retain_graph", "pending", "deps", "ready", "leaf_grads", "capture", "needed",
                 "callbacks", "deferred")  # fmt: skip

    def __init__(self, retain_graph: bool) -> None:
        self.retain_graph = retain_graph
        self.callbacks: list[Callable[[], None]] = []  # queue_callback: run when the pass ends
        self.pending: dict[Function, list[Any]] = {}  # per node: one gradient slot per output
        self.deps: dict[Function, int] = {}  # per node: the edges into it still to run
        self.ready: list[Function] = []  # nodes whose gradients are all summed
        self.leaf_grads: dict[int, list[Any]] = {}  # id(leaf) -> [leaf, summed gradient]
        self.capture: dict[tuple[Function, int], Any] | None = None  # (node, output) -> grad
        self.needed: set[Function] | None = None  # nodes with a path to the inputs
        self.deferred: list[Callable[[], None]] = []  # defer: waits before a leaf's sum is read

    def run_node(self, node: Function, grads: list[Any]) -> None:
        """Run ``node``'s backward on its summed ``grads`` and pass the results along its
        edges: to the next nodes' slots (readying those with nothing more to wait for) and to
        the leaves' sums; then free what it saved unless the graph is retained. One method,
        both paths inline: a helper call per node cost the path that took it 1-2%."""
        edges = node._edges
        on_path = True
        in_grads: Sequence[Any]
        if (
            node._pre_hooks
            or node._retained
            or node._node_pre_hooks
            or node._post_hooks
            or self.capture is not None
            or self.needed is not None
            or anomaly_mode._state.enabled
        ):  # hooks, a retained grad, autograd.grad's inputs or anomaly detection
            if node._pre_hooks or node._retained:
                grads = _apply_output_hooks(node, grads)
            if node._node_pre_hooks:
                grads = _apply_node_hooks(node._node_pre_hooks, grads, (grads,), "prehook")
            capture = self.capture
            if capture is not None:
                for k, g in enumerate(grads):
                    if (node, k) in capture:
                        capture[(node, k)] = g
            needed = self.needed
            on_path = needed is None or node in needed  # autograd.grad: only those run
            if on_path and _any_not_none(grads):
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
        else:  # a training step's every node: the same steps without their checks
            for g in grads:
                if g is not None:
                    if node._freed and node._had_saved:
                        raise RuntimeError(_FREED_MSG)
                    in_grads = _call_backward(node, grads)
                    break
            else:
                in_grads = (None,) * len(edges)
        pending, deps, leaf_grads = self.pending, self.deps, self.leaf_grads
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
                    slot[k] = g if old is None else _plus(old, g)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    self.ready.append(nxt)
            elif g is not None:
                data, ref = g._data, edge._data
                if data.shape != ref.shape or data.dtype != ref.dtype:
                    g = _reduce_to(g, tuple(ref.shape), ref.dtype)
                entry = leaf_grads.get(id(edge))
                if entry is None:
                    leaf_grads[id(edge)] = [edge, g, False]
                else:
                    if self.deferred:  # a term may still be being computed (defer)
                        _wait_deferred(self)
                    _add_leaf(leaf_grads, edge, g)
        if not self.retain_graph and on_path:  # autograd.grad leaves nodes below its inputs
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
    rule = _CONJ_RULE.get(node._impl)  # False for most custom Functions: no dtype reads
    if rule:  # a lucid op: ``_conjugates``' dtype test inline while the dtypes are known real
        conj = False
        for g in grads:
            if _COMPLEX_NATIVE.get(g._data.dtype) is not False:
                conj = _conjugates(node, grads)
                break
    else:
        conj = rule is None and _conjugates(node, grads)
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
    """Zeros for the outputs no gradient reached (multi-output ops see a full set); None
    where the node asked for it (``set_materialize_grads(False)``) or the output is no tensor."""
    if not node._materialize:
        return grads
    backend = node.out_backend
    return [
        g
        if g is not None or shape is None
        else zeros(shape, dtype=backend.dtype_from_native(dt), device=backend)
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
            t._grad = g if t._grad is None else t._grad + g  # the slot: no setter checks
    return grads


def _add_leaf(leaf_grads: dict[int, list[Any]], leaf: Any, g: Any) -> None:
    entry = leaf_grads.get(id(leaf))
    if entry is None:
        leaf_grads[id(leaf)] = [leaf, g, False]  # [leaf, summed gradient, sum made here]
    elif entry[2]:
        _add_into(entry, g)
    else:
        total = _plus(entry[1], g)
        entry[1] = total
        entry[2] = _owned_sum(total)  # a fresh array no one else holds: later terms go into it


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` of two gradients for one slot (the same shape and dtype by now).

    Without a graph to build and without an ``intercept_ops``/``observe_ops`` block to see the
    op, the sum is the Add op's own array call (the same bits) without its ``Function.apply``
    (a model that reuses a weight per time step sums its gradients many times a step)."""
    if (
        grad_mode._state.enabled
        or _function._interceptors
        or _function._observers
        or _memory_format._marked
        or type(a) is not Tensor
        or type(b) is not Tensor
    ):
        return a + b
    backend = a._backend
    x, y = a._data, b._data
    if backend is not b._backend or x.dtype != y.dtype or x.shape != y.shape:
        return a + b
    quiet = backend.fp_quiet  # as Function.apply: no floating-point warnings from an op
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        out = backend.xp.add(x, y)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    return Tensor.from_backend_array(out, backend)


def _accumulate(leaf_grads: dict[int, list[Any]], create_graph: bool) -> None:
    for entry in leaf_grads.values():
        leaf, g = entry[0], entry[1]
        entry[1] = None  # the pass's reference: _take counts the others
        hooks = leaf._hooks
        if hooks:
            for hook in list(hooks.values()):
                r = hook(g)
                if r is not None:
                    g = r
            r = None
        old = leaf._grad  # the slot, read and set without the ``grad`` setter's checks
        if old is None:
            leaf._grad = g if create_graph else _take(g)
        elif create_graph:
            leaf._grad = old + g
        else:
            set_data_inplace(old, old._data + g._data)
        post = getattr(leaf, "_post_acc_hooks", None)  # unset on most tensors: no slot cost
        if post:
            for hook in list(post.values()):
                hook(leaf)


# References to a gradient that only this pass holds, as _take sees them (getrefcount's
# argument, _take's parameter, _accumulate's local): the Tensor, and its array (the Tensor's
# field, _take's local, the argument).
_TENSOR_REFS = 3
_ARRAY_REFS = 3


def _take(g: Any) -> Tensor:
    """A leaf's first gradient as its ``.grad``: the array itself where nothing else holds
    it, else a copy (PyTorch's AccumulateGrad steals a gradient of use count 1 likewise).

    Only a NumPy array that is writable and contiguous (the layout a copy would have) and
    that owns its memory, or is the sole view spanning a base no one else holds, is taken;
    a gradient a hook kept, a retained non-leaf's ``.grad``, a user's ``gradient=`` or a
    slice of a larger gradient is copied as before."""
    arr = g._data
    if (
        type(arr) is np.ndarray
        and getrefcount(g) <= _TENSOR_REFS
        and getrefcount(arr) <= _ARRAY_REFS
        and arr.flags.writeable
        and (arr.flags.c_contiguous or arr.flags.f_contiguous)
    ):
        base = arr.base
        if base is None or (
            type(base) is np.ndarray
            and base.base is None
            and getrefcount(base) <= 3  # arr's field, the local, the argument
            and base.nbytes == arr.nbytes
        ):
            return Tensor.from_backend_array(arr, g._backend)
    return cast(Tensor, g.detach()._fresh_copy())


def _owned_sum(t: Any) -> bool:
    """Whether ``t`` is the array sum _plus just made (a NumPy array only it holds)."""
    arr = t._data
    return (
        type(arr) is np.ndarray
        and t.grad_fn is None
        and arr.base is None
        and getrefcount(arr) <= _ARRAY_REFS
    )


def _add_into(entry: list[Any], g: Any) -> None:
    """Add ``g`` into the leaf's running sum, an array this pass made (``entry[2]``): the same
    ``np.add`` as ``_plus`` (the same bits), written into the sum instead of a new array."""
    total = entry[1]
    x, y = total._data, g._data
    backend = total._backend
    if (
        grad_mode._state.enabled
        or _function._interceptors
        or _function._observers
        or _memory_format._marked
        or type(g) is not Tensor
        or g._backend is not backend
        or type(y) is not np.ndarray
        or x.dtype != y.dtype
        or x.shape != y.shape
    ):
        entry[1], entry[2] = _plus(total, g), False
        return
    quiet = backend.fp_quiet  # as Function.apply: no floating-point warnings from an op
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        np.add(x, y, out=x)
    finally:
        if quiet is not None:
            quiet[0].reset(token)


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
                f"The differentiated Tensor at index {i} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
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
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (torch.autograd).
    ``grad_variables`` is torch's deprecated name of ``grad_tensors`` (with its warning)."""
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
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
            t._grad = g if t._grad is None else t._grad + g  # the slot: no setter checks
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
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    ``inputs`` may hold ``GradientEdge`` items (``autograd.graph.get_gradient_edge``). With
    ``is_grads_batched`` the first dim of every ``grad_outputs`` tensor is a batch of
    cotangents: the result has one vector-Jacobian product per row, stacked along dim 0 (lucid
    runs one backward per row, over the retained graph). ``allow_unused`` unset follows
    ``materialize_grads``; ``only_inputs`` is torch's deprecated, ignored flag.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    outs = _as_list(outputs)
    if type(inputs) is GradientEdge:  # a tuple itself: one input, not a list of two
        inputs = [inputs]
    ins: Sequence[Any] = [_edge_input(t) if type(t) is GradientEdge else t
                          for t in _as_list(inputs)]  # fmt: skip
    grads = _as_list(grad_outputs) or [None] * len(outs)
    retain = create_graph if retain_graph is None else retain_graph
    if is_grads_batched:
        return _batched_grad(outs, ins, grads, retain, create_graph,
                             allow_unused or materialize_grads, materialize_grads)  # fmt: skip
    result = run_backward(outs, grads, retain, create_graph, inputs=ins,
                          allow_unused=allow_unused or materialize_grads)  # fmt: skip
    assert result is not None
    if materialize_grads:
        result = tuple(zeros_like(t) if g is None else g for t, g in zip(ins, result))
    return result


def _batched_grad(
    outs: list[Any], ins: Sequence[Any], grads: list[Any], retain: bool, create_graph: bool,
    allow_unused: bool, materialize: bool,
) -> tuple[Any, ...]:  # fmt: skip
    """``grad`` for each row of the batched ``grads``, stacked (``is_grads_batched``)."""
    sizes = {int(g.shape[0]) for g in grads if isinstance(g, Tensor) and g.ndim}
    if len(sizes) != 1 or any(not isinstance(g, Tensor) or not g.ndim for g in grads):
        raise RuntimeError(
            "autograd.grad(is_grads_batched=True): every grad_output must be a Tensor with a "
            f"leading batch dim of one common size, got shapes "
            f"{[tuple(g.shape) if isinstance(g, Tensor) else g for g in grads]}"
        )
    n = sizes.pop()
    rows = []
    for i in range(n):
        got = run_backward(outs, [g[i] for g in grads], retain or i < n - 1, create_graph,
                           inputs=ins, allow_unused=allow_unused)  # fmt: skip
        assert got is not None
        rows.append(got)
    result: list[Any] = []
    for j, t in enumerate(ins):
        col = [r[j] for r in rows]
        if all(g is None for g in col) and not materialize:
            result.append(None)
            continue
        col = [zeros_like(t) if g is None else g for g in col]
        result.append(stack_rows(col))
    return tuple(result)


def stack_rows(rows: list[Any]) -> Any:
    """Tensors of one shape joined along a new dim 0 (written row by row: no ops import)."""
    first = rows[0]
    out = zeros((len(rows), *first.shape), dtype=first.dtype, device=first.device)
    for i, r in enumerate(rows):
        out[i] = r
    return out


class GradientEdge(tuple):  # type: ignore[type-arg]
    """``(node, output_nr)``: a place in the graph gradients flow into (PyTorch's
    ``torch.autograd.graph.GradientEdge``); ``autograd.grad`` takes one as an input."""

    __slots__ = ()

    def __new__(cls, node: Any, output_nr: int) -> GradientEdge:
        return super().__new__(cls, (node, output_nr))

    @property
    def node(self) -> Any:
        """The node (a ``grad_fn``, or an ``AccumulateGrad`` for a leaf)."""
        return self[0]

    @property
    def output_nr(self) -> int:
        """Which output of ``node`` the gradient is for."""
        return int(self[1])


class _EdgeInput:
    """A non-leaf ``GradientEdge`` standing in for its tensor among ``autograd.grad``'s inputs."""

    requires_grad = True
    _hooks = None

    def __init__(self, node: Any, output_nr: int) -> None:
        self.grad_fn, self._output_nr = node, output_nr


def _edge_input(edge: GradientEdge) -> Any:
    variable = getattr(edge.node, "variable", None)
    return variable if variable is not None else _EdgeInput(edge.node, edge.output_nr)
