"""Running a model once and recording every op it applies, with the module it came from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.autograd import observe_ops


@dataclass
class Call:
    """One ``Function.apply``: the op's class, its inputs and attributes, its outputs."""

    fn: type
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    outputs: tuple[Tensor, ...]
    where: str  # the module path ("features.0 (Conv2d)"), "" at the top level
    versions: dict[int, int]  # id of each input and output Tensor -> its version then

    @property
    def key(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    @property
    def name(self) -> str:
        return self.fn.__name__


@dataclass
class Trace:
    calls: list[Call]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]


def flatten(value: Any) -> Iterator[Any]:
    """The Tensors (and other leaves) of nested tuples/lists, in order; ``None`` dropped."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from flatten(v)
    elif value is not None:
        yield value


def run(model: nn.Module, args: tuple[Any, ...]) -> Trace:
    """Run ``model(*args)`` without grad and in eval mode (as ``torch.onnx.export``'s default
    ``training=TrainingMode.EVAL``; each module's mode is restored after), recording each op
    and its module path."""
    calls: list[Call] = []
    stack: list[str] = []

    def record(fn: type, a: tuple[Any, ...], kw: dict[str, Any], out: Any) -> None:
        outs = out if isinstance(out, tuple) else (out,)
        versions = {id(t): t._version for t in (*a, *outs) if isinstance(t, Tensor)}
        calls.append(Call(fn, a, dict(kw), outs, stack[-1] if stack else "", versions))

    handles = []
    for path, module in model.named_modules():
        label = f"{path} ({type(module).__name__})" if path else type(module).__name__

        def enter(m: Any, _args: Any, label: str = label) -> None:
            stack.append(label)

        def leave(m: Any, _args: Any, _out: Any) -> None:
            if stack:
                stack.pop()

        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with observe_ops(record), lucid.no_grad():
            out = model(*args)
    finally:
        for h in handles:
            h.remove()
        for m, training in modes:
            m.training = training
    outputs = tuple(flatten(out))
    for o in outputs:
        if not isinstance(o, Tensor):
            raise TypeError(
                f"lucid.onnx.export: the model must return Tensors (or tuples/lists of them), "
                f"got {type(o).__name__}"
            )
    inputs = tuple(a for a in flatten(args) if isinstance(a, Tensor))
    return Trace(calls, inputs, outputs)
