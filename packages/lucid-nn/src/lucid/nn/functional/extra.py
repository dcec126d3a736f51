"""The rest of ``torch.nn.functional``'s names: the in-place activations (``relu_``...),
``rrelu``, ``gumbel_softmax``, ``channel_shuffle``, ``pdist`` and ``conv_tbc``."""

from __future__ import annotations

import numpy as np

import lucid
from lucid import Tensor
from lucid.nn.functional._util import check_float, maybe_inplace
from lucid.nn.functional.activation import (
    celu,
    elu,
    hardtanh,
    leaky_relu,
    relu,
    selu,
    softmax,
)
from lucid.nn.functional.activation import threshold as _threshold
from lucid.nn.functional.conv import conv1d

__all__ = [
    "celu_",
    "channel_shuffle",
    "conv_tbc",
    "elu_",
    "gumbel_softmax",
    "hardtanh_",
    "leaky_relu_",
    "native_channel_shuffle",
    "pdist",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu_",
    "threshold_",
]


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``."""
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``."""
    return selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``."""
    return _threshold(input, threshold, value, inplace=True)


def rrelu(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
    inplace: bool = False,
) -> Tensor:  # fmt: skip
    """Randomised leaky ReLU (Xu et al., 2015): in training each non-positive element is scaled
    by a slope drawn from ``U(lower, upper)`` (``lucid.rand``); in eval by their mean."""
    check_float("rrelu", input)
    if lower > upper:
        raise RuntimeError(
            f"Lower bound should be less than or equal to the upper bound, got lower={lower} "
            f"and upper={upper}"
        )
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = lucid.rand(*input.shape, dtype=input.dtype, device=input.device)
    slope = slope * (upper - lower) + lower
    out = lucid.where(input > 0, input, input * slope)
    return maybe_inplace(input, out, inplace)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Samples of the Gumbel-softmax distribution (Jang et al., 2016): ``softmax((logits + g)
    / tau)`` with Gumbel noise ``g`` (``lucid.rand``); ``hard`` returns one-hot samples whose
    gradient is the soft sample's (straight-through)."""
    u = lucid.rand(*logits.shape, dtype=logits.dtype, device=logits.device)
    tiny = float(np.finfo(np.float32).tiny)
    gumbels = -(-(u.clamp(min=tiny)).log()).clamp(min=tiny).log()
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = lucid.zeros_like(y).scatter(dim, index, lucid.ones_like(index, dtype=y.dtype))
    result: Tensor = y_hard - y.detach() + y
    return result


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``(N, C, *)`` across ``groups`` (ShuffleNet)."""
    if input.ndim < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")  # fmt: skip
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = input.shape[2:]
    out: Tensor = input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
    return out


native_channel_shuffle = channel_shuffle


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of an ``(N, M)`` input, for each pair ``i < j``
    in row-major order (``N (N - 1) / 2`` values)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    if i.size == 0:
        return lucid.zeros(0, dtype=input.dtype, device=input.device)
    ii = lucid.tensor(i, device=input.device)
    jj = lucid.tensor(j, device=input.device)
    diff = input[ii] - input[jj]
    result: Tensor = diff.norm(p, 1)
    return result


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution over a ``(time, batch, channels)`` input with a ``(kernel, C_in, C_out)``
    weight (torch's ``conv_tbc``)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")  # fmt: skip
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    y = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    out: Tensor = y.permute(2, 0, 1)
    return out
