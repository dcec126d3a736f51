"""Ops on the binary representation of floats: ``frexp`` (mantissa and exponent) and
``nextafter`` (the next representable value). Backends without them (MLX) compute them on the
host through their ``xp``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from lucid import dtypes
from lucid._creation import zeros_like
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import promote, require_tensors

OPS = OpTable(
    op("frexp", sample((3, 4)), sample((5,), domain="pos", tag="pos")),
    op("nextafter", sample((3, 4), (3, 4)), sample((3, 1), (4,), tag="broadcast")),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class FrexpResult(NamedTuple):
    mantissa: Tensor
    exponent: Tensor


class Frexp(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        mantissa, exponent = ctx.xp.frexp(a)
        exponent = ctx.backend.astype(exponent, dtypes.int32)
        ctx.mark_non_differentiable(exponent)
        ctx.save_for_backward(exponent)
        return mantissa, exponent

    @staticmethod
    def backward(ctx: Any, g: Tensor, _: Any) -> Any:
        (exponent,) = ctx.saved_tensors
        return g / (2.0 ** exponent.to(g.dtype))  # mantissa = x / 2^e, e piecewise constant


def frexp(input: Tensor) -> FrexpResult:  # noqa: A002
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``|mantissa|`` in
    [0.5, 1) (0 for 0), the exponent int32 (``torch.frexp``)."""
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {got}")
    mantissa, exponent = Frexp.apply(input)
    return FrexpResult(mantissa, exponent)


class NextAfter(Function):
    _node_name = "NextafterBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        return ctx.xp.nextafter(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: one ulp away from input: d/d input is 1 and d/d other 0, as torch's
        return g, (zeros_like(g) if ctx.needs_input_grad[1] else None)


def nextafter(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The next representable float after ``input`` towards ``other`` (``torch.nextafter``)."""
    require_tensors("nextafter", input, other)
    a, b = promote(input, other)
    assert isinstance(a, Tensor) and isinstance(b, Tensor)
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"\"nextafter_cpu\" not implemented for '{a.dtype}'")
    return NextAfter.apply(a, b)
