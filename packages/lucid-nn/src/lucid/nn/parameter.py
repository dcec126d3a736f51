"""``Parameter`` (trainable) and ``Buffer`` (state that is saved but not trained).

Both are Tensor subclasses. Wrapping a Tensor takes its data (sharing the buffer, as PyTorch
does) and cuts the graph: the new tensor is a leaf with no history. A Module's ``__setattr__``
sorts them into its ``_parameters`` and ``_buffers`` registries by type.
"""

from __future__ import annotations

from typing import Any

from lucid import Tensor, as_tensor, empty
from lucid.ops.shape import index_int


def _take_data(obj: Tensor, data: Any, dtype: Any, device: Any) -> None:
    """Initialise ``obj``'s Tensor slots from ``data``; a Tensor's buffer is shared, not copied,
    unless ``dtype`` or ``device`` asks for a conversion."""
    if isinstance(data, Tensor):
        data = data.detach()
    source = as_tensor([] if data is None else data, dtype=dtype, device=device)
    Tensor.__init__(obj, source.array, dtype=source.dtype, device=source.backend.device)


class Parameter(Tensor):
    """A Tensor that a Module trains (``torch.nn.Parameter``).

    It requires grad by default and keeps its ``.grad`` after backward.

    >>> w = nn.Parameter(lucid.zeros(3))
    >>> w.requires_grad, w.is_leaf
    (True, True)
    """

    def __init__(
        self, data: Any = None, requires_grad: bool = True, dtype: Any = None, device: Any = None
    ) -> None:
        _take_data(self, data, dtype, device)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.detach().numpy(), str(self.device), self.requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            copied: Parameter = memo[id(self)]
            return copied
        out = Parameter(self.detach().clone(), requires_grad=self.requires_grad)
        memo[id(self)] = out
        return out


class Buffer(Tensor):
    """A Tensor that is part of a Module's state but is not trained (running statistics...).

    It never requires grad. ``persistent=False`` keeps it out of ``state_dict``.

    >>> bn_mean = nn.Buffer(lucid.zeros(3))
    >>> bn_mean.requires_grad
    False
    """

    def __init__(
        self, data: Any = None, *, persistent: bool = True, dtype: Any = None, device: Any = None
    ) -> None:
        _take_data(self, data, dtype, device)
        self.persistent = persistent

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_buffer, (self.numpy(), str(self.device), self.persistent))

    def __deepcopy__(self, memo: dict[int, Any]) -> Buffer:
        if id(self) in memo:
            copied: Buffer = memo[id(self)]
            return copied
        out = Buffer(self.detach().clone(), persistent=self.persistent)
        memo[id(self)] = out
        return out


def _rebuild_parameter(arr: Any, device: str, requires_grad: bool) -> Parameter:
    return Parameter(as_tensor(arr, device=device), requires_grad=requires_grad)


def _rebuild_buffer(arr: Any, device: str, persistent: bool) -> Buffer:
    return Buffer(as_tensor(arr, device=device), persistent=persistent)


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (``torch.nn.parameter``'s): a lazy
    module ``materialize``s it on its first forward, or on loading a state_dict."""

    cls_to_become: type[Tensor]

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor ``shape`` (uninitialised values) and make it a ``cls_to_become``."""
        me: Any = self
        device = me.device if device is None else device
        dtype = me.dtype if dtype is None else dtype
        one = index_int(shape)
        shape = (one,) if one is not None else tuple(shape)
        grad = me.requires_grad
        _take_data(me, empty(*shape, dtype=dtype, device=device), None, None)
        me.__class__ = self.cls_to_become
        if grad:
            me.requires_grad_(True)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        me: Any = self
        if id(self) not in memo:
            cls: Any = type(self)
            memo[id(self)] = cls(me.requires_grad, me.device, me.dtype)
        return memo[id(self)]


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module before its first forward (``torch.nn.UninitializedParameter``);
    it becomes a ``Parameter`` when materialised."""

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None):
        super().__init__(None, requires_grad, dtype=dtype, device=device)


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A Buffer of a lazy module before its first forward (``torch.nn.UninitializedBuffer``);
    it becomes a ``Buffer`` when materialised."""

    cls_to_become = Buffer

    def __init__(
        self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
        persistent: bool = True,
    ) -> None:  # fmt: skip
        super().__init__(None, persistent=persistent, dtype=dtype, device=device)


def is_lazy(value: Any) -> bool:
    """Whether ``value`` is an uninitialised (lazy) parameter or buffer."""
    return isinstance(value, UninitializedTensorMixin)
