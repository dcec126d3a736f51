"""Gradients of the convolutions with respect to their input and weight
(``torch.nn.grad``): ``conv{1,2,3}d_input`` and ``conv{1,2,3}d_weight``.

Each runs the convolution on a zero tensor of the asked shape and takes the vector-Jacobian
product with ``grad_output`` through lucid's autograd (the convolution is linear in each
argument, so the zeros do not matter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import lucid
from lucid import Tensor
from lucid.autograd import enable_grad
from lucid.nn.functional.conv import conv1d, conv2d, conv3d

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]


def _input_grad(conv: Callable[..., Tensor], input_size: Sequence[int], weight: Tensor,
                grad_output: Tensor, args: tuple[Any, ...]) -> Tensor:  # fmt: skip
    x = lucid.zeros(*input_size, dtype=grad_output.dtype, device=grad_output.device)
    x.requires_grad_(True)
    with enable_grad():
        out = conv(x, weight.detach(), None, *args)
        (g,) = lucid.autograd.grad(out, x, grad_output)
    result: Tensor = g
    return result


def _weight_grad(conv: Callable[..., Tensor], input: Tensor, weight_size: Sequence[int],
                 grad_output: Tensor, args: tuple[Any, ...]) -> Tensor:  # fmt: skip
    w = lucid.zeros(*weight_size, dtype=grad_output.dtype, device=grad_output.device)
    w.requires_grad_(True)
    with enable_grad():
        out = conv(input.detach(), w, None, *args)
        (g,) = lucid.autograd.grad(out, w, grad_output)
    result: Tensor = g
    return result


def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv1d`` with respect to an input of ``input_size``."""
    return _input_grad(conv1d, input_size, weight, grad_output, (stride, padding, dilation, groups))


def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                  groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv1d`` with respect to a weight of ``weight_size``."""
    return _weight_grad(
        conv1d, input, weight_size, grad_output, (stride, padding, dilation, groups)
    )


def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv2d`` with respect to an input of ``input_size``."""
    return _input_grad(conv2d, input_size, weight, grad_output, (stride, padding, dilation, groups))


def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                  groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv2d`` with respect to a weight of ``weight_size``."""
    return _weight_grad(
        conv2d, input, weight_size, grad_output, (stride, padding, dilation, groups)
    )


def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv3d`` with respect to an input of ``input_size``."""
    return _input_grad(conv3d, input_size, weight, grad_output, (stride, padding, dilation, groups))


def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                  groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv3d`` with respect to a weight of ``weight_size``."""
    return _weight_grad(
        conv3d, input, weight_size, grad_output, (stride, padding, dilation, groups)
    )
