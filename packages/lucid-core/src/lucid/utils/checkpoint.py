"""Activation checkpointing (``torch.utils.checkpoint``): trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` with the graph recorded as usual, except that the
tensors its ops save for backward are dropped (a ``saved_tensors_hooks`` pack hook keeps only
their index). When backward first needs one of them, ``fn`` runs again on the same inputs —
with the RNG state and autocast state of the first run — and the recomputed values are
handed out by index. This is PyTorch's non-reentrant scheme: the graph is the ordinary one,
so ``autograd.grad`` with respect to inputs or parameters, hooks, nesting and keyword
arguments all work, and gradients are exactly those of the plain run.

Selective activation checkpointing (``context_fn=`` returning
:func:`create_selective_checkpoint_contexts`) keeps the outputs of the ops a policy chooses:
the first run asks the policy about every op (``Function.apply``, seen through
``intercept_ops``) and keeps what it says to save; the recomputation hands those outputs back
instead of running the op again. An op here is its class: the ``Function`` subclass that
``Function.apply`` runs (``type(out.grad_fn)`` for lucid's own ops, e.g.
``lucid.ops.matmul.Matmul`` for ``lucid.mm``), or the ``CompositeOp`` of a composite function;
lucid has no aten. ``CheckpointFunction`` is torch's reentrant Function, and
:class:`GraphExecGroup` makes backward calls share one recomputation.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any

from lucid import _generator
from lucid._tensor import Tensor
from lucid.amp import autocast_mode
from lucid.autograd import engine, grad_mode
from lucid.autograd import function as _function
from lucid.autograd.function import CompositeOp, Function, intercept_ops
from lucid.autograd.graph import saved_tensors_hooks

__all__ = [
    "SAC_IGNORED_OPS",
    "CheckpointError",
    "CheckpointFunction",
    "CheckpointPolicy",
    "DefaultDeviceType",
    "GraphExecGroup",
    "SelectiveCheckpointContext",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "create_selective_checkpoint_contexts",
    "detach_variable",
    "get_device_states",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
    "set_device_states",
]


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``torch.utils.checkpoint.detach_variable``: each tensor of ``inputs`` detached, keeping
    its ``requires_grad``; other items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out: list[Any] = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """``torch.utils.checkpoint.check_backward_validity``: warn where no tensor of ``inputs``
    requires grad (a checkpoint's gradients would all be None)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


def get_device_states(*args: Any) -> tuple[list[int], list[Any]]:
    """``torch.utils.checkpoint.get_device_states``: the accelerator devices among ``args``'
    tensors and their RNG states; ``([], [])`` here (CPU tensors; MLX keeps one generator,
    which ``checkpoint`` saves itself)."""
    return [], []


def set_device_states(devices: list[int], states: list[Any], *,
                      device_type: str | None = None) -> None:  # fmt: skip
    """``torch.utils.checkpoint.set_device_states``: restores what ``get_device_states``
    gave (nothing, here)."""
    if len(devices) != len(states):
        raise ValueError(f"expected one state a device, got {len(devices)} and {len(states)}")


class DefaultDeviceType:
    """``torch.utils.checkpoint.DefaultDeviceType``: the device type ``checkpoint`` saves RNG
    states for when its inputs name none."""

    _default_device_type = "cpu"

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default device type."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default device type."""
        return DefaultDeviceType._default_device_type


def _is_checkpoint_valid() -> bool:
    """Whether the backward pass running now may run a reentrant checkpoint's backward: not
    one that was given ``inputs`` (``autograd.grad``, ``backward(inputs=...)``), as torch's
    ``torch.autograd._is_checkpoint_valid``."""
    tasks = engine._running.tasks
    return not tasks or tasks[-1].capture is None


class CheckpointFunction(Function):
    """torch's reentrant checkpoint as an autograd Function:
    ``CheckpointFunction.apply(run_function, preserve_rng_state, *args)`` runs
    ``run_function(*args)`` without recording and, in backward, runs it again on detached
    inputs (with the first run's RNG and autocast state) and backpropagates through that run
    inside the outer backward (``torch.utils.checkpoint.CheckpointFunction``). Its limits are
    torch's: only ``backward()`` without ``inputs`` (no ``autograd.grad``), and at least one
    input and output must need grad. ``checkpoint`` itself always uses the non-reentrant
    scheme.

    >>> import lucid
    >>> w = lucid.randn(3, 3, requires_grad=True)
    >>> x = lucid.randn(2, 3, requires_grad=True)
    >>> CheckpointFunction.apply(lambda a: (a @ w).tanh(), True, x).sum().backward()
    >>> tuple(w.grad.shape)
    (3, 3)
    """

    forward_on_arrays = False  # torch's contract: forward and backward on Tensors

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:  # fmt: skip
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.device_type = DefaultDeviceType.get_device_type()
        ctx.autocast_enabled = dict(autocast_mode._state.enabled)
        if preserve_rng_state:
            ctx.fwd_cpu_state = _generator.get_rng_state()
            ctx.had_device_in_fwd = False  # one RNG state covers every lucid backend
        # Non-tensor inputs kept in ctx, a None placeholder for each tensor (saved below).
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with grad_mode.no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument."
            )
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        with _generator.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                _generator.set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with grad_mode.enable_grad(), _autocast_as(ctx.autocast_enabled):
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        # backward through the outputs that need grad only
        outputs_with_grad = []
        args_with_grad = []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        engine.backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


class _Settings:
    early_stop = True
    debug: bool | None = None


_settings = _Settings()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """``torch.utils.checkpoint.set_checkpoint_early_stop``: inside the block, whether a
    recomputation may stop once it has what backward needs (kept; lucid's recomputation runs
    the whole function, which gives the same gradients)."""
    previous = _settings.early_stop
    _settings.early_stop = bool(enable)
    try:
        yield
    finally:
        _settings.early_stop = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """``torch.utils.checkpoint.set_checkpoint_debug_enabled``: inside the block, the
    ``debug`` flag of every ``checkpoint`` (None: each call's own). Kept; lucid's checkpoint
    prints no debug trace either way (a recomputation that differs raises
    ``CheckpointError``)."""
    previous = _settings.debug
    _settings.debug = enabled
    try:
        yield
    finally:
        _settings.debug = previous


class CheckpointError(RuntimeError):
    """The recomputation did not save the same tensors as the first run."""


class _Running(threading.local):
    """This thread's checkpoint frames whose function runs now (a first run or a
    recomputation), innermost last: the selective-checkpoint modes entered inside bind to the
    innermost; and the active :class:`GraphExecGroup`."""

    def __init__(self) -> None:
        self.frames: list[_Frame] = []
        self.group: GraphExecGroup | None = None


_running = _Running()


class _Frame:
    """One ``checkpoint`` call: how many tensors the first run saved and, once recomputed,
    their values (dropped again when each has been handed out once).

    Under selective checkpointing, ``op_packs`` collects what each op the policy is asked
    about saves during the first run (innermost op last), and ``saving`` is the list the
    recomputation fills, where an op that is not run again puts what it saved."""

    def __init__(self, recompute: Callable[[list[Tensor]], None]) -> None:
        self.recompute = recompute
        self.shapes: list[tuple[int, ...]] = []
        self.values: list[Tensor | None] | None = None
        self.left = 0
        self.op_packs: list[list[tuple[int, Tensor]]] = []
        self.saving: list[Tensor] | None = None

    def pack(self, t: Tensor) -> int:
        self.shapes.append(tuple(t.shape))
        index = len(self.shapes) - 1
        if self.op_packs:
            self.op_packs[-1].append((index, t))
        return index

    def unpack(self, index: int) -> Tensor:
        group = _running.group
        if group is not None:
            return self._unpack_in(group, index)
        values = self.values
        if values is None or values[index] is None:
            values = self.values = list(self._run())
            self.left = len(values)
        t = values[index]
        assert t is not None
        values[index] = None  # handed out: the node holds it now, the frame need not
        self.left -= 1
        if self.left == 0:
            self.values = None
        return t

    def _unpack_in(self, group: GraphExecGroup, index: int) -> Tensor:
        """``unpack`` inside a :class:`GraphExecGroup`: one recomputation for the group."""
        values = group._recomputed.get(self)
        if values is None:
            values = group._recomputed[self] = list(self._run())
        t = values[index]
        if t is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                "unpacked once. Performing two backward calls that overlap (i.e. require the "
                "same saved activation in order to compute gradients) is not allowed while "
                "under the torch.utils.checkpoint.GraphExecGroup context. If you are calling "
                "ctx.saved_tensors in backward, make sure to do so only once. Otherwise please "
                "open an issue with details on your use case."
            )
        values[index] = None
        return t

    def _run(self) -> list[Tensor]:
        saved: list[Tensor] = []
        outer, self.saving = self.saving, saved
        _running.frames.append(self)
        try:
            self.recompute(saved)
        finally:
            _running.frames.pop()
            self.saving = outer
        if len(saved) != len(self.shapes):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.shapes)}\nNumber of tensors saved during recomputation: {len(saved)}"
            )
        for i, (t, shape) in enumerate(zip(saved, self.shapes)):
            if tuple(t.shape) != shape:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\ntensor at position {i}:"
                    f"\nsaved metadata: {{'shape': {shape}}}\nrecomputed metadata: "
                    f"{{'shape': {tuple(t.shape)}}}"
                )
        return saved


def noop_context_fn() -> tuple[Any, Any]:
    """``checkpoint``'s default ``context_fn``: two context managers that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class GraphExecGroup:
    """Backward calls inside one ``with GraphExecGroup():`` block share the recomputation of
    each checkpointed region (``torch.utils.checkpoint.GraphExecGroup``): a region is
    recomputed at most once in the block, even over several ``backward``/``autograd.grad``
    calls. The calls must then use disjoint parts of the graph: a saved activation handed out
    once in the block cannot be unpacked again (``CheckpointError``). Groups do not nest.

    Outside a group lucid hands a recomputation's values out once each and keeps the rest for
    the next backward call, recomputing only when a value is needed again (torch recomputes
    once per backward call); the gradients are the same.

    >>> import lucid
    >>> a, b = lucid.ones(3, requires_grad=True), lucid.ones(3, requires_grad=True)
    >>> y1, y2 = checkpoint(lambda s, t: (s.sin(), t.cos()), a, b, use_reentrant=False)
    >>> with GraphExecGroup():  # one recomputation for both calls
    ...     (ga,) = lucid.autograd.grad(y1.sum(), a)
    ...     (gb,) = lucid.autograd.grad(y2.sum(), b)
    """

    def __init__(self) -> None:
        self._recomputed: weakref.WeakKeyDictionary[_Frame, list[Tensor | None]] = (
            weakref.WeakKeyDictionary()
        )

    def __enter__(self) -> GraphExecGroup:
        current = _running.group
        if current is not None:
            raise RuntimeError(
                f"GraphExecGroup contexts cannot be nested. Already inside group {current}"
            )
        _running.group = self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _running.group = None
        self._recomputed.clear()  # what the block's backward calls did not use

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        """The active group, or None (torch's private accessor)."""
        return _running.group


# -- selective activation checkpointing ----------------------------------------------------------
class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function gets first: ``op_output``, the output of the
    op being decided on, and ``is_recompute`` (torch's, deprecated: the policy is asked only
    during the first run, so it is always False).

    >>> def policy_fn(ctx, op, *args, **kwargs):
    ...     return CheckpointPolicy.PREFER_RECOMPUTE
    """

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """What a selective-checkpoint policy says about an op's output.

    - ``{MUST,PREFER}_SAVE``: kept from the first run; the recomputation does not run the op.
    - ``{MUST,PREFER}_RECOMPUTE``: not kept; the recomputation runs the op again.
    - ``{MUST,PREFER}_CPU_OFFLOAD``: torch's offloading hint (used by its compiler); lucid,
      as torch's eager mode, recomputes such an op.

    ``MUST_*`` tells a compiler not to override the choice; eager checkpointing treats both
    alike. A policy that always says ``PREFER_RECOMPUTE`` is plain checkpointing.
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b: bool) -> CheckpointPolicy:
    # A policy that returns a bool (torch's older contract): True saves.
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


SAC_IGNORED_OPS: set[Any] = set()
"""Ops the selective-checkpoint modes let through without asking the policy or counting them
(torch's holds aten's ``detach`` and metadata ops that checkpointing itself adds; lucid's
checkpointing adds no op, so it starts empty)."""

_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE = object()
_CONSUMED = object()

_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are "
    "nondeterministic or depend on global state that changed between "
    "forward and backward."
)


def _is_op(op: Any) -> bool:
    """Whether ``op`` is an op as the policy sees it: a Function or CompositeOp class."""
    return isinstance(op, type) and issubclass(op, (Function, CompositeOp))


def _op_name(op: Any) -> str:
    return f"{op.__module__}.{op.__qualname__}" if isinstance(op, type) else repr(op)


def _leaves(x: Any) -> list[Any]:
    """The items of ``x`` with tuples and lists opened (an op's arguments or outputs)."""
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _rebuild(x: Any, leaves: Iterator[Any]) -> Any:
    """``x``'s structure with its leaves taken from ``leaves`` in order."""
    if isinstance(x, (tuple, list)):
        items = [_rebuild(item, leaves) for item in x]
        if isinstance(x, list):
            return items
        return tuple(items) if type(x) is tuple else type(x)(*items)  # a named tuple
    return next(leaves)


class _Cached:
    """A saved op's entry: its outputs (detached, with their versions and whether they needed
    grad) and where each tensor its node saved comes from in the recomputation: ``("arg", j)``
    its j-th tensor argument, ``("out", k)`` its k-th output, ``("keep", t)`` kept here."""

    __slots__ = ("out", "leaves", "versions", "grads", "sources")

    def __init__(self, out: Any, args: list[Any], packs: list[tuple[int, Tensor]]) -> None:
        leaves = _leaves(out)
        self.out = _rebuild(out, iter([None] * len(leaves)))  # the structure, not the graph
        self.leaves = [t.detach() if isinstance(t, Tensor) else t for t in leaves]
        self.versions = [t._version if isinstance(t, Tensor) else None for t in leaves]
        self.grads = [isinstance(t, Tensor) and t.requires_grad for t in leaves]
        self.sources: list[tuple[str, Any]] = []
        for _, t in packs:
            data = t._data
            source: tuple[str, Any] = ("keep", t)
            for j, a in enumerate(args):
                if isinstance(a, Tensor) and a._data is data:
                    source = ("arg", j)
                    break
            else:
                for k, o in enumerate(leaves):
                    if isinstance(o, Tensor) and o._data is data:
                        source = ("out", k)
                        break
            self.sources.append(source)

    def values(self, allow_cache_entry_mutation: bool, handler: Any) -> list[Any]:
        """The outputs for the recomputation: new Tensors on the kept arrays, each the output
        of a node where the first run's needed grad (so the ops after them record and save
        as they did, and may write into them in place)."""
        out: list[Any] = []
        for t, version, rg in zip(self.leaves, self.versions, self.grads):
            if not isinstance(t, Tensor):
                out.append(t)
                continue
            if not allow_cache_entry_mutation and t._version != version:
                raise RuntimeError(
                    "Tensor cached during selective activation checkpoint has been mutated"
                )
            value = Tensor.from_backend_array(t._data, t._backend, rg)
            if rg:
                value = _run_op(handler, _Restored, (value,), {})
            out.append(value)
        return out


class _Restored(Function):
    """A saved output handed back in the recomputation: the same array, as the output of a
    node (torch's is one: autograd records the op whose result the mode returns)."""

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return a

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g


def _run_op(handler: Any, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``op`` applied with ``handler`` taken out of the interceptors meanwhile: the ops it runs
    inside are part of it (torch's mode is off inside its own dispatch), and an outer handler
    (a ``vmap``) still sees it."""
    stack = _function._interceptors
    pos = len(stack) - 1
    while pos >= 0 and stack[pos] is not handler:
        pos -= 1
    if pos >= 0:
        del stack[pos]
    try:
        return op.apply(*args, **kwargs)
    finally:
        if pos >= 0:
            stack.insert(pos, handler)


class _SacMode:
    """A context manager that sees every op (``intercept_ops``) inside its block; bound, when
    entered, to the checkpoint frame whose function runs then (if any)."""

    def __init__(self) -> None:
        self.func_counter: defaultdict[Any, int] = defaultdict(int)
        self._frame: _Frame | None = None
        self._handler = self._handle
        self._block: Any = None
        self._thread = 0

    def __enter__(self) -> _SacMode:
        self._frame = _running.frames[-1] if _running.frames else None
        self._thread = threading.get_ident()
        self._block = intercept_ops(self._handler)
        self._block.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        block, self._block, self._frame = self._block, None, None
        block.__exit__(exc_type, exc, tb)

    def _handle(self, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if threading.get_ident() != self._thread:  # torch's modes are per thread
            return NotImplemented
        return self._on_op(op, args, kwargs)

    def _on_op(self, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError


class _CachingTorchDispatchMode(_SacMode):
    """The first run's mode: runs each op, asks the policy, keeps the outputs to save."""

    def __init__(self, policy_fn: Callable[..., Any], storage: dict[Any, dict[int, Any]]) -> None:
        super().__init__()
        self.policy_fn = policy_fn
        self.storage = storage

    def _on_op(self, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if op in SAC_IGNORED_OPS:
            return _run_op(self._handler, op, args, kwargs)
        frame = self._frame
        packs: list[tuple[int, Tensor]] = []
        if frame is not None:
            frame.op_packs.append(packs)
        try:
            out = _run_op(self._handler, op, args, kwargs)
        finally:
            if frame is not None:
                frame.op_packs.pop()
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        policy = self.policy_fn(
            SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *args, **kwargs
        )
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVE:
            self.storage[op][idx] = _Cached(out, _leaves(args), packs)
        else:
            self.storage[op][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(_SacMode):
    """The recomputation's mode: hands back the saved outputs instead of running those ops
    (and gives the frame what their nodes saved); runs the others."""

    def __init__(
        self,
        policy_fn: Any,
        storage: dict[Any, dict[int, Any]],
        allow_cache_entry_mutation: bool = False,
    ) -> None:
        super().__init__()
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def __enter__(self) -> _CachedTorchDispatchMode:
        # Reset so a second backward over the region says so rather than "index not found".
        self.func_counter.clear()
        super().__enter__()
        return self

    def _on_op(self, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if op in SAC_IGNORED_OPS:
            return _run_op(self._handler, op, args, kwargs)
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        func_storage = self.storage.get(op)
        if func_storage is None:
            raise RuntimeError(
                f"{_op_name(op)} encountered during backward but not found in "
                f"storage. {_SAC_MISMATCH_MSG}"
            )
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(
                f"{_op_name(op)} invocation index {idx} encountered during backward "
                f"but not found in storage. {_SAC_MISMATCH_MSG}"
            )
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once "
                "on any region computed under selective activation checkpoint."
            )
        if entry is _RECOMPUTE:
            return _run_op(self._handler, op, args, kwargs)
        func_storage[idx] = _CONSUMED
        values = entry.values(self.allow_cache_entry_mutation, self._handler)
        frame = self._frame
        if frame is not None and frame.saving is not None:
            arg_leaves = _leaves(args)
            for kind, where in entry.sources:
                if kind == "arg":
                    frame.saving.append(arg_leaves[where])
                elif kind == "out":
                    frame.saving.append(values[where])
                else:
                    frame.saving.append(where)
        return _rebuild(entry.out, iter(values))


def create_selective_checkpoint_contexts(
    policy_fn_or_list: Any, allow_cache_entry_mutation: bool = False
) -> tuple[Any, Any]:
    """The two context managers of selective activation checkpointing, for ``checkpoint``'s
    ``context_fn`` (``torch.utils.checkpoint.create_selective_checkpoint_contexts``).

    ``policy_fn_or_list`` is either a function ``policy_fn(ctx, op, *args, **kwargs)`` that
    gets a :class:`SelectiveCheckpointContext`, the op and its arguments, and returns a
    :class:`CheckpointPolicy` (a bool: True saves), or a list of ops, which saves those
    (``MUST_SAVE``) and recomputes the rest (``PREFER_RECOMPUTE``). An op is the class that
    ``Function.apply`` runs: ``type(out.grad_fn)`` of an op's output for lucid's own ops
    (``lucid.ops.matmul.Matmul`` for ``lucid.mm`` and ``@``), the class for a custom
    ``Function``. Saved outputs are not computed again during the recomputation; one that was
    changed in place since raises unless ``allow_cache_entry_mutation``.

    >>> import functools, lucid
    >>> from lucid.ops.matmul import Matmul
    >>> w = lucid.randn(4, 4, requires_grad=True)
    >>> context_fn = functools.partial(create_selective_checkpoint_contexts, [Matmul])
    >>> y = checkpoint(lambda a: (a @ w).sin() @ w, lucid.randn(2, 4), use_reentrant=False,
    ...                context_fn=context_fn)
    >>> y.sum().backward()
    >>> tuple(w.grad.shape)
    (4, 4)
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not _is_op(op):
                extra = (
                    "lucid's ops are the classes Function.apply runs: pass the class, e.g. "
                    "type(out.grad_fn) of the op's output (lucid.ops.matmul.Matmul for "
                    "lucid.mm), not a function."
                    if callable(op)
                    else ""
                )
                raise ValueError(
                    f"Expected op in `op_list` to be an OpOverload but got: {op} "
                    f"of type {type(op)}. {extra}"
                )
        ops = policy_fn_or_list

        def policy_fn(ctx: SelectiveCheckpointContext, op: Any, *args: Any,
                      **kwargs: Any) -> CheckpointPolicy:  # fmt: skip
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE

    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")

    storage: dict[Any, dict[int, Any]] = defaultdict(dict)
    return (
        _CachingTorchDispatchMode(policy_fn, storage),
        _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation),
    )


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations for backward; they are
    recomputed when backward needs them (``torch.utils.checkpoint.checkpoint``).

    Lucid always uses the non-reentrant scheme: ``use_reentrant`` is accepted (either value)
    for PyTorch's signature (:class:`CheckpointFunction` is the reentrant one). Passing
    ``context_fn`` or ``debug`` requires ``use_reentrant=False``, as in torch.
    ``preserve_rng_state`` (default True) replays dropout and other sampling ops identically
    in the recomputation. ``context_fn`` returns two context managers: the first is entered
    around the first run, the second around the recomputation (the first recomputation uses
    the manager of the same call, as torch; lucid calls ``context_fn`` again for a later one,
    so generator-based managers work, except the selective-checkpoint modes, which are
    reused). ``determinism_check="default"`` compares the shapes of the recomputed tensors
    with the first run's and raises ``CheckpointError`` on a difference; ``"none"`` skips that.

    >>> import lucid
    >>> w = lucid.randn(4, 4, requires_grad=True)
    >>> x = lucid.randn(2, 4)
    >>> y = checkpoint(lambda a: (a @ w).tanh() @ w, x, use_reentrant=False)
    >>> y.sum().backward()
    >>> tuple(w.grad.shape)
    (4, 4)
    """
    if use_reentrant not in (None, True, False):
        raise TypeError(f"use_reentrant must be a bool or None, but got {use_reentrant!r}")
    if use_reentrant is not False and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError(
            "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
        )
    if (_settings.debug if _settings.debug is not None else debug) and (
        context_fn is not noop_context_fn
    ):
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if not callable(function):
        raise TypeError(f"checkpoint expects a callable, but got {type(function).__name__}")
    if not callable(context_fn):
        raise TypeError(f"context_fn must be callable, but got {type(context_fn).__name__}")
    first_ctx, recompute_ctx = context_fn()
    rng_state = _generator.get_rng_state() if preserve_rng_state else None
    autocast_enabled = dict(autocast_mode._state.enabled)

    def recompute(saved: list[Tensor]) -> None:
        nonlocal recompute_ctx

        def keep(t: Tensor) -> Tensor:
            saved.append(t)
            return t

        ctx = recompute_ctx
        if not isinstance(ctx, _CachedTorchDispatchMode):
            recompute_ctx = None  # used once; a later recomputation asks context_fn again
        if ctx is None:
            ctx = context_fn()[1]
        with contextlib.ExitStack() as stack:
            if rng_state is not None:
                stack.enter_context(_generator.fork_rng())
                _generator.set_rng_state(rng_state)
            stack.enter_context(_autocast_as(autocast_enabled))
            stack.enter_context(grad_mode.enable_grad())
            stack.enter_context(ctx)
            stack.enter_context(saved_tensors_hooks(keep, _identity))
            function(*args, **kwargs)

    frame = _Frame(recompute)
    if determinism_check == "none":
        frame.shapes = _NoCheck()
    if not grad_mode.is_grad_enabled():  # nothing is saved: no frame, no contexts (torch)
        return function(*args, **kwargs)
    _running.frames.append(frame)
    try:
        with first_ctx, saved_tensors_hooks(frame.pack, frame.unpack):
            return function(*args, **kwargs)
    finally:
        _running.frames.pop()


class _NoCheck(list[tuple[int, ...]]):
    """Shapes nobody compares (``determinism_check="none"``): only the count is kept."""

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return iter(())


def _identity(t: Tensor) -> Tensor:
    return t


@contextlib.contextmanager
def _autocast_as(enabled: dict[str, bool]) -> Iterator[None]:
    """Autocast on for the same device types as at the first run (backward turns it off)."""
    s = autocast_mode._state
    prev = s.enabled
    s.enabled = dict(enabled)
    s.refresh()
    try:
        yield
    finally:
        s.enabled = prev
        s.refresh()


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,  # noqa: A002
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run a sequence of modules or functions in ``segments`` chunks, checkpointing every chunk
    but the last (``torch.utils.checkpoint.checkpoint_sequential``). ``functions`` is an
    ``nn.Sequential`` or a list of callables; ``kwargs`` go to :func:`checkpoint`.

    >>> import lucid
    >>> w = lucid.randn(3, 3, requires_grad=True)
    >>> layers = [lambda a: (a @ w).tanh() for _ in range(4)]
    >>> out = checkpoint_sequential(layers, 2, lucid.randn(2, 3), use_reentrant=False)
    >>> tuple(out.shape)
    (2, 3)
    """
    if hasattr(functions, "children") and callable(functions.children):
        funcs = list(functions.children())
    else:
        funcs = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"segments must be a positive int, but got {segments!r}")
    if not funcs:
        raise ValueError("checkpoint_sequential expects at least one function")
    size = len(funcs) // segments

    def run(chunk: list[Callable[..., Any]]) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for f in chunk:
                x = f(x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(  # noqa: A001
            run(funcs[start : end + 1]), input, use_reentrant=use_reentrant, **kwargs
        )
    return run(funcs[end + 1 :])(input)
