"""Normalisation layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm,
LocalResponseNorm, RMSNorm."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid.autograd import no_grad
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.functional.normalization import _layer_norm_checked
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.parameter import Buffer, Parameter
from lucid.ops.shape import ints_of

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LayerNorm",
    "LocalResponseNorm",
    "RMSNorm",
]


class _NormBase(Module):
    """Per-channel affine parameters and (optionally) running statistics as Buffers."""

    _dims: tuple[int, ...] = ()
    _dims_text = ""
    running_mean: Any
    running_var: Any
    num_batches_tracked: Any

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = {"dtype": dtype, "device": device}
        if affine:
            self.weight = Parameter(lucid.empty(num_features, **kw))
            if bias:
                self.bias = Parameter(lucid.empty(num_features, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.running_mean = Buffer(lucid.zeros(num_features, **kw))
            self.running_var = Buffer(lucid.ones(num_features, **kw))
            self.num_batches_tracked = Buffer(lucid.tensor(0, dtype=lucid.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input(self, input: Tensor) -> None:
        name = self._get_name()
        check_tensor(name, input, self.weight if self.affine else self.running_mean)
        if input.ndim not in self._dims:
            raise ValueError(
                f"{name} expected {self._dims_text} input, got {input.ndim}D input of shape "
                f"{tuple(input.shape)}"
            )
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{name} expected input with {self.num_features} channels, got {tuple(input.shape)}"
            )

    def _factor(self) -> float:
        """The running-stat update weight (momentum, or 1/n for a cumulative average)."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        return factor

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        factor = self._factor()
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep_stats = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep_stats else None,
            self.running_var if keep_stats else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs (Ioffe & Szegedy, 2015)."""

    _dims = (2, 3)
    _dims_text = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    _dims = (4,)
    _dims_text = "4D"


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs."""

    _dims = (5,)
    _dims_text = "5D"


class _InstanceNorm(_NormBase):
    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def forward(self, input: Tensor) -> Tensor:
        name = self._get_name()
        if input.ndim == self._dims[0]:  # unbatched
            result: Tensor = self.forward(input.unsqueeze(0)).squeeze(0)
            return result
        if input.ndim not in self._dims:
            raise ValueError(
                f"{name} expected {self._dims_text} input, got {input.ndim}D input of shape "
                f"{tuple(input.shape)}"
            )
        if input.shape[1] != self.num_features and self.affine:
            raise ValueError(
                f"{name} expected input with {self.num_features} channels, got {tuple(input.shape)}"
            )
        check_tensor(name, input, self.weight)
        factor = 0.0 if self.momentum is None else self.momentum
        use_input = self.training or not self.track_running_stats
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, use_input, factor, self.eps)  # fmt: skip


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over each channel of each sample of a ``(N, C, L)`` input."""

    _dims = (2, 3)
    _dims_text = "2D (unbatched) or 3D (batched)"


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over each channel of each sample of a ``(N, C, H, W)`` input."""

    _dims = (3, 4)
    _dims_text = "3D (unbatched) or 4D (batched)"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over each channel of each sample of a ``(N, C, D, H, W)`` input."""

    _dims = (4, 5)
    _dims_text = "4D (unbatched) or 5D (batched)"


# float32/float64 arrays: a floating input (``F.layer_norm``'s ``check_float``), read faster.
_PLAIN_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims (Ba et al., 2016)."""

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = ints_of(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kw = {"dtype": dtype, "device": device}
        if elementwise_affine:
            self.weight = Parameter(lucid.ones(*self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(lucid.zeros(*self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Reset the elementwise weight to ones and bias to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        weight, bias, normalized = self.weight, self.bias, self.normalized_shape  # read once
        check_tensor("LayerNorm", input, weight)
        nd = len(normalized)
        shape = tuple(input._data.shape)
        if shape[len(shape) - nd :] != normalized or len(shape) < nd:
            raise ValueError(
                f"LayerNorm expected input with trailing shape {normalized}, got {shape}"
            )
        if (
            weight is not None
            and input._data.dtype in _PLAIN_FLOATS
            and type(normalized) is tuple
            and weight._data.shape == normalized
            and (bias is None or bias._data.shape == normalized)
        ):  # every check of ``F.layer_norm`` passes: past them (issue 30)
            return _layer_norm_checked(input, weight, bias, nd, self.eps)
        return F.layer_norm(input, normalized, weight, bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalise groups of channels per sample (Wu & He, 2018)."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        kw = {"dtype": dtype, "device": device}
        if affine:
            self.weight = Parameter(lucid.ones(num_channels, **kw))
            if bias:
                self.bias = Parameter(lucid.zeros(num_channels, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Reset the affine weight to ones and bias to zeros."""
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        check_tensor("GroupNorm", input, self.weight)
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm expected input with {self.num_channels} channels, got "
                f"{tuple(input.shape)}"
            )
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class LocalResponseNorm(Module):
    """Normalise across ``size`` neighbouring channels (Krizhevsky et al., 2012)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        check_tensor("LocalResponseNorm", input)
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims (Zhang &
    Sennrich, 2019); ``eps=None`` is the machine epsilon of the input's dtype."""

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = ints_of(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(lucid.ones(*self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Reset the elementwise weight to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        check_tensor("RMSNorm", x, self.weight)
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
