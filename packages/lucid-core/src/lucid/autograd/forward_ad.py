"""``lucid.autograd.forward_ad``: torch's dual-tensor API for forward-mode AD.

>>> import lucid.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(lucid.tensor([0.0, 1.0]), lucid.tensor([1.0, 1.0]))
...     fwAD.unpack_dual(x.sin() * 2).tangent
tensor([2.0000, 1.0806])

Lucid has no forward-mode formulas: a dual tensor is recorded by reverse mode, and
``unpack_dual`` computes the tangent ``J @ t`` with the double-vjp identity (as
``lucid.func.jvp`` does), exactly, through ops whose backward is differentiable. A custom
``autograd.Function`` contributes through its ``jvp``, as in torch (one without raises
torch's NotImplementedError, at the unpack). So the
tangent costs two backward passes each time it is unpacked, and the tensors computed from a
dual tensor report ``requires_grad=True`` (torch's do not, unless their primal needs grad).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import NamedTuple

from lucid._creation import empty_like, zeros_like
from lucid._tensor import Tensor
from lucid.autograd import engine, function, grad_mode

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]


class UnpackedDualTensor(NamedTuple):
    """A dual tensor's ``primal`` and ``tangent`` (None where it has none)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    """One dual level: its dual inputs (weakly held, by id: Tensor's ``==`` is elementwise)
    and their tangents."""

    def __init__(self, index: int) -> None:
        self.index = index
        self._duals: dict[int, tuple[weakref.ref[Tensor], Tensor]] = {}

    def add(self, dual: Tensor, tangent: Tensor) -> None:
        key = id(dual)
        self._duals[key] = (weakref.ref(dual, lambda _: self._duals.pop(key, None)), tangent)

    def tangent_of(self, t: Tensor) -> Tensor | None:
        entry = self._duals.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def items(self) -> list[tuple[Tensor, Tensor]]:
        live = [(ref(), tangent) for ref, tangent in self._duals.values()]
        return [(d, tangent) for d, tangent in live if d is not None]

    def clear(self) -> None:
        self._duals.clear()


_levels: list[_Level] = []


def enter_dual_level() -> int:
    """Open a dual level and return its index (one level at a time, as in torch)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append(_Level(len(_levels)))
    return _levels[-1].index


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level (its dual tensors lose their tangents)."""
    _level(level, "exit a dual level").clear()
    _levels.pop()


@contextlib.contextmanager
def dual_level() -> Iterator[int]:
    """``with dual_level():`` opens a level for ``make_dual`` and closes it on exit."""
    index = enter_dual_level()
    try:
        yield index
    finally:
        exit_dual_level(level=index)


def _level(level: int | None, what: str) -> _Level:
    if not _levels:
        raise RuntimeError(
            f"Trying to {what} for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if level is not None and level != _levels[-1].index:
        raise RuntimeError(f"Invalid dual level {level}: the current level is {_levels[-1].index}")
    return _levels[-1]


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with ``tensor``'s values that carries ``tangent`` as its forward gradient."""
    lvl = _level(level, "create a dual Tensor")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(
            f"make_dual: expected Tensors, got {type(tensor).__name__} and {type(tangent).__name__}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    with grad_mode.enable_grad():
        # a view keeps the primal's own graph (when it needs grad) behind the dual input
        dual = tensor.view_as(tensor) if tensor.requires_grad else (
            tensor.detach().requires_grad_(True)
        )  # fmt: skip
    lvl.add(dual, _as_tangent(tangent, tensor))
    return dual


def _as_tangent(tangent: Tensor, primal: Tensor) -> Tensor:
    """``tangent`` itself where it has the primal's layout, as torch keeps it (a program may
    check ``unpack_dual(x).tangent is tangent``); else its values copied into the primal's
    layout. Lucid's tangents carry no graph: one that needs grad is detached."""
    if tangent.requires_grad:
        tangent = tangent.detach()
    if tangent.stride() == primal.stride() and tangent.dtype is primal.dtype:
        return tangent
    return empty_like(primal).copy_(tangent)


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: its values, and ``J @ t`` summed over the dual
    inputs it was computed from (None when it depends on none, or outside a level)."""
    primal = tensor.detach()
    if not _levels or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(primal, None)
    lvl = _level(level, "unpack a dual Tensor")
    own = lvl.tangent_of(tensor)
    if own is not None:
        return UnpackedDualTensor(primal, own)
    duals = lvl.items()
    if not tensor.requires_grad or not duals:
        return UnpackedDualTensor(primal, None)
    inputs = [d for d, _ in duals]
    with grad_mode.enable_grad():
        u = zeros_like(tensor).requires_grad_(True)  # the double-vjp's dummy cotangent
        with function.jvp_pass():  # custom Functions answer with their jvp
            vjps = engine.grad([tensor], inputs, [u], retain_graph=True, create_graph=True,
                               allow_unused=True)  # fmt: skip
        used = [(g, t) for g, (_, t) in zip(vjps, duals) if g is not None and g.requires_grad]
        if not used:
            return UnpackedDualTensor(primal, None)
        (tangent,) = engine.grad([g for g, _ in used], [u], [t for _, t in used],
                                 allow_unused=True)  # fmt: skip
    if tangent is None:
        tangent = zeros_like(primal)
    return UnpackedDualTensor(primal, tangent.detach())
