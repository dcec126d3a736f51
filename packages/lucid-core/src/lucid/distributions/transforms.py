"""Invertible transforms of random variables (``torch.distributions.transforms``): each maps
``x`` to ``y = t(x)``, inverts with ``t.inv(y)`` and gives ``log |dy/dx|`` as
``t.log_abs_det_jacobian(x, y)``; ``TransformedDistribution`` uses them to move densities.
Results are not cached (``cache_size`` is accepted and checked, as in torch)."""

from __future__ import annotations

import math
from typing import Any

from lucid._creation import full_like, zeros_like
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.utils import (
    broadcast_shapes,
    clamp_probs,
    finfo,
    softplus,
    sum_rightmost,
)


class Transform:
    """The base class: subclasses define ``_call``, ``_inverse`` and
    ``log_abs_det_jacobian``, and their ``domain``, ``codomain``, ``bijective`` and ``sign``."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size

    @property
    def event_dim(self) -> int:
        """The number of rightmost dims that form one event (domain and codomain agree)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def sign(self) -> Any:
        """+1 or -1: whether the (elementwise, monotone) transform increases or decreases."""
        raise NotImplementedError

    @property
    def inv(self) -> Transform:
        """The inverse transform, ``y -> x``."""
        return _InverseTransform(self)

    def __call__(self, x: Tensor) -> Tensor:
        return self._call(x)

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """``log |det dy/dx|`` at the pair ``x``, ``y = self(x)``."""
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        """The shape of ``self(x)`` for ``x`` of ``shape``."""
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """The shape of ``self.inv(y)`` for ``y`` of ``shape``."""
        return shape

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """``t.inv``: ``t`` run backwards."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inverse(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{self._inv!r}.inv"


class ComposeTransform(Transform):
    """``parts`` applied in order (an empty list is the identity)."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size)
        for part in parts:
            if not isinstance(part, Transform):
                raise TypeError(f"Expected a list of Transforms, got {type(part).__name__}")
        self.parts = list(parts)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        """The constraint valid inputs satisfy: the first part's domain."""
        return self.parts[0].domain if self.parts else constraints.real

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        """The constraint outputs satisfy: the last part's codomain."""
        return self.parts[-1].codomain if self.parts else constraints.real

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign: Any = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        return ComposeTransform([p.inv for p in reversed(self.parts)])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        event_dim = self.domain.event_dim
        total: Any = 0
        for part, a, b in zip(self.parts, xs[:-1], xs[1:], strict=True):
            term = part.log_abs_det_jacobian(a, b)
            total = total + sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        out: Tensor = total
        return out

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, kept inside (0, 1) as torch clamps it."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return clamp_probs(x.sigmoid())

    def _inverse(self, y: Tensor) -> Tensor:
        y = y.clamp(min=finfo(y.dtype, "tiny"), max=1 - finfo(y.dtype, "eps"))
        out: Tensor = y.log() - (-y).log1p()
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = 0.5 * ((1 + y).log() - (1 - y).log())  # atanh
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)^2), written stably as torch does
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """``y = loc + scale * x``; with ``event_dim`` > 0 the rightmost dims form one event."""

    bijective = True

    def __init__(
        self,
        loc: Tensor | float,
        scale: Tensor | float,
        event_dim: int = 0,
        cache_size: int = 0,
    ) -> None:
        super().__init__(cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        """The real numbers (``event_dim`` rightmost dims as one event); also the codomain."""
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, Tensor):
            return self.scale.sign()
        return 1 if self.scale > 0 else -1 if self.scale < 0 else 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        same = []
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Tensor) or isinstance(b, Tensor):
                diff: Tensor = a - b  # type: ignore[assignment]
                same.append(bool((diff == 0).all().item()))
            else:
                same.append(a == b)
        return all(same)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = (y - self.loc) / self.scale
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, Tensor):
            result = scale.abs().log()
        else:
            result = full_like(x, math.log(abs(float(scale))))
        if self._event_dim:
            result = result.reshape(tuple(result.shape)[: result.ndim - self._event_dim] + (-1,))
            result = result.sum(-1)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return _broadcast(shape, self.loc, self.scale)

    def inverse_shape(self, shape: Any) -> Any:
        return _broadcast(shape, self.loc, self.scale)


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: ``inv`` returns ``y`` itself)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Tensor | float, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.exponent = exponent

    @property
    def sign(self) -> Any:
        e = self.exponent
        if isinstance(e, Tensor):
            return e.sign()
        return 1 if e > 0 else -1 if e < 0 else 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        a, b = self.exponent, other.exponent
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            diff: Tensor = a - b  # type: ignore[assignment]
            return bool((diff == 0).all().item())
        return a == b

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        out: Tensor = (self.exponent * y / x).abs().log()
        return out

    def forward_shape(self, shape: Any) -> Any:
        return _broadcast(shape, self.exponent)

    def inverse_shape(self, shape: Any) -> Any:
        return _broadcast(shape, self.exponent)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = (-(-y).expm1()).log() + y
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last dim (not bijective: ``inv`` is ``log``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.softmax(-1)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()


def _broadcast(shape: Any, *params: Tensor | float) -> tuple[int, ...]:
    shapes = [tuple(p.shape) for p in params if isinstance(p, Tensor)]
    return broadcast_shapes(tuple(shape), *shapes)


__all__ = [
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "TanhTransform", "Transform",
    "identity_transform",
]  # fmt: skip
