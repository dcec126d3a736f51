"""The rest of ``torch.nn``'s layers: ``RReLU``, ``ChannelShuffle``, ``CrossMapLRN2d``, the
deprecated ``NLLLoss2d`` and ``Container``."""

from __future__ import annotations

import warnings
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.nn.modules.loss import NLLLoss

__all__ = ["ChannelShuffle", "Container", "CrossMapLRN2d", "NLLLoss2d", "RReLU"]


class RReLU(Module):
    """Randomised leaky ReLU: random slopes in ``[lower, upper]`` in training, their mean in
    eval (Xu et al., 2015)."""

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` across ``groups`` (ShuffleNet)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class CrossMapLRN2d(Module):
    """Local response normalisation across channels of a 4-D input (the legacy layer)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        c = input.shape[1]
        window = lucid.tensor(_lrn_windows(c, self.size), dtype=input.dtype, device=input.device)
        sq = (input * input).permute(0, 2, 3, 1)  # channels last: (N, H, W, C) @ (C, C)
        scale = (sq @ window.t()).permute(0, 3, 1, 2) * (self.alpha / self.size) + self.k
        result: Tensor = input * scale ** (-self.beta)
        return result

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _lrn_windows(channels: int, size: int) -> list[list[float]]:
    """Which channels' squares each channel's scale sums, exactly as torch's legacy running
    sum does it (it never drops channel 0 once ``c > pre_pad``)."""
    pre_pad = int((size - 1) / 2 + 1)
    rows: list[list[float]] = []
    current = [0.0] * channels
    for j in range(min(pre_pad, channels)):
        current[j] += 1
    rows.append(list(current))
    for ch in range(1, channels):
        if ch < channels - pre_pad + 1:
            current[ch + pre_pad - 1] += 1
        if ch > pre_pad:
            current[ch - pre_pad] -= 1
        rows.append(list(current))
    return rows


class NLLLoss2d(NLLLoss):
    """Deprecated alias of ``NLLLoss`` (which takes ``(N, C, H, W)`` inputs itself)."""

    def __init__(
        self, weight: Tensor | None = None, size_average: bool | None = None,
        ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
    ) -> None:  # fmt: skip
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
            "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
            "more details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """Deprecated: a Module holding the modules given as keyword arguments."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn(
            "nn.Container is deprecated. All of it's functionality is now implemented in "
            "nn.Module. Subclass that instead.",
            stacklevel=2,
        )
        for key, value in kwargs.items():
            self.add_module(key, value)
