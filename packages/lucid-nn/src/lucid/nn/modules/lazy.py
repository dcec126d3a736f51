"""Lazy layers (``torch.nn.LazyLinear`` and friends): the input size is read from the first
input.

Until its first forward a lazy layer's weights are ``UninitializedParameter``s (and its running
statistics ``UninitializedBuffer``s): they appear in ``state_dict`` as such, and loading a
state_dict of a built layer materialises them with the loaded shapes. The first forward
materialises them from the input's shape, initialises them as the eager layer would, and turns
the layer into that eager class (``LazyLinear`` becomes ``Linear``), as torch's do.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import lucid
from lucid import Tensor
from lucid.autograd import no_grad
from lucid.nn.module import Module
from lucid.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from lucid.nn.modules.linear import Linear
from lucid.nn.modules.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from lucid.nn.parameter import Buffer, UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
]


class LazyModuleMixin:
    """Mixin of a module whose parameters are shaped by its first input
    (``torch.nn.modules.lazy.LazyModuleMixin``): subclasses define ``initialize_parameters``
    and ``cls_to_become``."""

    cls_to_become: type[Module] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        me: Any = self
        me._initialize_hook = me.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters, with_kwargs=True
        )

    def has_uninitialized_params(self) -> bool:
        """Whether any own parameter or buffer is still uninitialised."""
        me: Any = self
        return any(is_lazy(t) for t in (*me._parameters.values(), *me._buffers.values()))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise and initialise the parameters from the first input."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def state_dict(
        self, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """As ``Module.state_dict``, with uninitialised entries as themselves (torch's)."""
        me: Any = self
        out: OrderedDict[str, Tensor] = super().state_dict(  # type: ignore[misc]
            destination, prefix, keep_vars
        )
        for name, t in me._state_items():
            if is_lazy(t):
                out[prefix + name] = t
        return out

    def _sizes_from_loaded(self) -> None:
        """After a state_dict gave the weights their shapes: the size attributes to match."""

    @staticmethod
    def _infer_parameters(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if not module.has_uninitialized_params():
            module._sizes_from_loaded()
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


# -- Linear ----------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _sizes_from_loaded(self) -> None:
        self.in_features = int(self.weight.shape[1])

    def reset_parameters(self) -> None:
        """Linear's init, once the weights have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``in_features`` from ``input``'s last dim."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                weight: Any = self.weight
                weight.materialize((self.out_features, self.in_features))
                bias: Any = self.bias
                if bias is not None:
                    bias.materialize((self.out_features,))
                self.reset_parameters()


# -- convolutions ----------------------------------------------------------------------------
class _LazyConvMixin(LazyModuleMixin):
    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple[int, ...]
    transposed: bool
    weight: Any
    bias: Any
    _nd: int

    def _lazy_weights(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        me: Any = self
        me.weight = UninitializedParameter(device=device, dtype=dtype)
        me.out_channels = out_channels
        if bias:
            me.bias = UninitializedParameter(device=device, dtype=dtype)

    def _sizes_from_loaded(self) -> None:
        w = self.weight.shape
        self.in_channels = int(w[0] if self.transposed else w[1] * self.groups)

    def reset_parameters(self) -> None:
        """The eager layer's init, once the weights have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def _get_in_channels(self, input: Tensor) -> int:
        nd = self._nd + 1
        if input.ndim not in (nd, nd + 1):
            raise RuntimeError(
                f"Expected {nd}D (unbatched) or {nd + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {list(input.shape)}"
            )
        return int(input.shape[1] if input.ndim == nd + 1 else input.shape[0])

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``in_channels`` from ``input``'s channel dim."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups)
                else:
                    shape = (self.out_channels, self.in_channels // self.groups)
                self.weight.materialize((*shape, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(
        self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
        dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
        device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)  # fmt: skip
        self._lazy_weights(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(
        self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
        output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)  # fmt: skip
        self._lazy_weights(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """``Conv3d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """``ConvTranspose1d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """``ConvTranspose3d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose3d


# -- normalisation ---------------------------------------------------------------------------
class _LazyNorm(LazyModuleMixin):
    num_features: int
    affine: bool
    track_running_stats: bool
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any
    num_batches_tracked: Any

    def __init__(
        self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
        track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
        bias: bool = True,
    ) -> None:  # fmt: skip
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        me: Any = self
        if affine:
            me.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                me.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            me.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            me.running_var = UninitializedBuffer(device=device, dtype=dtype)
            me.num_batches_tracked = _counter(device)

    def _sizes_from_loaded(self) -> None:
        for t in (self.weight, self.running_mean):
            if t is not None:
                self.num_features = int(t.shape[0])

    def reset_parameters(self) -> None:
        """The eager layer's init, once the weights have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``num_features`` from ``input``'s dim 1 (torch's, batched or not)."""
        if self.has_uninitialized_params():
            self.num_features = int(input.shape[1])
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _counter(device: Any) -> Buffer:
    return Buffer(lucid.tensor(0, dtype=lucid.int64, device=device))


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """``BatchNorm1d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """``BatchNorm2d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """``BatchNorm3d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """``InstanceNorm1d`` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """``InstanceNorm2d`` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """``InstanceNorm3d`` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm3d
