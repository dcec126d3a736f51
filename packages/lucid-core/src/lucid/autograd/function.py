"""``Function``: the one way to define a differentiable op (also public for custom ops).

A custom Function has torch's contract: ``forward(ctx, *args)`` computes on Tensors with
lucid ops, without recording; ``backward(ctx, *grads)`` computes input gradients as lucid
Tensors with lucid ops, so running it with recording on (``create_graph=True``) gives
higher-order gradients. Lucid's own ops (and any class with ``forward_on_arrays = True``)
compute ``forward`` on backend arrays (``ctx.xp`` is the numpy-like namespace), skipping the
Tensor layer. An instance of the Function subclass is both the ``ctx`` and the graph node
(``grad_fn``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from lucid import _memory_format, _replay
from lucid._tensor import Tensor, VersionCounter
from lucid.autograd import anomaly_mode, grad_mode
from lucid.backends import DeviceError, get_backend
from lucid.dtypes import FLOAT8_NATIVE, SCALAR_TYPE_NAMES, float32
from lucid.utils.hooks import RemovableHandle

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class DoubleBackwardError(RuntimeError):
    """Raised by fused kernels that do not support differentiating their backward."""


class Function:
    """Base class of differentiable operations. Subclass and write ``forward``/``backward``
    (and optionally ``setup_context``, ``jvp``), as for ``torch.autograd.Function``.

    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * grad
    """

    # Outputs share the first input's data (reshape, permute, slicing...): they share its
    # version counter too, so in-place changes through either are seen by saved-tensor checks.
    # A forward may set ``ctx.is_view`` per call (basic vs advanced indexing).
    is_view: bool = False
    backend: Any
    out_backend: Any  # where the outputs live (differs from backend only for device moves)
    xp: Any
    needs_input_grad: tuple[bool, ...]
    _edges: list[Any]  # per input: None, a leaf Tensor, or (producer node, output index)
    _impl: Any  # the class whose backward runs (the node's own)
    _out_meta: tuple[tuple[Any, Any], ...]  # (shape, native dtype) of each output

    # Where ``forward`` computes: on backend arrays through ``ctx.xp`` (lucid's own ops, the
    # fast path) or on Tensors with lucid ops, as ``torch.autograd.Function`` (the default for
    # a subclass defined outside lucid; see ``__init_subclass__``).
    forward_on_arrays: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Choose where ``forward`` computes: a direct subclass defined in lucid's own modules
        works on arrays, any other on Tensors (torch's contract) unless it sets
        ``forward_on_arrays``; a subclass of a subclass inherits the choice."""
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_is_backward_node"):
            return
        if "forward_on_arrays" not in cls.__dict__ and Function in cls.__bases__:
            mod = cls.__module__
            cls.forward_on_arrays = mod == "lucid" or mod.startswith("lucid.")
        if not cls.forward_on_arrays:
            _tensor_function(cls)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """The op; subclasses override it. On Tensors (as in PyTorch, run without recording)
        or, for ``forward_on_arrays`` Functions, on backend arrays through ``ctx.xp``."""
        raise NotImplementedError("Function subclasses must implement forward")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """PyTorch's second style: a ``forward`` without ``ctx`` and this method to fill
        ``ctx`` from the inputs and the output; a Tensor Function overrides it or not at all."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Forward-mode formula of a Tensor Function: the outputs' tangents from the inputs'
        (``autograd.forward_ad`` calls it); subclasses override it."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Each forward argument's gradient from the outputs' (Tensors); subclasses override it."""
        raise NotImplementedError(f"{type(ctx).__name__} has no backward")

    vjp = backward  # torch's other name for backward: a subclass may define either

    # torch.func's switch for an automatic vmap rule; lucid's vmap loops over the batch for a
    # custom Function either way (read by programs, not used)
    generate_vmap_rule: bool = False

    # -- ctx API --------------------------------------------------------------------------------
    def save_for_backward(self, *items: Any) -> None:
        """Keep ``items`` for ``backward``, which reads them back as ``ctx.saved_tensors``."""
        self._to_save = items

    def mark_non_differentiable(self, *arrays: Any) -> None:
        """Mark forward outputs (by their arrays) that get no gradient."""
        self._non_diff = {id(a) for a in arrays}

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """What ``save_for_backward`` kept, as Tensors; checked against later in-place changes."""
        if self._saved is None:
            if self._freed:
                raise RuntimeError(_FREED_MSG)
            return ()
        if self._hooked:  # unpack hooks run in the order torch saved (and packed) them
            got: list[Any] = [None] * len(self._saved)
            for k in self._pack_order or ():
                got[k] = self._saved[k].unpack(self)
            return tuple(got)
        saved = self._saved
        if len(saved) == 1:  # one or two items, most nodes' (a Linear's x and w, a softmax's
            return (saved[0].unpack(self),)  # output): without the comprehension's frame
        if len(saved) == 2:
            return (saved[0].unpack(self), saved[1].unpack(self))
        return tuple([s.unpack(self) for s in saved])

    @property
    def name(self) -> NodeName:
        """The backward node's name, such as ``"MulBackward0"``; also callable, as PyTorch's
        ``grad_fn.name()``."""
        n = self._node_name
        return NodeName(type(self).__name__ + "Backward0" if n is None else n)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """The nodes this one passes gradients to, each with its output index; a leaf that
        requires grad shows as an ``AccumulateGrad`` node."""
        out: list[tuple[Any, int]] = []
        accs = []
        for e in self._edges:
            if e is None:
                out.append((None, 0))
            elif isinstance(e, tuple):
                out.append(e)
            else:
                acc = AccumulateGrad._of(e)
                accs.append(acc)
                out.append((acc, 0))
        if accs:  # held by the node, as torch's graph holds them: one per leaf while it lives
            self._held_accumulators = accs
        return tuple(out)

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict for the user's own notes about this node (``Node.metadata``), empty at first."""
        md: dict[str, Any] | None = self.__dict__.get("_metadata")
        if md is None:
            md = {}
            self._metadata = md
        return md

    def register_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(grad_inputs, grad_outputs)``, run after this node's backward.

        ``grad_inputs`` are the gradients the node computed for its inputs, ``grad_outputs``
        the ones it received; a hook may return a new tuple of ``grad_inputs`` to pass on."""
        if not self._post_hooks:
            self._post_hooks = {}
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = hook
        return handle

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(grad_outputs)``, run before this node's backward; it may return a
        new tuple of ``grad_outputs`` to use instead (``Node.register_prehook``)."""
        if not self._node_pre_hooks:
            self._node_pre_hooks = {}
        handle = RemovableHandle(self._node_pre_hooks)
        self._node_pre_hooks[handle.id] = hook
        return handle

    def __repr__(self) -> str:
        # Python's default form, as torch's nodes print: the address included, and a custom
        # Function's node qualified by the module that makes it (torch.autograd.function's)
        where = "lucid.autograd.function." if type(self).__dict__.get("_is_backward_node") else ""
        return f"<{where}{self.name} object at {id(self):#x}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A Function is applied through the class (``F.apply(x)``), as in torch."""
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    # -- applying --------------------------------------------------------------------------------
    # Graph bookkeeping defaults live on the class so recording an op sets only what differs.
    _to_save: tuple[Any, ...] = ()
    _non_diff: Any = ()
    _saved: list[SavedTensor] | None = None
    _freed = False
    _had_saved = False
    _post_hooks: Any = None  # register_hook: {id: hook(grad_inputs, grad_outputs)}
    _node_pre_hooks: Any = None  # register_prehook: {id: hook(grad_outputs)}
    _pre_hooks: Any = None  # Tensor.register_hook on non-leaf outputs: {output_nr: {id: hook}}
    _trace: Any = None  # anomaly mode: the forward's stack, printed when backward fails
    _materialize = True  # set_materialize_grads: zeros (True) or None for unreached outputs
    # The order in which saved_tensors_hooks' pack hook sees what ``save_for_backward`` kept
    # (positions in it), where torch saves in another order than lucid keeps: Mul saves
    # ``other`` before ``self`` in torch (its derivatives.yaml order). None: as kept.
    _pack_order: tuple[int, ...] | None = None
    # torch's name of the node where it is not ``<class name>Backward0`` (``Matmul`` of two
    # matrices is ``MmBackward0``): a class attribute, or set per call by ``forward``.
    _node_name: str | None = None
    _hooked = False  # saved through hooks in ``_pack_order``: unpacked in that order too
    _retained: Any = None

    @classmethod
    def _apply(cls, *args: Any, **kwargs: Any) -> Tensor | tuple[Tensor, ...]:
        """Run ``forward`` on the arrays of ``args`` and record the node if a grad is needed.

        The result is a Tensor, or a tuple of Tensors where ``forward`` returns a tuple (as
        ``torch.autograd.Function.apply``). ``apply`` and ``apply_multi`` are this method, typed
        for one output and for several.
        """
        if _interceptors:  # a vmap is running: batched arguments go to its batching rules
            got = _interceptors[-1](cls, args, kwargs)
            if got is not NotImplemented:
                return got  # type: ignore[no-any-return]
        backend = None
        any_grad = False
        needs = []
        arrays = []
        result: Tensor | tuple[Tensor, ...]
        for a in args:
            if isinstance(a, Tensor):
                b = a._backend
                if backend is not b:
                    if backend is not None:
                        _device_mismatch(cls, args)
                    backend = b
                rg = a.requires_grad
                any_grad |= rg
                needs.append(rg)
                arrays.append(a._data)
            else:
                needs.append(False)
                arrays.append(a)
        if backend is None:
            backend = get_backend(kwargs.pop("device", None))
        if FLOAT8_NATIVE and _float8_op(cls, arrays):  # float8 in use: torch's CPU rules
            return _float8_through_float32(cls, args, kwargs)
        impl = cls
        ctx = cls.__new__(cls)
        ctx.backend = ctx.out_backend = backend
        ctx.xp = backend.xp
        ctx.needs_input_grad = tuple(needs)
        quiet = backend.fp_quiet
        token = None if quiet is None else quiet[0].set(quiet[1])
        try:
            out = impl.forward(ctx, *arrays, **kwargs)
        except ValueError as exc:  # numpy's shape errors, reworded the way torch says them
            raise _shape_error(cls, args, exc) from exc
        finally:
            if quiet is not None:
                quiet[0].reset(token)
        if _memory_format._marked:  # a channels-last tensor exists: keep its layout's name
            _memory_format.propagate(arrays, out)
        if any_grad and grad_mode._state.enabled:
            result = _record(ctx, impl, args, arrays, out)
        else:
            ob = ctx.out_backend
            if type(out) is tuple:
                result = tuple([Tensor.from_backend_array(o, ob) for o in out])
            else:
                result = Tensor.from_backend_array(out, ob)
        if ctx.is_view:
            _share_version(args[0], result, ctx)
        if _observers:
            _observers[-1](cls, args, kwargs, result)
        return result

    if TYPE_CHECKING:

        @classmethod
        def apply(cls, *args: Any, **kwargs: Any) -> Tensor:
            """Run the op on ``args`` (Tensors and constants); its output Tensor, recorded for
            backward where an input requires grad. For a ``forward`` that returns a tuple the
            result is a tuple of Tensors, as in PyTorch; ``apply_multi`` types that call."""

        @classmethod
        def apply_multi(cls, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
            """``apply`` for a Function whose ``forward`` returns a tuple: its output Tensors."""

    else:
        # One implementation, two typed names (no extra call on the per-op path).
        apply = apply_multi = _apply


# ``Function.apply`` as defined here; ``lucid.profiler`` replaces it while it records.
_function_dict = Function.__dict__
_plain_apply = _function_dict["_apply"]

# ``intercept_ops`` handlers, innermost last: ``handler(cls, args, kwargs)`` runs before every
# ``Function.apply`` and either returns its result or ``NotImplemented`` (run the op as usual).
# ``lucid.func.vmap`` installs one that sends batched arguments to the op's batching rule.
_interceptors: list[Callable[[type, tuple[Any, ...], dict[str, Any]], Any]] = []


# The ops torch's CPU runs on float8 tensors (class names): they move or convert the stored
# values. ``Mul`` of two float8 tensors and ``Matmul`` (not of float8_e8m0fnu) compute, as
# torch's do, in float32 rounded back; every other op raises torch's NotImplementedError.
_FLOAT8_MOVES = frozenset({
    "Cast", "Fill", "GetItem", "IndexPut", "Cat", "Split", "Unbind", "ConstantPad", "Flip",
    "Roll", "Diagonal", "Reshape", "Permute", "Expand", "Clone", "ToDevice", "ExpandCopy",
    "ViewDtype", "ToMemoryFormat", "Where",
})  # fmt: skip
# ops named by an argument (NonDiff's first, BoolReduce's second) that torch runs on float8
_FLOAT8_NAMED = frozenset({"equal", "not_equal", "isnan", "any", "all"})
# where torch's isinf / isfinite run on float8 (it lacks them on the others)
_FLOAT8_INF = {"isinf": ("float8_e5m2",), "isfinite": ("float8_e5m2", "float8_e8m0fnu")}
# torch's kernel names in its message, where they are not ``<op>_cpu``
_FLOAT8_KERNELS = {
    "Add": "add_stub", "Sub": "add_stub", "Mul": "mul_cpu_reduced_float", "Sum": "sum_cpu",
    "Extreme": "max_all", "ExtremeAlong": "min_cpu", "Relu": "clamp_min_scalar_cpu",
    "Clamp": "clamp_scalar_cpu", "Pow": "pow", "PowScalar": "pow", "Matmul": "addmm_impl_cpu_",
    "Abs": "abs_cpu", "less": "lt_cpu", "greater": "gt_cpu", "less_equal": "le_cpu",
    "greater_equal": "ge_cpu", "_Normalize": "softmax_kernel_impl", "Triangle": "tril",
    "Gather": "scatter_gather_tensor_cpu", "Scatter": "scatter_gather_tensor_cpu",
    "isinf": "isinf", "isfinite": "isfinite", "NanToNum": "nan_to_num", "Square": "pow",
    "isclose": "mul_cpu_reduced_float", "Softmax": "softmax_kernel_impl", "Einsum": "bmm",
    "Sigmoid": "sigmoid_cpu_reduced_float", "Scan": "cumsum_out_cpu", "Prod": "prod_out_cpu",
    "IndexPut": "index_put",
    **{n: n.lower() + "_vml_cpu" for n in ("Exp", "Log", "Sqrt", "Sin", "Cos", "Tanh", "Floor",
                                           "Round", "Ceil", "Trunc")},
}  # fmt: skip


def _float8_op(cls: type, arrays: list[Any]) -> bool:
    """Whether ``cls`` on ``arrays`` is an op torch's CPU computes on float8 inputs in float32
    (``Mul`` of two float8 tensors, ``Matmul``, ``Abs``); torch's NotImplementedError for the
    ops it lacks on them; False for the rest (no float8 input, or an op that moves values)."""
    found = [a.dtype for a in arrays if getattr(a, "dtype", None) in FLOAT8_NATIVE]
    if not found:
        return False
    name = cls.__name__
    e8m0 = any(d.name == "float8_e8m0fnu" for d in found)
    if name in _FLOAT8_MOVES and not (e8m0 and name == "IndexPut"):
        return False
    if name in ("NonDiff", "BoolReduce"):
        name = str(arrays[0] if name == "NonDiff" else arrays[1])
        if name in _FLOAT8_NAMED or (
            name in ("isinf", "isfinite") and found[0].name in _FLOAT8_INF[name]
        ):
            return False
    if name == "Matmul" and any(getattr(a, "ndim", 0) > 2 for a in arrays):
        name = "Einsum"  # a batched product: torch's bmm has no float8 kernel
    elif (name == "Mul" and len(found) == 2) or (name in ("Matmul", "Abs") and not e8m0):
        return True
    kernel = _FLOAT8_KERNELS.get(name, name.lower() + "_cpu")
    raise NotImplementedError(
        f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[found[0].name]}'"
    )


def _float8_through_float32(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Tensor:
    """``cls`` applied to ``args`` with their float8 tensors as float32, the result rounded
    back to that float8 type (saturating where torch's does)."""
    f8 = next(a.dtype for a in args if isinstance(a, Tensor) and a.dtype._rank < 0)
    wide = [a.to(float32) if isinstance(a, Tensor) and a.dtype is f8 else a for a in args]
    out: Tensor = cls.apply(*wide, **kwargs)
    return out.to(f8)


def ops_watched() -> bool:
    """Whether an ``intercept_ops`` or ``observe_ops`` block is active: code that could compute
    on arrays directly (a backward formula) must then go through the ops, so they are seen."""
    return bool(_interceptors or _observers)


def records_nothing() -> bool:
    """Whether an op run now would record nothing and be seen by nobody: grad mode is off (a
    no-grad forward, or a backward without ``create_graph``), no ``intercept_ops``/
    ``observe_ops`` block is active, and no channels-last tensor exists whose layout the ops
    would carry to their outputs. Then a layer's no-grad fast path (generation) or a backward
    may compute on arrays, calling what the ops it would apply call (the same bits), without
    their ``Function.apply`` (docs/performance.md)."""
    return not (grad_mode._state.enabled or _interceptors or _observers or _memory_format._marked)


def unrecorded(t: Tensor) -> bool:
    """Whether a one-input op on ``t`` would record no node and be seen by nobody: ``t`` needs
    no grad (or grad mode is off), no ``intercept_ops``/``observe_ops`` block is active, no
    profiler times ``Function.apply`` (it swaps in its own) and no channels-last tensor
    exists (whose layout an op would carry to its output)."""
    return not (
        (t.requires_grad and grad_mode._state.enabled)
        or _interceptors
        or _observers
        or _memory_format._marked
        or _function_dict["apply"] is not _plain_apply
    )


def unrecorded_view(src: Tensor, arr: Any) -> Tensor:
    """The Tensor a view op (``is_view``) on ``src`` gives for its result ``arr``, where
    ``unrecorded(src)`` and ``src``'s backend shares memory between views (NumPy): a view of
    ``src``'s base sharing its version counter, as ``Function.apply`` makes it, without the
    node. The node is kept only for in-place write-back on backends whose views are copies
    and for indexing's rebase under autograd, so callers pass no indexing results."""
    t = object.__new__(Tensor)
    t._set_fields(arr, src._backend, False)
    base = src._base
    t._base = src if base is None else base
    vc = src._vc
    t._vc = src._counter() if vc is None else vc
    return t


def applies_directly() -> bool:
    """Whether an op may run its forward and record its node itself (``direct_node``,
    ``record_direct``: the node and outputs ``Function.apply`` makes, the same bits) without
    the call: no ``intercept_ops``/``observe_ops`` block or ``lucid.compile`` capture is
    active, no profiler times ``Function.apply``, no channels-last tensor exists (whose layout
    the op would carry) and anomaly mode (whose nodes keep the forward's stack) is off. A
    batch-1 model's tiny ops, per-call cost (docs/performance.md)."""
    return not (
        _interceptors
        or _observers
        or _replay.listeners
        or _memory_format._marked
        or anomaly_mode._state.enabled
        or _function_dict["apply"] is not _plain_apply
    )


def direct_node(cls: Any, backend: Any, needs: tuple[bool, ...]) -> Any:
    """The node (``ctx``) ``cls.apply`` makes before it calls ``forward``: ``backend``'s, with
    ``needs`` as ``needs_input_grad`` (one flag per argument). Only where
    ``applies_directly()``, for a caller that has checked the arguments as ``apply`` would
    (Tensors on ``backend``, no float8) and runs the forward itself."""
    ctx = cls.__new__(cls)
    ctx.backend = ctx.out_backend = backend
    ctx.xp = backend.xp
    ctx.needs_input_grad = needs
    return ctx


def forward_direct(ctx: Any, args: tuple[Any, ...], *arrays: Any) -> Any:
    """``type(ctx).forward(ctx, *arrays)`` as ``Function.apply`` runs it: under the backend's
    quiet floating-point state, NumPy's shape errors reworded as torch says them (``args``:
    the op's arguments, for that message). For a node from ``direct_node``."""
    backend = ctx.backend
    quiet = backend.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        return type(ctx).forward(ctx, *arrays)
    except ValueError as exc:
        raise _shape_error(type(ctx), args, exc) from exc
    finally:
        if quiet is not None:
            quiet[0].reset(token)


def record_direct(ctx: Any, args: tuple[Any, ...], arrays: list[Any], out: Any) -> Any:
    """``ctx``'s output Tensor(s) for the forward's result ``out``, recorded as
    ``Function.apply`` records them (``args``: the op's arguments, ``arrays``: what the
    forward was given for them); for a node from ``direct_node`` with an input that needs
    grad, in grad mode, of an op that is no view (``is_view`` False)."""
    return _record(ctx, type(ctx), args, arrays, out)


def quiet_array_call(backend: Any, fn: Callable[..., Any], *args: Any) -> Tensor:
    """``fn(*args)`` on ``backend``'s arrays under its quiet floating-point state, as
    ``Function.apply`` runs a forward; the result as a Tensor of ``backend`` (no graph)."""
    quiet = backend.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        out = fn(*args)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    return Tensor.from_backend_array(out, backend)


@contextlib.contextmanager
def intercept_ops(
    handler: Callable[[type, tuple[Any, ...], dict[str, Any]], Any],
) -> Iterator[None]:
    """Inside the block, every ``Function.apply`` first calls ``handler(cls, args, kwargs)``;
    a result other than ``NotImplemented`` is the op's result (the op itself does not run).
    Handlers nest; the innermost one is asked. ``lucid.func.vmap`` is built on it."""
    _interceptors.append(handler)
    try:
        yield
    finally:
        _interceptors.remove(handler)


class CompositeOp:
    """The op class of a :func:`composite` function, as ``intercept_ops`` handlers see it:
    ``apply`` calls the function (through its interception), ``fn`` is the undecorated body.
    ``module.QualName`` is the function's (``lucid.ops.sorting.sort``)."""

    fn: Callable[..., Any]
    apply: Callable[..., Any]


_F = TypeVar("_F", bound=Callable[..., Any])


def composite(fn: _F) -> _F:
    """Mark ``fn``, a public op that computes some steps on backend arrays outside a
    :class:`Function` (an index order, a loop until the values converge), as one op for
    ``intercept_ops``: its handlers see the call as a :class:`CompositeOp` subclass named
    after ``fn`` (so ``lucid.func.vmap`` can give it a batching rule, or loop over the batch)
    before the body reads any values. Outside an interception it is ``fn`` itself."""
    op = type(fn.__name__, (CompositeOp,), {"__module__": fn.__module__,
              "__qualname__": fn.__qualname__, "__doc__": fn.__doc__,
              "fn": staticmethod(fn)})  # fmt: skip

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _interceptors:
            got = _interceptors[-1](op, args, kwargs)
            if got is not NotImplemented:
                return got
        return fn(*args, **kwargs)

    op.apply = staticmethod(wrapper)  # type: ignore[attr-defined]
    return cast(_F, wrapper)


# Callbacks of ``observe_ops`` blocks, innermost last (an exporter's graph recorder).
_observers: list[Callable[[type, tuple[Any, ...], dict[str, Any], Any], None]] = []


@contextlib.contextmanager
def observe_ops(
    callback: Callable[[type, tuple[Any, ...], dict[str, Any], Any], None],
) -> Iterator[None]:
    """Inside the block, every ``Function.apply`` calls ``callback(cls, args, kwargs, result)``
    after its forward, with or without grad recording: the op's class, its inputs (Tensors and
    constants), its keyword attributes and its output Tensor(s). Graph exporters use it.

    >>> import lucid
    >>> seen = []
    >>> with observe_ops(lambda cls, args, kwargs, out: seen.append(cls.__name__)):
    ...     _ = lucid.ones(2).exp()
    >>> seen
    ['Exp']
    """
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


class NodeName(str):
    """A node's name: a ``str`` (lucid's ``grad_fn.name``) that is also callable, returning
    itself (PyTorch's ``grad_fn.name()``)."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


# A leaf's AccumulateGrad while something holds it (torch's leaf holds its accumulator weakly):
# id(leaf) -> a weak reference to it, dropped with it. The node holds its leaf, so the id
# cannot be reused meanwhile.
_accumulators: dict[int, weakref.ref[AccumulateGrad]] = {}


class _PairedHandle(RemovableHandle):
    """Removes the two tensor hooks an ``AccumulateGrad`` node hook is made of."""

    def __init__(self, first: RemovableHandle, second: RemovableHandle) -> None:
        super().__init__({})
        self._pair = (first, second)

    def remove(self) -> None:
        for handle in self._pair:
            handle.remove()


class AccumulateGrad:
    """A leaf's gradient sink as a graph node (``next_functions``' entry for a leaf that
    requires grad): the same object for the same leaf while something holds it, as torch's,
    so that hooks registered on it (``grad_acc.register_hook``, the gradient-accumulator idiom
    of DDP-style reducers) stay with the leaf."""

    def __init__(self, variable: Any) -> None:
        self.variable = variable
        self.next_functions: tuple[tuple[Any, int], ...] = ()
        self.metadata: dict[str, Any] = {}

    @classmethod
    def _of(cls, variable: Any) -> AccumulateGrad:
        """``variable``'s accumulator: the one alive, else a new one."""
        key = id(variable)
        ref = _accumulators.get(key)
        acc = None if ref is None else ref()
        if acc is None or acc.variable is not variable:
            acc = cls(variable)

            def forget(r: weakref.ref[AccumulateGrad], key: int = key) -> None:
                if _accumulators.get(key) is r:
                    del _accumulators[key]

            _accumulators[key] = weakref.ref(acc, forget)
        return acc

    @property
    def name(self) -> NodeName:
        """torch's ``"torch::autograd::AccumulateGrad"``, its C++ name (callable too, as
        ``Node.name()``; programs compare it by that string)."""
        return NodeName("torch::autograd::AccumulateGrad")

    def register_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook((), (grad,))`` once ``grad`` has been accumulated into the leaf's
        ``.grad`` (torch's post hook of this node: no inputs to give gradients to, the
        incoming gradient as its output's)."""
        got: list[Any] = []

        def capture(grad: Any) -> None:
            got[:] = [grad]

        def after(_: Any) -> None:
            hook((), tuple(got))

        first = self.variable.register_hook(capture)
        return _PairedHandle(first, self.variable.register_post_accumulate_grad_hook(after))

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook((grad,))`` before ``grad`` is accumulated; a returned tuple replaces it."""

        def before(grad: Any) -> Any:
            new = hook((grad,))
            return None if new is None else new[0]

        handle: RemovableHandle = self.variable.register_hook(before)
        return handle

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"  # torch's form, no module path


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a backward as not differentiable again. For a Tensor Function (PyTorch's contract)
    it runs without recording, and under ``create_graph=True`` its gradients raise only when
    differentiated again, as in PyTorch; lucid's own array Functions raise at once."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        if not ctx.forward_on_arrays:
            return _once_tensor(backward, ctx, grads)
        if grad_mode._state.enabled:
            raise DoubleBackwardError(
                f"{type(ctx).__name__} is a fused kernel without a double backward; "
                "create_graph=True through it is not supported"
            )
        return backward(ctx, *grads)

    return wrapper


def _shape_error(cls: type, args: tuple[Any, ...], exc: Exception) -> RuntimeError:
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    if len(shapes) == 2:
        a, b = shapes
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        for d in reversed(range(n)):
            if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
                return RuntimeError(
                    f"The size of tensor a ({pa[d]}) must match the size of tensor b ({pb[d]}) "
                    f"at non-singleton dimension {d} (in {cls.__name__}: shapes {list(a)} and "
                    f"{list(b)})"
                )
    listed = ", ".join(str(list(s)) for s in shapes)
    return RuntimeError(f"{cls.__name__}: {exc} (input shapes: {listed})")


def _share_version(src: Any, result: Any, ctx: Function) -> None:
    base = src._base if src._base is not None else src
    made = (src, ctx)  # the view's parent (the base, or a view of it) and this node: an
    # in-place change of the view walks these up to the base (``inplace``: rebase, write-back)
    for t in result if type(result) is tuple else (result,):
        t._view_src = made
        t._vc = src._counter()
        t._base = base


def _device_mismatch(cls: type, args: tuple[Any, ...]) -> None:
    devices = [str(a.device) for a in args if isinstance(a, Tensor)]
    raise DeviceError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{' and '.join(dict.fromkeys(devices))}! (in {cls.__name__})"
    )


def _record(
    ctx: Function, impl: Any, args: tuple[Any, ...], arrays: list[Any], out: Any
) -> Tensor | tuple[Tensor, ...]:
    backend = ctx.out_backend
    edges: list[Any] = []
    for a, need in zip(args, ctx.needs_input_grad):
        if need:
            fn = a.grad_fn
            edges.append(a if fn is None else (fn, a._output_nr))
        else:
            edges.append(None)
    ctx._edges = edges
    ctx._impl = impl
    if anomaly_mode._state.enabled:  # the forward's stack, for a backward error to print
        ctx._trace = traceback.format_stack()[:-2]
    make = Tensor.from_backend_array
    if type(out) is not tuple:  # the common single-output case, without loops
        t = make(out, backend, True)
        if ctx._non_diff and id(out) in ctx._non_diff:
            t.requires_grad = False
        else:
            t.grad_fn = ctx
        ctx._out_meta = ((out.shape, out.dtype),)
        if ctx._to_save:
            ctx._saved = _resolve_saved(ctx._to_save, args, arrays, (out,), (t,))
            if saved_hooks.stack:
                ctx._saved = _pack_saved(ctx._saved, backend, ctx._pack_order)
                ctx._hooked = _reordered(ctx)
            ctx._to_save = ()
        return t
    non_diff = ctx._non_diff
    results = []
    for i, o in enumerate(out):
        diff = id(o) not in non_diff
        t = make(o, backend, diff)
        if diff:
            t.grad_fn = ctx
            t._output_nr = i
        results.append(t)
    ctx._out_meta = tuple((o.shape, o.dtype) for o in out)
    if ctx._to_save:
        ctx._saved = _resolve_saved(ctx._to_save, args, arrays, out, results)
        if saved_hooks.stack:
            ctx._saved = _pack_saved(ctx._saved, backend, ctx._pack_order)
            ctx._hooked = _reordered(ctx)
        ctx._to_save = ()
    return tuple(results)


_PLAIN = (type(None), int, float, bool, complex)


class SavedTensor:
    """One item ``save_for_backward`` kept: an input Tensor with the version it must still have
    at backward, or a constant (a number, None, an array that is neither input nor output)."""

    __slots__ = ("value", "version")

    def __init__(self, value: Any, version: int) -> None:
        self.value, self.version = value, version

    def unpack(self, node: Function) -> Any:
        """The item as ``node.saved_tensors`` gives it; raises if the input changed in place."""
        obj = self.value
        if isinstance(obj, Tensor):
            current = obj._version
            if current != self.version:
                _raise_modified(obj, node, current, self.version)
            return obj
        if obj is None or type(obj) in _PLAIN:
            return obj
        return Tensor.from_backend_array(obj, node.out_backend)


class SavedOutput(SavedTensor):
    """A saved forward output, kept as its array (a Tensor would point back at the node: a
    reference cycle) with its index among the node's outputs and its version counter."""

    __slots__ = ("output_nr", "counter", "requires_grad")

    def __init__(
        self, array: Any, output_nr: int, counter: VersionCounter, requires_grad: bool
    ) -> None:
        self.value, self.version = array, counter.value
        self.output_nr, self.counter, self.requires_grad = output_nr, counter, requires_grad

    def unpack(self, node: Function) -> Any:
        """The output as a Tensor of ``node``; raises if it changed in place since."""
        vc = self.counter
        if vc.value != self.version:
            _raise_modified(None, node, vc.value, self.version, self.output_nr)
        requires_grad = self.requires_grad
        t = Tensor.from_backend_array(self.value, node.out_backend, requires_grad)
        if requires_grad:
            t.grad_fn = node
            t._output_nr = self.output_nr
        t._vc = vc
        return t


def _resolve_saved(
    items: tuple[Any, ...], args: tuple[Any, ...], arrays: list[Any], outs: Any, results: Any
) -> list[SavedTensor]:
    """``save_for_backward``'s items as SavedTensors: inputs (given as Tensors or as their
    arrays), outputs (found by their arrays) and constants."""
    saved: list[SavedTensor] = []
    for item in items:
        k = 0
        for arr in arrays:  # an input's array, the common item: found first, by identity
            if arr is item:
                a = args[k]
                if isinstance(a, Tensor):
                    vc = a._vc
                    saved.append(SavedTensor(a, 0 if vc is None else vc.value))
                    break
            k += 1
        else:
            k = 0
            for o in outs:  # an output (log_softmax's), found by its array
                if o is item:
                    t = results[k]
                    saved.append(SavedOutput(o, k, t._counter(), t.requires_grad))
                    break
                k += 1
            else:
                saved.append(_resolve_item(item, args, arrays, outs, results))
    return saved


def _resolve_item(
    item: Any, args: tuple[Any, ...], arrays: list[Any], outs: Any, results: Any
) -> SavedTensor:
    """One item ``_resolve_saved`` did not find among the Tensor inputs' arrays: a constant,
    a Tensor, an output (found by its array) or any other array (kept as a constant)."""
    if type(item) in _PLAIN:
        return SavedTensor(item, 0)
    if isinstance(item, Tensor):
        return SavedTensor(item, item._version)
    for k, o in enumerate(outs):
        if o is item:
            t = results[k]
            return SavedOutput(o, k, t._counter(), t.requires_grad)
    return SavedTensor(item, 0)


class _SavedHooks(threading.local):
    """The (pack, unpack) pairs of this thread's active ``autograd.graph.saved_tensors_hooks``
    blocks, innermost last; only the innermost pair applies. Per thread, as in PyTorch."""

    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Tensor], Any], Callable[[Any], Tensor]]] = []


saved_hooks = _SavedHooks()


class HookedSaved(SavedTensor):
    """A saved item that went through a ``saved_tensors_hooks`` pack hook: it keeps what the
    hook returned, and what it needs to rebuild the tensor's place in the graph on unpack
    (its version counter, its producer node and output index); never the array itself."""

    __slots__ = ("pack_fn", "unpack_fn", "counter", "grad_fn", "output_nr", "requires_grad",
                 "leaf", "kind", "source")  # fmt: skip

    def __init__(self, hooks: tuple[Callable[[Tensor], Any], Callable[[Any], Any]], obj: Tensor,
                 counter: Any, version: int, kind: str) -> None:  # fmt: skip
        self.pack_fn, self.unpack_fn = hooks
        self.value, self.version = self.pack_fn(obj), version
        self.counter, self.kind = counter, kind
        self.source = 0  # id() of the input Tensor packed (for snapshot_saved_input)
        self.grad_fn: Any = None
        self.output_nr = 0
        self.requires_grad = False
        self.leaf: Tensor | None = None  # a leaf that requires grad is kept itself (its grads
        # must reach that very object under double backward; it is alive anyway)

    def unpack(self, node: Function) -> Any:
        """Call the unpack hook and give its tensor this item's place in the graph."""
        vc = self.counter
        if vc is not None and vc.value != self.version:
            output_nr = self.output_nr if self.kind == "output" else None
            _raise_modified(None, node, vc.value, self.version, output_nr)
        if self.leaf is not None:
            self.unpack_fn(self.value)  # the hook still runs (it may count or move data)
            return self.leaf
        t = self.unpack_fn(self.value)
        if not isinstance(t, Tensor):
            raise TypeError(
                f"the unpack hook of saved_tensors_hooks must return a Tensor, but returned "
                f"{type(t).__name__}"
            )
        if self.kind == "const":
            return t
        out = Tensor.from_backend_array(t._data, t._backend, self.requires_grad)
        if self.kind == "output":
            if self.requires_grad:
                out.grad_fn, out._output_nr = node, self.output_nr
        else:
            out.grad_fn, out._output_nr = self.grad_fn, self.output_nr
        out._vc = vc
        return out


def _reordered(ctx: Function) -> bool:
    """Whether ``_pack_saved`` packed ``ctx``'s saved items in its ``_pack_order``."""
    order = ctx._pack_order
    return order is not None and ctx._saved is not None and len(order) == len(ctx._saved)


def _pack_saved(
    saved: list[SavedTensor], backend: Any, order: tuple[int, ...] | None = None
) -> list[SavedTensor]:
    """Run the innermost pack hook on each tensor ``saved`` holds (inputs, outputs, arrays),
    in ``order`` (positions in ``saved``: torch's saving order) where given."""
    if order is not None and len(order) == len(saved):
        packed = _pack_saved([saved[k] for k in order], backend)
        out = list(saved)
        for k, h in zip(order, packed):
            out[k] = h
        return out
    hooks = saved_hooks.stack[-1]
    out = []
    for s in saved:
        obj = s.value
        if isinstance(s, SavedOutput):
            t = Tensor.from_backend_array(obj, backend)  # no grad_fn: no node -> hook cycle
            h = HookedSaved(hooks, t, s.counter, s.version, "output")
            h.requires_grad, h.output_nr = s.requires_grad, s.output_nr
        elif isinstance(obj, Tensor):
            if obj.requires_grad and obj.grad_fn is None:
                h = HookedSaved(hooks, obj, obj._counter(), s.version, "input")
                h.leaf = obj
            else:
                h = HookedSaved(hooks, obj.detach(), obj._counter(), s.version, "input")
                h.grad_fn, h.output_nr = obj.grad_fn, obj._output_nr
                h.requires_grad = obj.requires_grad
            h.source = id(obj)
        elif obj is None or type(obj) in _PLAIN:
            out.append(s)
            continue
        else:  # an array the forward made (a mask, an index): a tensor to PyTorch
            h = HookedSaved(hooks, Tensor.from_backend_array(obj, backend), None, 0, "const")
        out.append(h)
    return out


def snapshot_saved_input(node: Function, t: Any) -> None:
    """``t`` is about to be overwritten by an in-place op whose node saved it: keep a copy of
    its current value (and graph position) instead, as PyTorch does for ``y.pow_(3)``."""
    for s in node._saved or ():
        if type(s) is HookedSaved and s.kind == "input" and s.source == id(t):
            # packed before the overwrite: pack the copy instead (the hooks see it as PyTorch's
            # saved original), and nobody else can change the copy
            s.value = s.pack_fn(Tensor.from_backend_array(t._backend.copy(t._data), t._backend))
            s.counter, s.source = None, 0
        elif s.value is t and type(s) is SavedTensor:  # only a saved input holds a Tensor
            copy = Tensor.from_backend_array(t._backend.copy(t._data), t._backend, t.requires_grad)
            copy.grad_fn, copy._output_nr = t.grad_fn, t._output_nr
            s.value, s.version = copy, 0


def rebind_saved_output(node: Function, old: VersionCounter, new: VersionCounter) -> None:
    """Point saved outputs counted by ``old`` at ``new`` (an in-place op adopted the output)."""
    for s in node._saved or ():
        if isinstance(s, (SavedOutput, HookedSaved)) and s.counter is old:
            s.counter, s.version = new, new.value


def replace_saved_output_array(node: Function, old: Any, new: Any) -> None:
    """A saved output's array ``old`` was replaced by ``new`` without a version bump (an
    in-place change through ``.data`` on a backend whose writes make new arrays): save ``new``,
    as the shared storage would on NumPy."""
    for s in node._saved or ():
        if isinstance(s, SavedOutput) and s.value is old:
            s.value = new


def _raise_modified(
    t: Any, node: Function, current: int, expected: int, output_nr: int | None = None
) -> None:
    what = f"output {output_nr} of {node.name}" if output_nr is not None else "an input"
    if t is not None:
        desc = f"[{t.dtype.name} {list(t.shape)}]"
        what = f"output {t._output_nr} of {t.grad_fn.name}" if t.grad_fn else "a leaf tensor"
    else:
        desc = "a saved output"
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {desc}, which is {what}, is at version {current}; expected version "
        f"{expected} instead. Hint: the tensor was changed in place after "
        f"{node.name.rstrip('0123456789').removesuffix('Backward')} "
        "saved it for backward; use an out-of-place operation (or .clone()) instead."
    )


# -- Functions on Tensors (PyTorch's contract) -----------------------------------------------------
_DIFF_ERR = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """The node behind a ``once_differentiable`` backward's gradients under ``create_graph``:
    passes values through, and raises if differentiated (PyTorch's ``DelayedError``)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        raise RuntimeError(_DIFF_ERR)

    @property
    def name(self) -> NodeName:
        """PyTorch's name of this node."""
        return NodeName("torch::autograd::Error")


def _once_tensor(backward: Callable[..., Any], ctx: Any, grads: tuple[Any, ...]) -> Any:
    """``once_differentiable`` for a Tensor Function: ``backward`` without recording; where a
    graph is being made from gradients that need grad, each result leads to an error node."""
    with grad_mode.no_grad():
        result = backward(ctx, *grads)
    if not grad_mode._state.enabled or not any(
        isinstance(g, Tensor) and g.requires_grad for g in grads
    ):
        return result

    def delayed(r: Any) -> Any:
        if not isinstance(r, Tensor):
            return r
        return _DelayedError.apply(r.detach().requires_grad_(True))

    if type(result) is tuple:
        return tuple([delayed(r) for r in result])
    return delayed(result)


class _ForwardADState(threading.local):
    """Forward mode's first (reverse) pass is running: Tensor Functions answer with their
    ``jvp`` (transposed) instead of their ``backward``."""

    depth = 0


forward_ad_pass = _ForwardADState()


@contextlib.contextmanager
def jvp_pass() -> Iterator[None]:
    """The block that runs forward mode's first pass: the vjp ``u -> J^T u`` whose derivative
    in ``u`` is ``J t`` (``autograd.forward_ad`` and ``func.jvp``/``linearize`` both work so).
    A custom Function's node inside it stands for its ``jvp``, as torch's forward mode calls
    the Function's ``jvp`` and never its ``backward``: the result is the user's rule, and a
    Function without one raises torch's NotImplementedError."""
    forward_ad_pass.depth += 1
    try:
        yield
    finally:
        forward_ad_pass.depth -= 1


class FunctionCtx:
    """The ``ctx`` (and node) of a Tensor Function's call, torch's ``FunctionCtx``: its
    ``<Name>Backward`` node class is generated per Function class as a subclass of it, with
    this class first."""

    _forward_cls: Any
    _dirty: Any = ()
    _for_forward: tuple[Any, ...] = ()
    _in_jvp = False
    _inputs_meta: tuple[Any, ...] = ()  # per forward argument: (shape, dtype) or None

    @property
    def name(self) -> NodeName:
        """``"<Function>Backward"``, PyTorch's name of a custom Function's node."""
        return NodeName(type(self).__name__)

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (Tensors or None) for ``backward``, as ``ctx.saved_tensors``
        (checked when the call is recorded, as in torch)."""
        self._to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep ``tensors`` for ``jvp``, which reads them as ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_forward expects all arguments to be tensors; but argument {i} "
                    f"is of type {type(t).__name__}."
                )
        self._for_forward = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Mark inputs that ``forward`` changed in place (and returns as outputs)."""
        self._dirty = {id(t) for t in tensors}

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Mark outputs that get no gradient (``requires_grad=False``)."""
        self._non_diff = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` sees zeros (True, the default) or None for the outputs no
        gradient reached."""
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """What ``save_for_backward`` kept (in ``jvp``: what ``save_for_forward`` kept)."""
        if self._in_jvp:
            return tuple(self._for_forward)
        return Function.saved_tensors.fget(self)  # type: ignore[attr-defined,no-any-return]

    @property
    def saved_variables(self) -> tuple[Any, ...]:
        """``saved_tensors`` under its old name (deprecated in torch too)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, 2)
        return self.saved_tensors

    @property
    def materialize_grads(self) -> bool:
        """Whether ``backward`` sees zeros for unreached outputs (``set_materialize_grads``)."""
        return bool(self._materialize)


def _uses_setup_context(cls: type) -> bool:
    return getattr(cls, "setup_context") is not Function.setup_context  # noqa: B009


def _tensor_function(cls: type) -> None:
    """Give ``cls`` (a Function on Tensors) its node class and its ``apply``."""
    node_cls = type(cls.__name__ + "Backward", (FunctionCtx, cls),
                    {"_is_backward_node": True, "_forward_cls": cls, "__module__": cls.__module__,
                     "__qualname__": cls.__qualname__ + "Backward"})  # fmt: skip
    setattr(cls, "_backward_cls", node_cls)  # noqa: B010
    if "vjp" in cls.__dict__ and "backward" not in cls.__dict__:  # torch: vjp is backward
        setattr(cls, "backward", cls.__dict__["vjp"])  # noqa: B010

    def run(*args: Any, **kwargs: Any) -> Any:
        return _apply_tensors(cls, args, kwargs)

    run.__name__, run.__qualname__ = cls.__name__, cls.__qualname__

    def apply(_cls: Any, *args: Any, **kwargs: Any) -> Any:
        if _replay.listeners:  # lucid.compile: one step, replayed by calling apply again
            return _replay.listeners[-1](run, args, kwargs)
        return _apply_tensors(cls, args, kwargs)

    apply.__doc__ = "Run the Function on ``args``; as ``torch.autograd.Function.apply``."
    setattr(cls, "apply", classmethod(apply))  # noqa: B010
    setattr(cls, "apply_multi", classmethod(apply))  # noqa: B010


def _bind(cls: Any, setup: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """``args`` and ``kwargs`` as ``forward``'s positional arguments, defaults filled in."""
    sig = _SIGNATURES.get(cls)
    if sig is None:  # once per class: inspect.signature costs ~10 us a call
        sig = inspect.signature(cls.forward)
        if not setup:
            params = list(sig.parameters.values())[1:]  # without ctx
            sig = sig.replace(parameters=params)
        _SIGNATURES[cls] = sig
    if not kwargs and len(args) == len(sig.parameters):
        return args  # nothing to bind or fill in
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


_SIGNATURES: dict[type, inspect.Signature] = {}


def _apply_tensors(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``apply`` of a Tensor Function: ``forward`` on the Tensors without recording, then one
    node (``ctx``) for its outputs when an input requires grad, as PyTorch records it."""
    if _interceptors:  # vmap: no batching rule of its own; the handler loops over the batch
        got = _interceptors[-1](cls, args, kwargs)
        if got is not NotImplemented:
            return got
    setup = _uses_setup_context(cls)
    if kwargs or setup:
        args = _bind(cls, setup, args, kwargs)
    backend = None
    for a in args:
        if isinstance(a, Tensor):
            backend = a._backend
            break
    if backend is None:
        backend = get_backend(None)
    node_cls = cls._backward_cls
    ctx = node_cls.__new__(node_cls)
    ctx.backend = ctx.out_backend = backend
    ctx.xp = backend.xp
    needs = tuple([isinstance(a, Tensor) and a.requires_grad for a in args])
    ctx.needs_input_grad = needs
    state = grad_mode._state
    enabled = state.enabled
    state.enabled = False  # forward records nothing (no_grad, without its context object)
    try:
        if setup:
            out = cls.forward(*args)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args)
    finally:
        state.enabled = enabled
    for o in out if type(out) is tuple else (out,):
        if not isinstance(o, Tensor) and hasattr(o, "shape") and hasattr(o, "dtype"):
            _array_output(cls, o)
    if not (enabled and any(needs)):
        return out
    return _record_tensors(ctx, args, out)


def _array_output(cls: Any, o: Any) -> None:
    """A Tensor Function's forward returned a backend array: the array contract's habit."""
    kind = f"{type(o).__module__}.{type(o).__name__}"
    raise TypeError(
        f"{cls.__name__}.forward returned a {kind}: a custom Function's forward computes on "
        "Tensors and returns Tensors, as torch's; to compute on backend arrays through ctx.xp "
        f"instead, set forward_on_arrays = True on {cls.__name__}"
    )


def _record_tensors(ctx: Any, args: tuple[Any, ...], out: Any) -> Any:
    """Make ``ctx`` the node of ``out``'s Tensors: edges to the inputs, outputs wired to it
    (an input returned as is becomes a view of it; a dirty input is rebased), saved items."""
    edges: list[Any] = []
    meta: list[Any] = []
    for a, need in zip(args, ctx.needs_input_grad):
        if need:
            fn = a.grad_fn
            edges.append(a if fn is None else (fn, a._output_nr))
        else:
            edges.append(None)
        meta.append((tuple(a.shape), a.dtype) if isinstance(a, Tensor) else None)
    ctx._edges = edges
    ctx._inputs_meta = tuple(meta)
    ctx._impl = _TensorBackward
    if anomaly_mode._state.enabled:
        ctx._trace = traceback.format_stack()[:-3]
    is_tuple = type(out) is tuple
    outs = out if is_tuple else (out,)
    dirty, non_diff = ctx._dirty, ctx._non_diff
    results: list[Any] = []
    out_meta: list[Any] = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            out_meta.append((None, None))
            continue
        if dirty and id(o) in dirty:
            if o.requires_grad and o.grad_fn is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            o._counter().value += 1  # marking it dirty counts as a change, as in torch
            t = o
        elif any(o is a for a in args):  # an input returned as is: a view of it, as torch
            t = Tensor.from_backend_array(o._data, o._backend)
            t._vc, t._base = o._counter(), o if o._base is None else o._base
        else:
            t = o
        if id(o) in non_diff or not (t.dtype.is_floating_point or t.dtype.is_complex):
            if t is o and o.grad_fn is not None and id(o) in dirty:
                t.grad_fn = None
            t.requires_grad = False
        else:
            t.requires_grad = True
            t.grad_fn = ctx
            t._output_nr = i
        results.append(t)
        out_meta.append((t._data.shape, t._data.dtype))
    ctx._out_meta = tuple(out_meta)
    if ctx._to_save:
        for i, item in enumerate(ctx._to_save):
            if item is not None and not isinstance(item, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(item).__name__}"
                )
        saved: list[SavedTensor] = []
        for item in ctx._to_save:
            for k, r in enumerate(results):
                if r is item and isinstance(r, Tensor) and r.grad_fn is ctx:
                    saved.append(SavedOutput(r._data, k, r._counter(), True))
                    break
            else:
                if item is not None and any(item is o for o in outs):  # a returned input
                    k = [j for j, o in enumerate(outs) if o is item][0]
                    r = results[k]
                    saved.append(SavedTensor(item, item._version) if not isinstance(r, Tensor)
                                 or r.grad_fn is not ctx else SavedOutput(r._data, k,
                                 r._counter(), True))  # fmt: skip
                else:
                    saved.append(SavedTensor(item, 0 if item is None else item._version))
        ctx._saved = _pack_saved(saved, ctx.backend) if saved_hooks.stack else saved
        ctx._to_save = ()
    return tuple(results) if is_tuple else results[0]


class _TensorBackward:
    """The ``_impl`` of a Tensor Function's node: its ``backward`` (or, in forward-mode AD's
    reverse pass, its ``jvp`` transposed), with PyTorch's checks on what it returns."""

    @staticmethod
    def backward(node: Any, *grads: Any) -> Any:
        if forward_ad_pass.depth:
            return _JvpTranspose.apply_multi(*grads, node=node)
        result = node._forward_cls.backward(node, *grads)
        one = type(result) is not tuple
        for i, (r, m) in enumerate(zip((result,) if one else result, node._inputs_meta)):
            if m is None:
                if r is not None:
                    raise RuntimeError(
                        f"function {node.name} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
            elif isinstance(r, Tensor) and not _expandable(m[0], tuple(r.shape)):
                raise RuntimeError(
                    f"Function {node.name} returned an invalid gradient at index {i} - got "
                    f"{list(r.shape)} but expected shape compatible with {list(m[0])}"
                )
        return result


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (a gradient of ``to`` sums back to ``shape``)."""
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


class _JvpTranspose(Function):
    """In forward-mode AD's reverse pass: a Tensor Function's node maps its outputs'
    cotangents to its inputs' (values irrelevant: the pass runs on zeros); differentiating
    that map calls the Function's ``jvp`` with the inputs' tangents."""

    @staticmethod
    def forward(ctx: Any, *grads: Any, node: Any) -> Any:
        ctx.node = node
        return tuple(
            ctx.xp.zeros(m[0], dtype=ctx.backend.native_dtype(m[1]))
            if m is not None
            else ctx.xp.zeros(())
            for m in node._inputs_meta
        )

    @staticmethod
    def backward(ctx: Any, *tangents: Any) -> Any:
        node = ctx.node
        cls = node._forward_cls
        if getattr(cls, "jvp") is Function.jvp:  # noqa: B009
            Function.jvp(node)
        tins = [t if m is not None else None for t, m in zip(tangents, node._inputs_meta)]
        node._in_jvp = True
        try:  # recorded when the second pass creates a graph: grad(jvp(f)) differentiates it
            result = cls.jvp(node, *tins)
        finally:
            node._in_jvp = False
        return result


class InplaceFunction(Function):
    """torch's ``InplaceFunction``: a Tensor Function whose instances carry an ``inplace``
    flag (kept for programs that subclass it)."""

    forward_on_arrays = False

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
