"""Matrix products: matmul (batched, 1-D cases as PyTorch)."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._util import promote


class Matmul(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return ctx.xp.matmul(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if need_a else None), (g * a if need_b else None)
        if a.ndim == 1:
            g2 = g.unsqueeze(-2)
            ga = (g2 @ b.mT).squeeze(-2) if need_a else None
            gb = a.unsqueeze(-1) @ g2 if need_b else None
            return ga, gb
        if b.ndim == 1:
            g2 = g.unsqueeze(-1)
            ga = g2 @ b.unsqueeze(-2) if need_a else None
            gb = (a.mT @ g2).squeeze(-1) if need_b else None
            return ga, gb
        ga = g @ b.mT if need_a else None
        gb = a.mT @ g if need_b else None
        return ga, gb


def matmul(a: Any, b: Any) -> Tensor:
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
            f"{b.ndim}D"
        )
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_rows(a)}x{ka} and {kb}x"
            f"{b.shape[-1] if b.ndim > 1 else 1})"
        )
    return Matmul.apply(a, b)  # type: ignore[no-any-return]


def _rows(a: Tensor) -> int:
    n = 1
    for s in a.shape[:-1]:
        n *= s
    return n
