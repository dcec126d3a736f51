"""``biject_to`` and ``transform_to`` (``torch.distributions.constraint_registry``): from a
constraint to a transform whose codomain it is, for optimizing constrained parameters
unconstrained (``biject_to`` gives bijections, ``transform_to`` possibly cheaper maps).

>>> from lucid.distributions import biject_to, constraints
>>> t = biject_to(constraints.positive)
>>> float(t(lucid.tensor(0.0)))
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid.distributions import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

_Factory = Callable[[Any], transforms.Transform]


class ConstraintRegistry:
    """A map from constraint types to factories of transforms (keyed by type, as torch's)."""

    def __init__(self) -> None:
        self._registry: dict[type, _Factory] = {}

    def register(self, constraint: Any, factory: _Factory | None = None) -> Any:
        """Register ``factory`` for ``constraint`` (a Constraint subclass or instance); with no
        factory, a decorator."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, but got "
                f"{constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> transforms.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(c: Any) -> transforms.Transform:
    return transforms.identity_transform


def _positive(c: Any) -> transforms.Transform:
    return transforms.ExpTransform()


def _greater_than(c: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(c.lower_bound, 1)]
    )


def _less_than(c: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(c.upper_bound, -1)]
    )


def _interval(c: Any) -> transforms.Transform:
    lower, upper = c.lower_bound, c.upper_bound
    lower_is_0 = isinstance(lower, (int, float)) and lower == 0
    upper_is_1 = isinstance(upper, (int, float)) and upper == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(),
         transforms.AffineTransform(c.lower_bound, c.upper_bound - c.lower_bound)]
    )  # fmt: skip


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _real)
    _registry.register(constraints.positive, _positive)
    _registry.register(constraints.nonnegative, _positive)
    _registry.register(constraints.greater_than, _greater_than)
    _registry.register(constraints.greater_than_eq, _greater_than)
    _registry.register(constraints.less_than, _less_than)
    _registry.register(constraints.interval, _interval)
    _registry.register(constraints.half_open_interval, _interval)
    _registry.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())

biject_to.register(
    constraints.independent,
    lambda c: transforms.IndependentTransform(biject_to(c.base_constraint),
                                              c.reinterpreted_batch_ndims),
)  # fmt: skip
transform_to.register(
    constraints.independent,
    lambda c: transforms.IndependentTransform(transform_to(c.base_constraint),
                                              c.reinterpreted_batch_ndims),
)  # fmt: skip
biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(
    constraints.positive_definite, lambda c: transforms.PositiveDefiniteTransform()
)
transform_to.register(
    constraints.positive_semidefinite, lambda c: transforms.PositiveDefiniteTransform()
)
biject_to.register(
    constraints.cat,
    lambda c: transforms.CatTransform([biject_to(x) for x in c.cseq], c.dim, c.lengths),
)
transform_to.register(
    constraints.cat,
    lambda c: transforms.CatTransform([transform_to(x) for x in c.cseq], c.dim, c.lengths),
)
biject_to.register(
    constraints.stack, lambda c: transforms.StackTransform([biject_to(x) for x in c.cseq], c.dim)
)
transform_to.register(
    constraints.stack,
    lambda c: transforms.StackTransform([transform_to(x) for x in c.cseq], c.dim),
)
