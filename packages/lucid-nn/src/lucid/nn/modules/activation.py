"""Activation layers: one-line Module wrappers over ``lucid.nn.functional``."""

from __future__ import annotations

import warnings
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.module import Module
from lucid.nn.modules.activation_attention import MultiheadAttention as MultiheadAttention
from lucid.nn.parameter import Parameter

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "PReLU",
    "ReLU",
    "ReLU6",
    "SELU",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


class _Inplace(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """Applies ``max(0, x)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, self.inplace)


class ReLU6(_Inplace):
    """Applies ``min(max(0, x), 6)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.relu6(input, self.inplace)


class SELU(_Inplace):
    """Applies the scaled exponential linear unit elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)


class SiLU(_Inplace):
    """Applies ``x * sigmoid(x)`` elementwise (the swish function)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)


class Mish(_Inplace):
    """Applies ``x * tanh(softplus(x))`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)


class Hardswish(_Inplace):
    """Applies ``x * relu6(x + 3) / 6`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Hardsigmoid(_Inplace):
    """Applies ``relu6(x + 3) / 6`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class LeakyReLU(Module):
    """Applies ``x if x >= 0 else negative_slope * x`` elementwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """Applies ``x if x > 0 else alpha * (exp(x) - 1)`` elementwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class Hardtanh(Module):
    """Clamps the input elementwise to ``[min_val, max_val]``."""

    def __init__(
        self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
        min_value: float | None = None, max_value: float | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        if min_value is not None:  # torch's old names, accepted with its warning
            warnings.warn(
                "keyword argument `min_value` is deprecated and rename to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and rename to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        extra = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{extra}"


class Threshold(Module):
    """Replaces each element not greater than ``threshold`` with ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        extra = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{extra}"


class GELU(Module):
    """Applies the Gaussian Error Linear Unit, exact or with ``approximate="tanh"``."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """Applies ``log(1 + exp(beta * x)) / beta`` elementwise (linear above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """Applies ``x if |x| > lambd else 0`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """Applies ``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Sigmoid(Module):
    """Applies ``1 / (1 + exp(-x))`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    """Applies the hyperbolic tangent elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Softsign(Module):
    """Applies ``x / (1 + |x|)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """Applies ``x - tanh(x)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class LogSigmoid(Module):
    """Applies ``log(sigmoid(x))`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class _DimModule(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """Applies softmax along ``dim``: each slice is rescaled to sum to 1."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)  # torch's level


class Softmin(_DimModule):
    """Applies ``softmax(-x)`` along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)  # torch's level


class LogSoftmax(_DimModule):
    """Applies ``log(softmax(x))`` along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)  # torch's level


class Softmax2d(Module):
    """Softmax over the channel dim of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input of shape (N, C, H, W) or (C, H, W), got "
                f"{tuple(input.shape)}"
            )
        return F.softmax(input, -3)


class GLU(Module):
    """Gated linear unit: splits ``input`` in halves ``a, b`` along ``dim`` and returns ``a *
    sigmoid(b)``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """``x if x > 0 else a * x`` with a learned ``a`` (one, or one per channel)."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(lucid.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Reset the slopes to their initial value."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
