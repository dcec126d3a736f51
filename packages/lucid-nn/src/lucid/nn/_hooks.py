"""The identity Functions that implement full backward hooks on Modules."""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.autograd import Function


class _HookIdentity(Function):
    """Identity on some tensors, keeping the hook state for the subclass's ``backward``."""

    @staticmethod
    def forward(ctx: Any, state: _BackwardHookState, *arrays: Any) -> Any:
        ctx.state = state
        return tuple(arrays)


class _OutputGrads(_HookIdentity):
    """Identity on a module's outputs whose backward records ``grad_output`` for the hooks."""

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        state: _BackwardHookState = ctx.state
        grads = state.fire_pre(tuple(grads))
        state.grad_output = tuple(grads)
        if state.n_inputs == 0:
            state.fire(())
        return (None, *grads)


class _InputGrads(_HookIdentity):
    """Identity on a module's inputs whose backward calls the hooks with ``grad_input``."""

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, *ctx.state.fire(tuple(grads)))


class PreHook:
    """A ``register_full_backward_pre_hook`` hook, kept among the module's backward hooks (so
    a module call checks one registry): ``fn(module, grad_output) -> None or new grad_output``
    runs before the module's gradients are computed."""

    __slots__ = ("fn",)

    def __init__(self, fn: Any) -> None:
        self.fn = fn


class _BackwardHookState:
    def __init__(self, module: Any, hooks: list[Any]) -> None:
        self.module = module
        self.hooks = [h for h in hooks if type(h) is not PreHook]
        self.pre_hooks = [h.fn for h in hooks if type(h) is PreHook]
        self.grad_output: tuple[Any, ...] = ()
        self.n_inputs = 0

    def fire_pre(self, grad_output: tuple[Any, ...]) -> tuple[Any, ...]:
        for hook in self.pre_hooks:
            result = hook(self.module, grad_output)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_output):
                raise RuntimeError(
                    f"backward pre hook returned {len(result)} gradients, expected "
                    f"{len(grad_output)} (one per output that requires grad)"
                )
            grad_output = result
        return grad_output

    def fire(self, grad_input: tuple[Any, ...]) -> tuple[Any, ...]:
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_output)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_input):
                raise RuntimeError(
                    f"backward hook returned {len(result)} gradients, expected "
                    f"{len(grad_input)} (one per input that requires grad)"
                )
            grad_input = result
        return grad_input


def wrap_inputs(state: _BackwardHookState, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Route the tensor inputs that require grad through ``_InputGrads``."""
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    state.n_inputs = len(idx)
    if not idx:
        return args
    outs = _InputGrads.apply_multi(state, *(args[i] for i in idx))
    new = list(args)
    for i, t in zip(idx, outs):
        new[i] = t
    return tuple(new)


def wrap_outputs(state: _BackwardHookState, output: Any) -> Any:
    """Route the tensor outputs through ``_OutputGrads`` (a Tensor or a tuple/list of them)."""
    single = isinstance(output, Tensor)
    items = [output] if single else list(output) if isinstance(output, (tuple, list)) else []
    idx = [i for i, a in enumerate(items) if isinstance(a, Tensor) and a.requires_grad]
    if not idx:
        return output
    outs = _OutputGrads.apply_multi(state, *(items[i] for i in idx))
    for i, t in zip(idx, outs):
        items[i] = t
    if single:
        return items[0]
    return type(output)(items)


def backward_hook_state(module: Any, hooks: list[Any]) -> _BackwardHookState:
    return _BackwardHookState(module, hooks)
