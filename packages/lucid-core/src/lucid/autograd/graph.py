"""The autograd graph's public seams, as ``torch.autograd.graph``.

- :class:`saved_tensors_hooks` / :class:`save_on_cpu`: choose what a recorded op keeps for
  backward (activation checkpointing and offloading are built on them).
- :class:`Node`: what ``tensor.grad_fn`` is (``name()``, ``next_functions``, ``metadata``,
  ``register_hook``, ``register_prehook``); every recorded op's node is one.
- :func:`increment_version`: tell autograd about a write it cannot see.
- :class:`GradientEdge` / :func:`get_gradient_edge`: a tensor's place in the graph, usable as
  an ``autograd.grad`` input after the tensor itself is gone.
- :func:`register_multi_grad_hook`: one hook over several tensors' gradients per backward pass.

Code that writes into ``t.array`` itself (an optimizer's multi-tensor update, a custom kernel)
bypasses the ops, so autograd does not learn that ``t`` changed. :func:`increment_version` tells
it, as any in-place op does: a tensor saved for backward and changed afterwards is then caught
at ``backward()`` instead of giving a silently wrong gradient.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import engine
from lucid.autograd.engine import GradientEdge
from lucid.autograd.function import AccumulateGrad, Function, saved_hooks
from lucid.utils.hooks import RemovableHandle

__all__ = [
    "GradientEdge",
    "Node",
    "get_gradient_edge",
    "register_multi_grad_hook",
    "disable_saved_tensors_hooks",
    "increment_version",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class _Disabled(threading.local):
    """The messages of this thread's active ``disable_saved_tensors_hooks`` blocks."""

    def __init__(self) -> None:
        self.messages: list[str] = []


_disabled = _Disabled()

Node = Function
"""The class of every backward node (``tensor.grad_fn``): lucid's ``Function`` is both the op's
context and its node, so ``isinstance(t.grad_fn, Node)`` holds for every recorded op."""


class saved_tensors_hooks:  # noqa: N801
    """Pack/unpack hooks for the tensors recorded ops save for backward, inside a block.

    ``pack_hook(tensor)`` runs when an op saves ``tensor`` and may return anything; the op
    keeps only that. ``unpack_hook(packed)`` runs when backward needs the tensor and must
    return a Tensor of the same value. The graph position (``grad_fn``, version check) is
    kept by autograd itself, so hooks only move data. Blocks nest; the innermost applies.

    >>> import lucid
    >>> seen = []
    >>> def pack(t):
    ...     seen.append(tuple(t.shape))
    ...     return t.detach().numpy().copy()
    >>> def unpack(a):
    ...     return lucid.from_numpy(a)
    >>> x = lucid.ones(3, requires_grad=True)
    >>> with saved_tensors_hooks(pack, unpack):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad, seen
    (tensor([2., 2., 2.]), [(3,), (3,)])
    """

    def __init__(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(
                f"saved_tensors_hooks expects two callables, but got {type(pack_hook).__name__} "
                f"and {type(unpack_hook).__name__}"
            )
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> None:
        if _disabled.messages:
            raise RuntimeError(_disabled.messages[-1])
        saved_hooks.stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        saved_hooks.stack.pop()


class disable_saved_tensors_hooks:  # noqa: N801
    """Inside the block, entering a ``saved_tensors_hooks`` raises ``RuntimeError`` with
    ``error_message`` (``torch.autograd.graph.disable_saved_tensors_hooks``): for code whose
    saved tensors must stay as they are. Hooks already active keep applying."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _disabled.messages.append(self.error_message)

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        _disabled.messages.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Keep the tensors saved for backward on the CPU (NumPy) and move each back to its own
    device when backward needs it (``torch.autograd.graph.save_on_cpu``): accelerator memory
    held by the graph falls to the parameters and the live activations. A saved tensor
    already on the CPU is kept as it is (no copy). ``pin_memory`` and ``device_type`` are
    accepted for PyTorch's signature; neither has a meaning here.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            device = t.device
            return device, (t if device == "cpu" else t.to("cpu"))

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            device, t = packed
            return t if device == "cpu" else t.to(device)

        super().__init__(pack, unpack)


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


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge gradients of ``tensor`` flow into: ``(tensor.grad_fn, output index)``, or the
    leaf's ``AccumulateGrad`` node (``torch.autograd.graph.get_gradient_edge``).
    ``autograd.grad(out, get_gradient_edge(t))`` gives ``t``'s gradient.

    >>> import lucid
    >>> x = lucid.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> edge = get_gradient_edge(y)
    >>> lucid.autograd.grad((y * y).sum(), edge)
    (tensor([4., 4.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    if tensor.grad_fn is None:
        return GradientEdge(AccumulateGrad._of(tensor), 0)  # the leaf's one while held
    return GradientEdge(tensor.grad_fn, tensor._output_nr)


class _MultiHandle:
    """The handle ``register_multi_grad_hook`` returns: ``remove()`` drops every tensor hook."""

    def __init__(self, handles: list[RemovableHandle]) -> None:
        self.handles = handles

    def remove(self) -> None:
        """Remove the hook from every tensor."""
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(
    tensors: Iterable[Tensor], fn: Callable[..., None], *, mode: str = "all"
) -> _MultiHandle:
    """Call ``fn`` once per backward pass with the gradients of ``tensors``
    (``torch.autograd.graph.register_multi_grad_hook``).

    ``mode="all"``: once the pass is over, ``fn(grads)`` with one entry per tensor (None for a
    tensor that got no gradient in that pass); not called if none got one. ``mode="any"``:
    ``fn(grad)`` with the first of the tensors' gradients computed in the pass. Tensors that do
    not require grad are skipped. Returns a handle whose ``remove()`` unregisters it.

    >>> import lucid
    >>> a, b = lucid.ones(2, requires_grad=True), lucid.ones(2, requires_grad=True)
    >>> seen = []
    >>> _ = register_multi_grad_hook((a, b), lambda gs: seen.append([g is None for g in gs]))
    >>> (a * 3).sum().backward()
    >>> seen
    [[False, True]]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    ts = list(tensors)
    pending: dict[int, list[Any]] = {}  # per backward pass: the gradients seen so far

    def hook_for(i: int) -> Callable[[Tensor], None]:
        def hook(g: Tensor) -> None:
            key = id(engine._running.tasks[-1])
            buf = pending.get(key)
            first = buf is None
            if buf is None:
                buf = pending[key] = [None] * len(ts)
                engine.queue_callback(lambda: _finish(key))
            if mode == "any":
                if first:
                    fn(g)
                return
            buf[i] = g

        return hook

    def _finish(key: int) -> None:
        grads = pending.pop(key)
        if mode == "all":
            fn(tuple(grads))

    handles = [t.register_hook(hook_for(i)) for i, t in enumerate(ts) if t.requires_grad]
    return _MultiHandle(handles)
