"""``kl_divergence(p, q)`` and ``register_kl`` (``torch.distributions.kl``).

Rules are registered per pair of types; a call picks the most specific registered pair for
``(type(p), type(q))`` along both classes' MROs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from lucid._tensor import Tensor
from lucid.distributions.bernoulli import Bernoulli
from lucid.distributions.beta import Beta
from lucid.distributions.binomial import Binomial
from lucid.distributions.categorical import Categorical
from lucid.distributions.cauchy import Cauchy
from lucid.distributions.dirichlet import Dirichlet
from lucid.distributions.distribution import Distribution
from lucid.distributions.exponential import Exponential
from lucid.distributions.gamma import Gamma
from lucid.distributions.geometric import Geometric
from lucid.distributions.gumbel import Gumbel
from lucid.distributions.half_normal import HalfNormal
from lucid.distributions.independent import Independent
from lucid.distributions.laplace import Laplace
from lucid.distributions.log_normal import LogNormal
from lucid.distributions.multivariate_normal import (
    MultivariateNormal,
    batch_mahalanobis,
    half_log_det,
)
from lucid.distributions.normal import Normal
from lucid.distributions.poisson import Poisson
from lucid.distributions.uniform import Uniform
from lucid.distributions.utils import broadcast_shapes, softplus, sum_rightmost
from lucid.linalg import solve_triangular
from lucid.ops.elementwise import where
from lucid.ops.gamma import digamma, lgamma

KLFn = Callable[[Any, Any], Tensor]
F = TypeVar("F", bound=KLFn)
_KL_REGISTRY: dict[tuple[type, type], KLFn] = {}
_KL_MEMOIZE: dict[tuple[type, type], KLFn | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[F], F]:
    """Decorator registering ``fn(p, q)`` as ``KL(p || q)`` for instances of these types.

    >>> @register_kl(Normal, Normal)
    ... def kl_normal_normal(p, q): ...
    """
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(t, type) or not issubclass(t, Distribution):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fn: F) -> F:
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> KLFn | None:
    key = (type_p, type_q)
    if key not in _KL_MEMOIZE:
        mro_p, mro_q = type_p.__mro__, type_q.__mro__
        matches = [
            (mro_p.index(sp), mro_q.index(sq), fn)
            for (sp, sq), fn in _KL_REGISTRY.items()
            if issubclass(type_p, sp) and issubclass(type_q, sq)
        ]
        _KL_MEMOIZE[key] = min(matches, key=lambda m: (m[0], m[1]))[2] if matches else None
    return _KL_MEMOIZE[key]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched over the batch shape.

    Raises NotImplementedError when no rule is registered for the two types.
    """
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} "
            f"and q type {type(q).__name__}"
        )
    return fn(p, q)


def _infinite_where(mask: Tensor, value: Tensor) -> Tensor:
    out: Tensor = where(mask, math.inf, value)
    return out


def _zero_where(mask: Tensor, value: Tensor) -> Tensor:
    out: Tensor = where(mask, 0.0, value)
    return out


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    shape = t.shape
    t = _infinite_where((q.probs == 0).expand(shape), t)
    return _zero_where((p.probs == 0).expand(shape), t).sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event "
            f"shapes cannot be computed: {p.event_shape} vs {q.event_shape}"
        )
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    batch = broadcast_shapes(q_tril.shape[:-2], p_tril.shape[:-2]) + (n, n)
    term2 = solve_triangular(q_tril.expand(batch), p_tril.expand(batch), upper=False)
    term2 = term2.pow(2).sum((-2, -1))  # trace(X X^T)
    term3 = batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_log_det(q_tril) - half_log_det(p_tril) + 0.5 * (term2 + term3 - n)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_q - sum_p) * digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            "KL between Independent distributions with different "
            "reinterpreted_batch_ndims is not implemented"
        )
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - rate_ratio.log() - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    out: Tensor = -scale_ratio.log() + loc_abs_diff / q.scale + t3 - 1
    return out


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    euler = 0.57721566490153286060
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + lgamma(1 + ct1) - ct3).exp()
    out: Tensor = t1 + ct1 * euler + t3 - (1 + euler)
    return out


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    # KL is infinite where p has more trials than q; torch does not implement q having more
    if bool((p.total_count < q.total_count).any().item()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _infinite_where(p.total_count > q.total_count, kl)
