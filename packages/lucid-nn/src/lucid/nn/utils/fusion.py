"""Fold an eval-mode batch norm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): one layer computes what the pair did."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import lucid
from lucid import Tensor
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

ConvT = TypeVar("ConvT", bound=Module)
LinearT = TypeVar("LinearT", bound=Module)


def _check_eval(layer: Module, bn: Any) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv: ConvT, bn: Module, transpose: bool = False) -> ConvT:
    """A copy of ``conv`` whose weight and bias include ``bn`` (both in eval mode).

    ``transpose=True`` for a transposed convolution (output channels on dim 1 of its weight).
    """
    _check_eval(conv, bn)
    fused_conv = copy.deepcopy(conv)
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight,
        fused_conv.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused_conv


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The fused ``(weight, bias)`` Parameters: ``w * gamma / sqrt(var + eps)`` per output
    channel and ``(b - mean) * gamma / sqrt(var + eps) + beta``, in the conv's dtypes."""
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = lucid.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = lucid.ones_like(bn_rm)
    if bn_b is None:
        bn_b = lucid.zeros_like(bn_rm)
    bn_var_rsqrt = lucid.rsqrt(bn_rv + bn_eps)
    rest = [1] * (conv_w.ndim - 2)
    shape = [1, -1, *rest] if transpose else [-1, 1, *rest]
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(conv_weight_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(conv_bias_dtype)
    return (
        Parameter(fused_w.detach(), conv_w.requires_grad),
        Parameter(fused_b.detach(), conv_b.requires_grad),
    )


def fuse_linear_bn_eval(linear: LinearT, bn: Module) -> LinearT:
    """A copy of ``linear`` whose weight and bias include ``bn`` (both in eval mode); ``bn``
    has ``linear.out_features`` features or one."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )
    fused_linear = copy.deepcopy(linear)
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight,
        fused_linear.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
    )
    return fused_linear


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """The fused ``(weight, bias)`` Parameters of a linear layer followed by batch norm."""
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = lucid.zeros_like(bn_rm)
    bn_scale = bn_w * lucid.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(linear_bias_dtype)
    return (
        Parameter(fused_w.detach(), linear_w.requires_grad),
        Parameter(fused_b.detach(), linear_b.requires_grad),
    )
