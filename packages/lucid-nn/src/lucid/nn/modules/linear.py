"""Identity, Linear, Bilinear, Flatten, Unflatten; NonDynamicallyQuantizableLinear as in PyTorch."""

from __future__ import annotations

import math
from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.modules._params import empty_weight_and_bias
from lucid.nn.parameter import Parameter

__all__ = ["Bilinear", "Flatten", "Identity", "Linear", "Unflatten"]


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ W.T + b``, with PyTorch's default init.

    W ~ kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(in), 1/sqrt(in)); b ~ U(-1/sqrt(in), 1/sqrt(in)).

    >>> nn.Linear(3, 2)(lucid.randn(8, 3)).shape
    (8, 2)
    """

    weight: Parameter

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        shape = (out_features, in_features)
        empty_weight_and_bias(self, shape, out_features if bias else None, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Reinitialize weight and bias as at construction (Kaiming uniform, PyTorch's scheme)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        weight = self.weight  # read once: a parametrized weight is computed on each read
        if not (  # check_tensor's common case, without its call
            isinstance(input, Tensor)
            and weight is not None
            and input._backend is weight._backend
            and input._data.dtype == weight._data.dtype
        ):
            check_tensor("Linear", input, weight)
        shape = input._data.shape  # read once (per-call cost, docs/performance.md)
        if not shape or shape[-1] != self.in_features:
            raise ValueError(
                f"Linear expected input with {self.in_features} features in the last dim, got "
                f"{tuple(input.shape)}"
            )
        return F.linear(input, weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A plain Linear under PyTorch's name for ``MultiheadAttention.out_proj`` (keeps reprs and
    ``isinstance`` checks alike); not exported from ``lucid.nn``, as in PyTorch."""


class Bilinear(Module):
    """``y_k = x1^T A_k x2 + b_k``; A and b ~ U(-1/sqrt(in1), 1/sqrt(in1)) as in PyTorch."""

    weight: Parameter

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        empty_weight_and_bias(self, shape, out_features if bias else None, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Reinitialize weight and bias uniform on ``[-1/sqrt(in1_features),
        1/sqrt(in1_features)]``."""
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        weight = self.weight  # read once: a parametrized weight is computed on each read
        check_tensor("Bilinear", input1, weight)
        check_tensor("Bilinear", input2, weight)
        if input1.shape[-1:] != (self.in1_features,) or input2.shape[-1:] != (self.in2_features,):
            raise ValueError(
                f"Bilinear expected inputs with {self.in1_features} and {self.in2_features} "
                f"features in the last dim, got {tuple(input1.shape)} and {tuple(input2.shape)}"
            )
        return F.bilinear(input1, input2, weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        n = input.ndim
        if n == 0:
            result: Tensor = input.reshape(1)
            return result
        s, e = self.start_dim % n, self.end_dim % n
        if s > e:
            raise ValueError(
                f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for "
                f"input of shape {tuple(input.shape)}"
            )
        result = input.reshape(*input.shape[:s], -1, *input.shape[e + 1 :])
        return result

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        d = self.dim % input.ndim
        size = self.unflattened_size
        known = math.prod(s for s in size if s != -1)
        if -1 not in size and known != input.shape[d] or known == 0 or input.shape[d] % known:
            raise ValueError(
                f"Unflatten: cannot unflatten dim {self.dim} of size {input.shape[d]} into "
                f"{size} (input of shape {tuple(input.shape)})"
            )
        result: Tensor = input.reshape(*input.shape[:d], *size, *input.shape[d + 1 :])
        return result

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
