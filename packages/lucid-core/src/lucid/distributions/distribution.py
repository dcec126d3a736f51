"""``Distribution``: the base class (``torch.distributions.Distribution``).

Shapes follow torch: a sample has shape ``sample_shape + batch_shape + event_shape``;
``log_prob`` returns ``sample_shape + batch_shape``. With validation on (the default, as
``python -O`` aside in torch), parameters are checked against ``arg_constraints`` at
construction and values against ``support`` before scoring, raising ValueError.
"""

from __future__ import annotations

import warnings
from functools import cached_property
from typing import Any, TypeVar

from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.ops._util import index_int

D = TypeVar("D", bound="Distribution")
Shape = tuple[int, ...]


def as_shape(shape: Any) -> Shape:
    """``sample_shape``/``batch_shape`` arguments as a tuple of ints (an int is one dim)."""
    one = index_int(shape)
    if one is not None:
        return (one,)
    return tuple(int(s) for s in shape)


class Distribution:
    """Abstract base of probability distributions (batch of ``batch_shape`` events)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution created afterwards."""
        if value not in (True, False):
            raise ValueError(f"expected a bool, got {value!r}")
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Any = (),
        event_shape: Any = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = as_shape(batch_shape)
        self._event_shape = as_shape(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{type(self)} does not define `arg_constraints`. Please set "
                "`arg_constraints = {}` or initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=3,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint) or self._is_lazy(param):
                continue
            value = getattr(self, param)
            where = f"of distribution {self!r} to satisfy the constraint {constraint!r}"
            _require(constraint.check(value), f"parameter {param}", value, where)

    def _is_lazy(self, param: str) -> bool:
        """A parameter computed on first use from another one (probs from logits...)."""
        return param not in self.__dict__ and isinstance(
            getattr(type(self), param, None), cached_property
        )

    def expand(self: D, batch_shape: Any, _instance: D | None = None) -> D:
        """A new distribution with batch dimensions expanded to ``batch_shape`` (no copy)."""
        raise NotImplementedError

    def _expanded(
        self: D, cls: type[D], batch_shape: Any, params: dict[str, Shape], _instance: D | None
    ) -> D:
        """``expand`` for ``cls``: each parameter of ``params`` (name -> the shape that follows
        the batch dims) that this instance holds is expanded; validation is not repeated."""
        new = self._get_checked_instance(cls, _instance)
        shape = as_shape(batch_shape)
        for name, tail in params.items():
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(shape + tail))
        Distribution.__init__(new, shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self: D, cls: type[D], _instance: D | None = None) -> D:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return type(self).__new__(type(self)) if _instance is None else _instance

    @property
    def batch_shape(self) -> Shape:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Shape:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Each parameter's name and the constraint its values must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint:
        """The constraint every sample satisfies (the set the distribution lives on)."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        """The mode (the most likely value) of the distribution."""
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A reparameterised sample: gradients flow back to the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} does not support rsample (has_rsample is False); use sample()"
        )

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability density or mass at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of the cumulative distribution function at ``value``."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy of the distribution, over its batch shape."""
        raise NotImplementedError

    def _extended_shape(self, sample_shape: Any = ()) -> Shape:
        return as_shape(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value: Tensor) -> None:
        """Raise ValueError unless ``value`` broadcasts with the shapes and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        self._check_sample_shape(tuple(value.shape))
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self)} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to "
                "turn off validation.",
                stacklevel=3,
            )
            return
        where = f"to be within the support ({support!r}) of the distribution {self!r}"
        _require(support.check(value), "value argument", value, where)

    def _check_sample_shape(self, actual: Shape) -> None:
        event = actual[len(actual) - len(self._event_shape) :]
        if event != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {actual} vs "
                f"{self._event_shape}."
            )
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual} vs {expected}."
                )

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {_brief(self.__dict__[k])}" for k in names)
        return f"{type(self).__name__}({args})"


def _brief(value: Any) -> Any:
    return value if not isinstance(value, Tensor) or value.numel() == 1 else tuple(value.shape)


def _require(valid: Tensor, what: str, value: Tensor, where: str) -> None:
    """torch's ValueError unless every element of ``valid`` is true."""
    if not bool(valid.all().item()):
        raise ValueError(
            f"Expected {what} ({type(value).__name__} of shape "
            f"{tuple(value.shape)}) {where}, but found invalid values:\n{value}"
        )
