"""Batched tensors and the dispatch that runs ops on them (the machinery under ``vmap``).

A :class:`BatchedTensor` is what the function ``vmap`` maps sees: a Tensor of the *logical*
shape (one batch element's) that holds a *physical* Tensor with the batch as dimension 0.
``vmap`` installs :func:`dispatch` with ``lucid.autograd.function.intercept_ops``; every
``Function.apply`` whose arguments hold a BatchedTensor of the innermost running ``vmap``
goes to that op's batching rule, which calls the same op (or a few others) once on the
physical Tensors and wraps the result. An op without a rule runs once per batch element
(sliced, then stacked), with a one-time warning naming the op.

Autograd records the *physical* ops, so gradients flow through batched computations as through
any other; the batch elements never mix (every rule keeps them apart), which is what makes
``vmap(grad(f))`` per-sample. Nested ``vmap`` nests BatchedTensors: the physical Tensor of the
inner level is itself batched at the outer level, and its ops dispatch again.

Arrays: some ops take a tensor's backend array as an argument (``t.array``, a class-index
target). A BatchedTensor's array is a :class:`LogicalArray`: it has the logical ``shape``,
``dtype`` and ``ndim``, and the dispatch treats it as batched; reading its values (``item()``,
``numpy()``, ``bool()``) raises, as data-dependent control flow does under ``torch.vmap``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any, cast

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops.join import stack

__all__ = ["BatchedTensor", "LogicalArray", "Rule", "dispatch", "register", "wrap"]

Rule = Callable[[type[Function], tuple[Any, ...], dict[str, Any], int, int], Any]
"""A batching rule: ``rule(cls, args, kwargs, level, size)`` returns the op's batched result
(outputs wrapped at ``level``) or ``NotImplemented`` to fall back to the loop."""

_DATA_ERROR = (
    "vmap: the values of a batched Tensor were read directly inside the function vmap maps: "
    "by .item(), .tolist(), .numpy() or bool() (data-dependent control flow), or by an op that "
    "computes on arrays outside lucid's autograd Functions and has no batching rule "
    "(unique_consecutive, bincount, histc, histogram, isin, ...). Use lucid.where for control "
    "flow, or move that part out of vmap."
)


class LogicalArray:
    """The backend array of a :class:`BatchedTensor` as ops see it: its logical ``shape``,
    ``dtype`` and ``ndim``, no values (reading them raises: data-dependent control flow)."""

    __slots__ = ("owner",)

    def __init__(self, owner: BatchedTensor) -> None:
        self.owner = owner

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical shape (the physical one without the batch dimension)."""
        return tuple(self.owner._phys.shape[1:])

    @property
    def dtype(self) -> Any:
        """The native dtype of the physical array."""
        return self.owner._phys._data.dtype

    @property
    def ndim(self) -> int:
        """The number of logical dimensions."""
        return len(self.owner._phys.shape) - 1

    @property
    def size(self) -> int:
        """The number of logical elements."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self) -> int:
        return self.shape[0]

    def check_index_range(self, low: int, high: int, error: Callable[[int], Exception]) -> None:
        """``Backend.check_index_range`` over every batch element's values (a validation: it
        raises if any element is out of range, as the op would on each element)."""
        phys = self.owner._phys
        phys._backend.check_index_range(phys._data, low, high, error)

    def any_true(self) -> bool:
        """``Backend.any_true`` over every batch element's values (for value checks that
        raise if any element fails, as the op would on each element)."""
        phys = self.owner._phys
        return phys._backend.any_true(phys._data)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_DATA_ERROR)

    def __bool__(self) -> bool:
        raise RuntimeError(_DATA_ERROR)

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError(_DATA_ERROR)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"{_DATA_ERROR} (an op read the array's {name!r})")


class BatchedTensor(Tensor):
    """A Tensor inside ``vmap``: the logical view of ``_phys`` (batch at dim 0) at ``_level``.

    Shape, dtype and device are the logical ones; ops dispatch to batching rules; autograd
    fields are the physical tensor's.
    """

    __slots__ = ("_phys", "_level")
    _phys: Tensor
    _level: int

    @property
    def _data(self) -> Any:
        return LogicalArray(self)

    @_data.setter
    def _data(self, value: Any) -> None:
        # an in-place op adopts its out-of-place result's storage (``t._data = r._data``)
        if isinstance(value, LogicalArray) and value.owner._level == self._level:
            self._phys = value.owner._phys
            return
        raise RuntimeError(
            "vmap: an in-place operation would write values that are not batched at this "
            "vmap level into a batched Tensor (or change its shape); use the out-of-place op"
        )

    @property
    def requires_grad(self) -> bool:
        return self._phys.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._phys.requires_grad = value

    @property
    def grad_fn(self) -> Any:
        return self._phys.grad_fn

    @grad_fn.setter
    def grad_fn(self, value: Any) -> None:
        self._phys.grad_fn = value

    @property
    def grad(self) -> Tensor | None:
        g = self._phys.grad
        return None if g is None else wrap(g, self._level)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is None or (isinstance(value, BatchedTensor) and value._level == self._level):
            self._phys.grad = None if value is None else value._phys
            return
        raise RuntimeError("vmap: a batched Tensor's .grad must be batched at the same level")

    @property
    def data(self) -> Tensor:
        """The logical storage outside autograd (a BatchedTensor of the physical ``.data``)."""
        return wrap(self._phys.data, self._level)

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data

    def detach(self) -> Tensor:
        """The same batched values, cut from the graph."""
        return wrap(self._phys.detach(), self._level)

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._phys!r}\n)"


def wrap(phys: Tensor, level: int) -> BatchedTensor:
    """``phys`` (batch at dim 0) as a BatchedTensor of ``level``."""
    t = object.__new__(BatchedTensor)
    t._phys = phys
    t._level = level
    t._backend = phys._backend
    t._output_nr = 0
    t._vc = None
    t._hooks = None
    t._base = None
    t._view_src = None
    t._storage_of = None
    return t


def wrap_result(out: Any, level: int) -> Any:
    """An op's physical result (a Tensor or a tuple of them) wrapped at ``level``."""
    if type(out) is tuple:
        return tuple([wrap(o, level) for o in out])
    if isinstance(out, tuple):  # a named tuple (sort's values, indices)
        return type(out)(*[wrap(o, level) for o in out])
    return wrap(out, level)


# -- the rule table --------------------------------------------------------------------------
_RULES: dict[str, Rule] = {}
_resolved: dict[type, Rule | None] = {}
_warned: set[str] = set()


def _key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register(*names: str) -> Callable[[Rule], Rule]:
    """Register a rule for the Function classes named ``module.QualName`` (a decorator)."""

    def deco(rule: Rule) -> Rule:
        for n in names:
            _RULES[n] = rule
        _resolved.clear()
        return rule

    return deco


def register_class(cls: type, rule: Rule) -> None:
    """Register ``rule`` for the Function class ``cls``."""
    _RULES[_key(cls)] = rule
    _resolved.clear()


def rule_for(cls: type) -> Rule | None:
    """The batching rule of the Function class ``cls`` (or of its nearest base), or None."""
    if cls in _resolved:
        return _resolved[cls]
    found = None
    for c in cls.__mro__:
        found = _RULES.get(_key(c))
        if found is not None:
            break
    _resolved[cls] = found
    return found


def registered() -> dict[str, Rule]:
    """The registered rules by class name (a copy; for tests and the docs)."""
    return dict(_RULES)


# -- dispatch ----------------------------------------------------------------------------------
def level_of(a: Any) -> int:
    """The vmap level ``a`` is batched at (0: not batched); looks one level into tuples."""
    t = type(a)
    if t is BatchedTensor:
        return int(a._level)
    if t is LogicalArray:
        return int(a.owner._level)
    if t is tuple or t is list:
        return max((level_of(x) for x in a), default=0)
    return 0


class _Active(threading.local):
    """The running vmaps of this thread: (level, batch size), outermost first."""

    def __init__(self) -> None:
        self.levels: list[tuple[int, int]] = []


active = _Active()


def size_at(level: int) -> int:
    """The batch size of the running vmap of ``level``."""
    for lv, n in active.levels:
        if lv == level:
            return n
    raise RuntimeError(f"vmap: a batched Tensor of level {level} escaped the vmap that made it")


def dispatch(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``intercept_ops`` handler: run ``cls`` on ``args`` by its batching rule where some
    argument is batched, else ``NotImplemented`` (the op runs as usual)."""
    level = 0
    for a in args:
        lv = level_of(a)
        if lv > level:
            level = lv
    if not level:
        return NotImplemented
    size = size_at(level)
    op = cast("type[Function]", cls)
    rule = rule_for(cls)
    if rule is not None:
        got = rule(op, args, kwargs, level, size)
        if got is not NotImplemented:
            return got
    elif cls.__name__ not in _warned:
        _warned.add(cls.__name__)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {_key(cls)}. Please file us an issue on GitHub so that we can "
            "prioritize its implementation. (lucid.func.vmap runs this op once per batch "
            "element and stacks the results: exact, at the speed of a loop.)",
            UserWarning,
            stacklevel=3,
        )
    return loop(op, args, kwargs, level, size)


def select(a: Any, level: int, i: int) -> Any:
    """Batch element ``i`` of ``a`` at ``level`` (``a`` itself where not batched there)."""
    t = type(a)
    if t is BatchedTensor and a._level == level:
        return a._phys[i]
    if t is LogicalArray and a.owner._level == level:
        return a.owner._phys[i].array
    if (t is tuple or t is list) and level_of(a) == level:
        return t(select(x, level, i) for x in a)
    return a


def loop(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    """The fallback: ``cls`` on each batch element's slices, results stacked along dim 0."""
    if size == 0:
        raise RuntimeError(f"vmap: {cls.__name__} has no batching rule and the batch is empty")
    outs: list[Any] = [
        cls.apply(*[select(a, level, i) for a in args], **kwargs) for i in range(size)
    ]
    if isinstance(outs[0], tuple):  # a tuple or a named one (sort's values, indices)
        cols = [wrap(stack(list(col)), level) for col in zip(*outs)]
        return tuple(cols) if type(outs[0]) is tuple else type(outs[0])(*cols)
    return wrap(stack(outs), level)


# -- differentiating batched values (grad/vjp/jvp inside vmap) ---------------------------------
def lift(t: Tensor, levels: list[tuple[int, int]] | None = None) -> Tensor:
    """``t`` batched at every running vmap level (broadcast along the levels it lacks)."""
    levels = active.levels if levels is None else levels
    if not levels:
        return t
    level, size = levels[-1]
    if type(t) is BatchedTensor and t._level == level:
        inner = t._phys
    else:
        inner = t.unsqueeze(0).expand(size, *t.shape)
    return wrap(lift(inner, levels[:-1]), level)


def strip(t: Tensor) -> Tensor:
    """The plain physical Tensor under every level of ``t``."""
    while type(t) is BatchedTensor:
        t = t._phys
    return t


def rewrap(g: Tensor, like: Tensor) -> Tensor:
    """A plain physical ``g`` wrapped in the levels of ``like`` (whose physical shape it has)."""
    if type(like) is not BatchedTensor:
        return g
    return wrap(rewrap(g, like._phys), like._level)
