"""``lucid.utils.swap_tensors``: two Tensor objects exchange their contents, keeping their
identities (``torch.utils.swap_tensors``).

A lucid Tensor keeps everything in ``__slots__`` (the backend array, autograd fields, the
version counter), so exchanging the slots, the class and any ``__dict__`` exchanges the whole
tensor; torch also swaps its C++ TensorImpl, which lucid does not have. Nothing here imports
Tensor, so the namespace ``lucid.utils`` can offer it without sitting above Tensor.
"""

from __future__ import annotations

import copyreg
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lucid._tensor import Tensor

_UNSET = object()


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Swap the contents of two Tensor objects in place: afterwards ``t1`` has ``t2``'s data,
    dtype, device, ``requires_grad``, ``grad``, ``grad_fn``, hooks, version counter, Python
    attributes and class, and ``t2`` has ``t1``'s, while every reference to ``t1`` (a module's
    registry, an optimizer's state keyed by the tensor) still reaches the object ``t1``.

    As torch, it refuses tensors that have weak references (lucid's ``retain_grad`` and
    forward-mode dual tensors hold some) and tensors of classes with different slots. A lucid
    Tensor has no ``__dict__`` where its subclasses (``nn.Parameter``, ``nn.Buffer``) have one,
    so a plain Tensor cannot take a Parameter's class: swap Parameters with Parameters (torch
    allows it; lucid raises before changing anything). Unlike torch, lucid cannot tell whether
    a recorded graph still holds ``t1`` or ``t2``: swap before running forward, or after the
    backward of a graph that uses them, never in between.

    >>> a, b = lucid.tensor([1.0, 2.0]), lucid.tensor([3])
    >>> before = id(a)
    >>> lucid.utils.swap_tensors(a, b)
    >>> a, b, id(a) == before
    (tensor([3]), tensor([1., 2.]), True)
    """
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))  # type: ignore[attr-defined]
    if slots != set(copyreg._slotnames(type(t2))):  # type: ignore[attr-defined]
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    _swap_classes(t1, t2)
    _swap_dicts(t1, t2)
    for name in slots:
        _swap_slot(t1, t2, name)


def _swap_classes(t1: Any, t2: Any) -> None:
    """Exchange the classes first, the one step Python may refuse, so that a refusal leaves
    both tensors as they were."""
    cls1, cls2 = type(t1), type(t2)
    try:
        t1.__class__ = cls2
    except TypeError as e:
        raise RuntimeError(
            f"Cannot swap t1 and t2: a {cls1.__name__} cannot become a {cls2.__name__} (their "
            "object layouts differ: a lucid Tensor has no __dict__ where its subclasses, such "
            "as Parameter, have one). Swap tensors of classes with the same layout, or set "
            "t1.data = t2.data to move only the data."
        ) from e
    try:
        t2.__class__ = cls1
    except TypeError:
        t1.__class__ = cls1
        raise


def _swap_dicts(t1: Any, t2: Any) -> None:
    """Exchange the Python attributes, where the (now matching) classes give them a dict."""
    if hasattr(t1, "__dict__"):
        t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__


def _swap_slot(t1: Any, t2: Any, name: str) -> None:
    """Exchange one slot; one left unset on a tensor (read with getattr) moves unset."""
    v1, v2 = getattr(t1, name, _UNSET), getattr(t2, name, _UNSET)
    for t, v in ((t1, v2), (t2, v1)):
        if v is _UNSET:
            if hasattr(t, name):
                delattr(t, name)
        else:
            setattr(t, name, v)
