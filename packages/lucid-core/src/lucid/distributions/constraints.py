"""Constraints on parameters and values (``torch.distributions.constraints``).

``check(value)`` returns a bool tensor of the value's batch shape (an event of ``event_dim``
dimensions gives one answer); the repr is torch's, so validation errors read the same.
"""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.linalg import eigvalsh
from lucid.ops.join import cat as _cat
from lucid.ops.join import stack as _stack


class Constraint:
    """A region of values: ``check`` says, per event, whether a value lies in it."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A boolean tensor: whether each event of ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a support that depends on the parameters (it is never checked)."""

    def __init__(self, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a dependent constraint (its support depends on other
    parameters)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@dependent_property``: a property whose class-level value is a dependent constraint."""

    def __init__(self, fn: Any = None, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> _DependentProperty:
        return _DependentProperty(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with its ``reinterpreted_batch_ndims`` rightmost dims as one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            expected = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.ndim}")
        return result.reshape(result.shape[: result.ndim - n] + (-1,)).all(-1) if n else result

    def __repr__(self) -> str:
        n = self.reinterpreted_batch_ndims
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {n})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    """Constrain to the integers in ``[lower_bound, upper_bound]``."""

    is_discrete = True

    def __init__(self, lower_bound: int, upper_bound: int) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: int) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # False for NaNs.


class _GreaterThan(Constraint):
    """Constrain to the real half-line ``(lower_bound, inf)``."""

    def __init__(self, lower_bound: Tensor | float) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """Constrain to the real half-line ``[lower_bound, inf)``."""

    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    """Constrain to the real half-line ``(-inf, upper_bound)``."""

    def __init__(self, upper_bound: Tensor | float) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """Constrain to the real interval ``[lower_bound, upper_bound]``."""

    def __init__(self, lower_bound: Tensor | float, upper_bound: Tensor | float) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        bounds = f"lower_bound={self.lower_bound}, upper_bound={self.upper_bound}"
        return f"{type(self).__name__[1:]}({bounds})"


class _HalfOpenInterval(_Interval):
    """Constrain to the real interval ``[lower_bound, upper_bound)``."""

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (value.tril() == value).reshape(value.shape[:-2] + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower_triangular.check(value) & positive_diagonal


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        with no_grad():
            symmetric = ((value - value.mT).abs() <= 1e-6).reshape(value.shape[:-2] + (-1,))
            return symmetric.all(-1) & (eigvalsh(value) > 0).all(-1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        is_boolean = ((value == 0) | (value == 1)).all(-1)
        return is_boolean & (value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Nonnegative integer counts along the last dim that sum to at most ``upper_bound``."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Tensor | int) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Multinomial(upper_bound={self.upper_bound})"


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        full = value.new_full(value.shape[:-2], value.shape[-2] == value.shape[-1])
        return full.bool()


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = _Square.check(self, value)
        if not bool(square.all().item()):
            return square
        close = (value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs()
        return close.reshape(value.shape[:-2] + (-1,)).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        sym = _Symmetric.check(self, value)
        if not bool(sym.all().item()):
            return sym
        with no_grad():
            return (eigvalsh(value) >= 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit norm."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        eps = 2.220446049250313e-16 if value.dtype.itemsize == 8 else 1.1920928955078125e-07
        tol = eps * value.size(-1) * 10  # torch's tolerance (10: its fudge factor)
        row_norm = (value.detach() * value.detach()).sum(-1).sqrt()
        unit_rows = ((row_norm - 1.0).abs() <= tol).all(-1)
        out: Tensor = lower_cholesky.check(value) & unit_rows
        return out


class _Cat(Constraint):
    """``cseq[i]`` on the ``i``-th slice of ``lengths[i]`` entries along ``dim``."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})"
            )
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim: int = max(c.event_dim for c in self.cseq)
        return dim

    def check(self, value: Tensor) -> Tensor:
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for value with {value.dim()} dimensions"
            )
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths, strict=True):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` on the ``i``-th index along ``dim``."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim: int = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for value with {value.dim()} dimensions"
            )
        parts = [c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)]
        return _stack(parts, self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
one_hot = _OneHot()
multinomial = _Multinomial
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
corr_cholesky = _CorrCholesky()
cat = _Cat
stack = _Stack

__all__ = [
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "nonnegative",
    "nonnegative_integer", "positive", "positive_definite", "positive_integer", "real",
    "real_vector", "simplex", "unit_interval", "multinomial", "one_hot", "positive_semidefinite",
    "square", "symmetric", "cat", "corr_cholesky", "stack",
]  # fmt: skip
