"""Invertible transforms of random variables (``torch.distributions.transforms``): each maps
``x`` to ``y = t(x)``, inverts with ``t.inv(y)`` and gives ``log |dy/dx|`` as
``t.log_abs_det_jacobian(x, y)``; ``TransformedDistribution`` uses them to move densities.
Results are not cached (``cache_size`` is accepted and checked, as in torch)."""

from __future__ import annotations

import math
from typing import Any

from lucid._creation import eye, full_like, zeros_like
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.utils import (
    broadcast_shapes,
    clamp_probs,
    finfo,
    softplus,
    sum_rightmost,
    tril_matrix_to_vec,
    vec_to_tril_matrix,
)
from lucid.linalg import cholesky
from lucid.ops.join import cat as _cat
from lucid.ops.join import pad
from lucid.ops.join import stack as _stack


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

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with ``cache_size`` (lucid computes without a cache either way)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

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


def _clipped_sigmoid(x: Tensor) -> Tensor:
    tiny, eps = finfo(x.dtype, "tiny"), finfo(x.dtype, "eps")
    out: Tensor = x.sigmoid().clamp(min=tiny, max=1.0 - eps)
    return out


def _offsets(n: int, like: Tensor, start: int) -> Tensor:
    """``start - 1, start - 2, ..., start - n`` as ``like``'s dtype (the stick-breaking shifts)."""
    out: Tensor = start - like.new_ones(n).cumsum(-1)
    return out


class IndependentTransform(Transform):
    """``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost batch dims read as
    event dims: the log-Jacobian is summed over them."""

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size)  # fmt: skip

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)  # fmt: skip

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)  # fmt: skip

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dims to ``out_shape`` (a unit Jacobian)."""

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = tuple(int(d) for d in in_shape)
        self.out_shape = tuple(int(d) for d in out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Tensor) -> Tensor:
        batch = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        batch = tuple(y.shape[: y.dim() - len(self.out_shape)])
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x.new_zeros(tuple(x.shape[: x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape: Any) -> Any:
        return _reshape_shape(tuple(shape), self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        return _reshape_shape(tuple(shape), self.out_shape, self.in_shape)


def _reshape_shape(shape: tuple[int, ...], old: tuple[int, ...], new: tuple[int, ...]) -> Any:
    if len(shape) < len(old):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(old)
    if shape[cut:] != old:
        raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
    return shape[:cut] + new


class StickBreakingTransform(Transform):
    """Unconstrained ``K - 1`` vectors to the ``K``-simplex by stick breaking (bijective, unlike
    :class:`SoftmaxTransform`)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        z = _clipped_sigmoid(x - _offsets(x.shape[-1], x, x.shape[-1] + 1).log())
        z_cumprod = (1 - z).cumprod(-1)
        out: Tensor = pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        offset = _offsets(y_crop.shape[-1], y, y.shape[-1])
        sf = (1 - y_crop.cumsum(-1)).clamp(min=finfo(y.dtype, "tiny"))
        out: Tensor = y_crop.log() - sf.log() + offset.log()
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        x = x - _offsets(x.shape[-1], x, x.shape[-1] + 1).log()
        out: Tensor = (-x - softplus(-x) + y[..., :-1].log()).sum(-1)
        return out

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """A square matrix to a lower-triangular one with a positive diagonal (``exp`` of it)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        out: Tensor = x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()
        return out


class PositiveDefiniteTransform(Transform):
    """A square matrix to a positive definite one: ``L L^T`` of its lower-Cholesky image."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        low = LowerCholeskyTransform()(x)
        out: Tensor = low @ low.mT
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """A vector of ``D (D - 1) / 2`` reals to the Cholesky factor of a ``D x D`` correlation
    matrix (tanh, then stick breaking along each row), as torch's."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        eps = finfo(x.dtype, "eps")
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r**2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype, device=r.device)
        out: Tensor = r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        y_cumsum = 1 - (y * y).cumsum(-1)
        shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(shifted, diag=-1).sqrt()
        out: Tensor = (t.log1p() - (-t).log1p()) / 2
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor, intermediates: Any = None) -> Tensor:
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        out: Tensor = stick + tanh
        return out

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)`` (a copula's marginal step); the log-Jacobian is
    ``distribution.log_prob(x)``."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.distribution = distribution

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        support: constraints.Constraint = self.distribution.support
        return support

    def _call(self, x: Tensor) -> Tensor:
        out: Tensor = self.distribution.cdf(x)
        return out

    def _inverse(self, y: Tensor) -> Tensor:
        out: Tensor = self.distribution.icdf(y)
        return out

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        out: Tensor = self.distribution.log_prob(x)
        return out


class CatTransform(Transform):
    """``tseq[i]`` on the ``i``-th slice of ``lengths[i]`` entries along ``dim``."""

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )
        self.dim = dim

    @property
    def event_dim(self) -> int:
        dim: int = max(t.event_dim for t in self.transforms)
        return dim

    @property
    def length(self) -> int:
        """The size of ``dim`` the slices cover."""
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, v: Tensor, name: str) -> None:
        if not -v.dim() <= self.dim < v.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for {name} with {v.dim()} dimensions"
            )
        if v.size(self.dim) != self.length:
            raise AssertionError(
                f"{name}.size({self.dim}) = {v.size(self.dim)} must equal length {self.length}"
            )

    def _slices(self, v: Tensor) -> list[Tensor]:
        out, start = [], 0
        for length in self.lengths:
            out.append(v.narrow(self.dim, start, length))
            start += length
        return out

    def _call(self, x: Tensor) -> Tensor:
        self._check(x, "x")
        return _cat([t(s) for t, s in zip(self.transforms, self._slices(x), strict=True)],
                    self.dim)  # fmt: skip

    def _inverse(self, y: Tensor) -> Tensor:
        self._check(y, "y")
        return _cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y), strict=True)],
                    self.dim)  # fmt: skip

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        self._check(x, "x")
        self._check(y, "y")
        parts = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y), strict=True):
            part = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                part = sum_rightmost(part, self.event_dim - t.event_dim)
            parts.append(part)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return _cat(parts, dim)
        total: Any = sum(parts)
        return total  # type: ignore[no-any-return]

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` on the ``i``-th index along ``dim``."""

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _check(self, v: Tensor, name: str) -> None:
        if not -v.dim() <= self.dim < v.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for {name} with {v.dim()} dimensions"
            )
        if v.size(self.dim) != len(self.transforms):
            raise AssertionError(
                f"{name}.size({self.dim}) = {v.size(self.dim)} must equal len(transforms) "
                f"{len(self.transforms)}"
            )

    def _slice(self, z: Tensor) -> list[Tensor]:
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: Tensor) -> Tensor:
        self._check(x, "x")
        return _stack([t(s) for s, t in zip(self._slice(x), self.transforms, strict=True)],
                      self.dim)  # fmt: skip

    def _inverse(self, y: Tensor) -> Tensor:
        self._check(y, "y")
        return _stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms, strict=True)],
                      self.dim)  # fmt: skip

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        self._check(x, "x")
        self._check(y, "y")
        parts = [t.log_abs_det_jacobian(a, b) for a, b, t in
                 zip(self._slice(x), self._slice(y), self.transforms, strict=True)]  # fmt: skip
        return _stack(parts, self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


def _broadcast(shape: Any, *params: Tensor | float) -> tuple[int, ...]:
    shapes = [tuple(p.shape) for p in params if isinstance(p, Tensor)]
    return broadcast_shapes(tuple(shape), *shapes)


__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]  # fmt: skip
