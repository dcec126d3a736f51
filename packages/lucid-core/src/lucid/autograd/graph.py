"""Autograd bookkeeping for code that works on a tensor's array directly, as
``torch.autograd.graph``.

Code that writes into ``t.array`` itself (an optimizer's multi-tensor update, a custom kernel)
bypasses the ops, so autograd does not learn that ``t`` changed. :func:`increment_version` tells
it, as any in-place op does: a tensor saved for backward and changed afterwards is then caught
at ``backward()`` instead of giving a silently wrong gradient.
"""

from __future__ import annotations

from collections.abc import Iterable

from lucid._tensor import Tensor

__all__ = ["increment_version"]


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Record that ``tensor`` (or each tensor of an iterable) was changed in place.

    Call it after writing into ``tensor.array`` outside the ops (in-place ops already bump
    the version themselves). Views share their base's counter, so bumping either marks both.
    Bumping more than once for one change does no harm.

    >>> import lucid
    >>> from lucid.autograd.graph import increment_version
    >>> t = lucid.zeros(3)
    >>> t.array[0] = 1.0  # a write autograd cannot see
    >>> before = t._version
    >>> increment_version(t)
    >>> t._version == before + 1
    True
    """
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version expects Tensors, but got {type(t).__name__}")
        t._counter().value += 1
