"""Activation checkpointing (``torch.utils.checkpoint``): trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` with the graph recorded as usual, except that the
tensors its ops save for backward are dropped (a ``saved_tensors_hooks`` pack hook keeps only
their index). When backward first needs one of them, ``fn`` runs again on the same inputs —
with the RNG state and autocast state of the first run — and the recomputed values are
handed out by index. This is PyTorch's non-reentrant scheme: the graph is the ordinary one,
so ``autograd.grad`` with respect to inputs or parameters, hooks, nesting and keyword
arguments all work, and gradients are exactly those of the plain run.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lucid import _generator
from lucid._tensor import Tensor
from lucid.amp import autocast_mode
from lucid.autograd import grad_mode
from lucid.autograd.graph import saved_tensors_hooks

__all__ = [
    "CheckpointError",
    "DefaultDeviceType",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
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


class _Frame:
    """One ``checkpoint`` call: how many tensors the first run saved and, once recomputed,
    their values (dropped again when each has been handed out once)."""

    def __init__(self, recompute: Callable[[], list[Tensor]]) -> None:
        self.recompute = recompute
        self.shapes: list[tuple[int, ...]] = []
        self.values: list[Tensor | None] | None = None
        self.left = 0

    def pack(self, t: Tensor) -> int:
        self.shapes.append(tuple(t.shape))
        return len(self.shapes) - 1

    def unpack(self, index: int) -> Tensor:
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

    def _run(self) -> list[Tensor]:
        saved = self.recompute()
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
    for PyTorch's signature. ``preserve_rng_state`` (default True) replays dropout and other
    sampling ops identically in the recomputation. ``context_fn`` returns two context managers:
    the first is entered around the first run, the second around the recomputation (lucid
    calls ``context_fn`` again for each recomputation, so generator-based managers work).
    ``determinism_check="default"`` compares the shapes of the recomputed tensors with the
    first run's and raises ``CheckpointError`` on a difference; ``"none"`` skips that.

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
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if not callable(function):
        raise TypeError(f"checkpoint expects a callable, but got {type(function).__name__}")
    if not callable(context_fn):
        raise TypeError(f"context_fn must be callable, but got {type(context_fn).__name__}")
    first_ctx = context_fn()[0]
    rng_state = _generator.get_rng_state() if preserve_rng_state else None
    autocast_enabled = dict(autocast_mode._state.enabled)

    def recompute() -> list[Tensor]:
        saved: list[Tensor] = []

        def keep(t: Tensor) -> Tensor:
            saved.append(t)
            return t

        with contextlib.ExitStack() as stack:
            if rng_state is not None:
                stack.enter_context(_generator.fork_rng())
                _generator.set_rng_state(rng_state)
            stack.enter_context(_autocast_as(autocast_enabled))
            stack.enter_context(grad_mode.enable_grad())
            stack.enter_context(context_fn()[1])  # fresh managers for each recomputation
            stack.enter_context(saved_tensors_hooks(keep, _identity))
            function(*args, **kwargs)
        return saved

    frame = _Frame(recompute)
    if determinism_check == "none":
        frame.shapes = _NoCheck()
    with first_ctx, saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


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
