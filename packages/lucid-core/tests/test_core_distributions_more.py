"""The families added for issue 29 (Exponential .. Binomial) without torch: moments of 20k
seeded draws against the closed forms, reparameterised ``rsample`` gradients by finite
differences (float64, the same draws each call), ``expand`` and the parameter checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from distribution_helpers import N, close, t

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck

# (distribution, mean, variance) with finite moments; the tolerances below are about 4
# standard errors of a 20k-draw mean and variance for these parameters.
_MOMENTS: list[tuple[Callable[[], D.Distribution], float, float]] = [
    (lambda: D.Exponential(t(2.0)), 0.5, 0.25),
    (lambda: D.Laplace(t(1.0), t(0.5)), 1.0, 0.5),
    (lambda: D.Gumbel(t(0.5), t(2.0)), 0.5 + 2 * 0.5772156649015329, (math.pi * 2) ** 2 / 6),
    (lambda: D.LogNormal(t(0.1), t(0.4)), math.exp(0.18), math.expm1(0.16) * math.exp(0.36)),
    (lambda: D.HalfNormal(t(1.5)), 1.5 * math.sqrt(2 / math.pi), 2.25 * (1 - 2 / math.pi)),
    (lambda: D.Chi2(t(3.0)), 3.0, 6.0),
    (lambda: D.StudentT(t(9.0), t(1.0), t(2.0)), 1.0, 4 * 9 / 7),
    (lambda: D.Poisson(t(3.5)), 3.5, 3.5),
    (lambda: D.Geometric(t(0.3)), 1 / 0.3 - 1, (1 / 0.3 - 1) / 0.3),
    (lambda: D.Binomial(t(10.0), t(0.3)), 3.0, 2.1),
    (lambda: D.NegativeBinomial(t(4.0), t(0.4)), 4 * 0.4 / 0.6, 4 * 0.4 / 0.36),
    (lambda: D.Pareto(t(1.0), t(6.0)), 6 / 5, 6 / (25 * 4)),
    (lambda: D.InverseGamma(t(7.0), t(3.0)), 3 / 6, 9 / (36 * 5)),
    (
        lambda: D.Weibull(t(2.0), t(1.5)),
        2.0 * math.gamma(1 + 1 / 1.5),
        4.0 * (math.gamma(1 + 2 / 1.5) - math.gamma(1 + 1 / 1.5) ** 2),
    ),
]


@pytest.mark.parametrize("case", range(len(_MOMENTS)))
def test_sample_moments_match_the_closed_forms(case: int) -> None:
    make, mean, var = _MOMENTS[case]
    d = make()
    close(d.mean.numpy(), mean, rtol=1e-12, atol=0)
    close(d.variance.numpy(), var, rtol=1e-12, atol=0)
    lucid.manual_seed(case)
    x = d.sample((N,)).numpy()
    assert x.shape == (N,)
    close(x.mean(), mean, rtol=0, atol=4 * math.sqrt(var / N))
    close(x.var(), var, rtol=0.08, atol=0)
    assert bool(d.support.check(lucid.tensor(x)).all().item())


def test_heavy_tailed_samples_match_the_median_and_quartiles() -> None:
    lucid.manual_seed(1)
    cauchy = D.Cauchy(t(1.0), t(2.0)).sample((N,)).numpy()
    close(np.quantile(cauchy, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], rtol=0, atol=0.1)
    half = D.HalfCauchy(t(2.0)).sample((N,)).numpy()
    assert half.min() >= 0
    close(np.median(half), 2.0, rtol=0, atol=0.1)


def _rsample(make: Callable[..., D.Distribution]) -> Callable[..., lucid.Tensor]:
    def draw(*params: lucid.Tensor) -> lucid.Tensor:
        lucid.manual_seed(5)  # the same noise at every finite-difference step
        return make(*params).rsample((4,))

    return draw


@pytest.mark.parametrize(
    ("make", "params"),
    [
        (D.Exponential, ([0.7, 2.0],)),
        (D.Laplace, ([0.3, -1.0], [1.5, 0.7])),
        (D.Cauchy, ([0.3, -1.0], [1.5, 0.7])),
        (D.Gumbel, ([0.3, -1.0], [1.5, 0.7])),
        (D.LogNormal, ([0.3, -1.0], [1.5, 0.7])),
        (D.HalfNormal, ([1.5, 0.7],)),
        (D.HalfCauchy, ([1.5, 0.7],)),
        (lambda loc, scale: D.StudentT(4.0, loc, scale), ([0.3, -1.0], [1.5, 0.7])),
        (D.Weibull, ([1.5, 0.7], [0.8, 2.5])),
        (D.Pareto, ([1.5, 0.7], [0.8, 2.5])),
    ],
)
def test_rsample_gradients_match_finite_differences(make: Any, params: Any) -> None:
    leaves = tuple(t(p, True) for p in params)
    assert gradcheck(_rsample(make), leaves)


@pytest.mark.parametrize(
    ("make", "params", "value"),
    [
        (D.Exponential, ([0.7, 2.0],), [0.3, 1.2]),
        (D.Laplace, ([0.3, -1.0], [1.5, 0.7]), [0.1, 0.4]),
        (D.Cauchy, ([0.3, -1.0], [1.5, 0.7]), [0.1, 0.4]),
        (D.Gumbel, ([0.3, -1.0], [1.5, 0.7]), [0.1, 0.4]),
        (D.LogNormal, ([0.3, -1.0], [1.5, 0.7]), [0.1, 0.4]),
        (D.StudentT, ([2.5, 6.0], [0.3, -1.0], [1.5, 0.7]), [0.1, 0.4]),
        (D.Poisson, ([0.7, 2.0],), [0.0, 3.0]),
        (lambda p: D.Geometric(probs=p), ([0.2, 0.6],), [0.0, 3.0]),
        (lambda p: D.Binomial(6, logits=p), ([0.2, -0.6],), [0.0, 3.0]),
    ],
)
def test_log_prob_gradients_match_finite_differences(make: Any, params: Any, value: Any) -> None:
    leaves = tuple(t(p, True) for p in params)
    assert gradcheck(lambda *ps: make(*ps).log_prob(t(value)), leaves)


@pytest.mark.parametrize(
    "dist",
    [
        D.Exponential(t([1.0, 2.0])),
        D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
        D.Cauchy(t([0.0, 1.0]), 1.0),
        D.Gumbel(t([0.0, 1.0]), 1.0),
        D.LogNormal(t([0.0, 1.0]), 1.0),
        D.HalfNormal(t([1.0, 2.0])),
        D.HalfCauchy(t([1.0, 2.0])),
        D.Chi2(t([1.0, 2.0])),
        D.StudentT(t([3.0, 4.0])),
        D.Poisson(t([1.0, 2.0])),
        D.Geometric(logits=t([0.0, 1.0])),
        D.Binomial(5, probs=t([0.2, 0.4])),
        D.NegativeBinomial(t([2.0, 3.5]), logits=t([0.2, -0.4])),
        D.Weibull(t([1.0, 2.0]), t([0.5, 3.0])),
        D.Pareto(t([0.5, 1.0]), t([2.0, 3.0])),
        D.InverseGamma(t([2.5, 3.0]), t([1.0, 2.0])),
    ],
    ids=lambda d: type(d).__name__,
)
def test_expand_keeps_the_type_and_the_values(dist: D.Distribution) -> None:
    wide = dist.expand((3, 2))
    assert type(wide) is type(dist) and wide.batch_shape == (3, 2)
    value = t([1.0, 2.0])
    close(wide.log_prob(value).numpy(), np.broadcast_to(dist.log_prob(value).numpy(), (3, 2)))
    assert wide.sample().shape == (3, 2)


@pytest.mark.parametrize(
    "make",
    [
        lambda: D.Exponential(t([1.0, -1.0])),
        lambda: D.Laplace(0.0, 0.0),
        lambda: D.Cauchy(0.0, -1.0),
        lambda: D.Gumbel(math.nan, 1.0),
        lambda: D.LogNormal(0.0, -1.0),
        lambda: D.HalfNormal(-1.0),
        lambda: D.HalfCauchy(0.0),
        lambda: D.Chi2(-2.0),
        lambda: D.StudentT(-1.0),
        lambda: D.Poisson(-0.5),
        lambda: D.Geometric(probs=t([0.0, 0.5])),
        lambda: D.Geometric(probs=1.5),
        lambda: D.Binomial(-1, probs=0.5),
        lambda: D.Binomial(2.5, probs=0.5),
        lambda: D.Binomial(3, probs=0.5).log_prob(t(4.0)),
        lambda: D.Poisson(1.0).log_prob(t(0.5)),
        lambda: D.HalfNormal(1.0).log_prob(t(-0.5)),
        lambda: D.NegativeBinomial(2.0, probs=1.0),
        lambda: D.NegativeBinomial(-1.0, probs=0.5),
        lambda: D.Weibull(1.0, -2.0),
        lambda: D.Pareto(1.0, 2.0).log_prob(t(0.5)),
    ],
)
def test_invalid_parameters_and_values_raise(make: Callable[[], Any]) -> None:
    with pytest.raises(ValueError, match="Expected (parameter|value argument)"):
        make()


def test_kl_of_binomials_is_infinite_with_more_trials_in_p_and_refused_with_fewer() -> None:
    p = D.Binomial(t([5.0, 3.0]), probs=t([0.3, 0.3]))
    q = D.Binomial(t([3.0, 3.0]), probs=t([0.4, 0.4]))
    kl = D.kl_divergence(p, q).numpy()
    assert np.isposinf(kl[0]) and np.isfinite(kl[1]) and kl[1] > 0
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(q, p)


@pytest.mark.parametrize(
    ("make", "params"),
    [
        (D.Exponential, ([0.7, 2.0],)),
        (D.Laplace, ([0.3, -1.0], [1.5, 0.7])),
        (D.Gumbel, ([0.3, -1.0], [1.5, 0.7])),
        (D.Poisson, ([0.7, 2.0],)),
        (lambda p: D.Geometric(probs=p), ([0.2, 0.6],)),
    ],
)
def test_kl_gradients_match_finite_differences(make: Any, params: Any) -> None:
    leaves = tuple(t(p, True) for p in params)
    q = make(*(t(np.asarray(p) * 0.8 + 0.05) for p in params))
    assert gradcheck(lambda *ps: D.kl_divergence(make(*ps), q), leaves)


def test_one_hot_and_multinomial_samples_count_like_the_probabilities() -> None:
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    lucid.manual_seed(2)
    x = D.OneHotCategorical(probs=t(probs)).sample((N,)).numpy()
    assert x.shape == (N, 4) and (x.sum(-1) == 1).all()
    close(x.mean(0), probs, rtol=0, atol=4 * math.sqrt(0.25 / N))
    counts = D.Multinomial(7, probs=t(probs)).sample((N,)).numpy()
    assert counts.shape == (N, 4) and (counts.sum(-1) == 7).all()
    close(counts.mean(0), 7 * probs, rtol=0, atol=4 * math.sqrt(7 * 0.25 / N))
    close(counts.var(0), 7 * probs * (1 - probs), rtol=0.08, atol=0)


def test_relaxed_samples_lie_in_the_support_and_harden_as_temperature_falls() -> None:
    lucid.manual_seed(4)
    cold = D.RelaxedBernoulli(t(0.05), probs=t(0.3)).sample((N,)).numpy()
    assert ((cold > 0) & (cold < 1)).all()
    close((cold > 0.5).mean(), 0.3, rtol=0, atol=4 * math.sqrt(0.21 / N))
    simplex = D.RelaxedOneHotCategorical(t(0.05), probs=t([0.2, 0.8])).sample((N,)).numpy()
    close(simplex.sum(-1), np.ones(N), rtol=1e-12, atol=1e-12)
    close((simplex.argmax(-1) == 1).mean(), 0.8, rtol=0, atol=4 * math.sqrt(0.16 / N))


def test_relaxed_rsample_gradients_match_finite_differences() -> None:
    assert gradcheck(
        _rsample(lambda tmp, lg: D.RelaxedBernoulli(tmp, logits=lg)),
        (t(0.7, True), t([0.3, -1.0], True)),
    )
    assert gradcheck(
        _rsample(lambda tmp, lg: D.RelaxedOneHotCategorical(tmp, logits=lg)),
        (t(0.7, True), t([0.3, -1.0, 0.5], True)),
    )


@pytest.mark.parametrize(
    "dist",
    [
        D.OneHotCategorical(probs=t([0.2, 0.8])),
        D.Multinomial(3, probs=t([0.2, 0.8])),
        D.RelaxedBernoulli(t(0.5), probs=t(0.3)),
        D.RelaxedOneHotCategorical(t(0.5), probs=t([0.2, 0.8])),
        D.OneHotCategoricalStraightThrough(probs=t([0.2, 0.8])),
    ],
    ids=lambda d: type(d).__name__,
)
def test_expand_of_the_vector_families(dist: D.Distribution) -> None:
    wide = dist.expand((3,))
    assert type(wide) is type(dist) and wide.batch_shape == (3,)
    assert wide.event_shape == dist.event_shape
    lucid.manual_seed(0)
    x = wide.sample()
    assert x.shape == (3, *dist.event_shape)
    close(wide.log_prob(x).numpy(), dist.log_prob(x).numpy())


def test_vector_family_values_are_checked_against_their_support() -> None:
    with pytest.raises(ValueError, match="OneHot"):
        D.OneHotCategorical(probs=t([0.2, 0.8])).log_prob(t([1.0, 1.0]))
    with pytest.raises(ValueError, match=r"Multinomial\(upper_bound=3\)"):
        D.Multinomial(3, probs=t([0.2, 0.8])).log_prob(t([3.0, 1.0]))
    with pytest.raises(ValueError, match="Simplex"):
        D.RelaxedOneHotCategorical(t(0.5), probs=t([0.2, 0.8])).log_prob(t([0.5, 0.6]))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        D.Multinomial(t(3.0), probs=t([0.2, 0.8]))  # type: ignore[arg-type]


def test_matrix_constraints_check_each_matrix() -> None:
    c = D.constraints
    sym = t([[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [0.0, 1.0]]])
    assert c.square.check(sym).tolist() == [True, True]
    assert c.symmetric.check(sym).tolist() == [True, False]
    assert c.positive_semidefinite.check(t([[1.0, 1.0], [1.0, 1.0]])).item()
    assert not c.positive_semidefinite.check(t([[1.0, 2.0], [2.0, 1.0]])).item()
    assert c.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])).tolist() == [True, False]


def test_transformed_log_normal_agrees_with_lognormal_and_samples_through_transforms() -> None:
    loc, scale = t([0.2, -0.4]), t([0.5, 1.3])
    td = D.TransformedDistribution(D.Normal(loc, scale), [D.ExpTransform()])
    x = t([0.7, 2.5])
    close(td.log_prob(x).numpy(), D.LogNormal(loc, scale).log_prob(x).numpy())
    close(td.cdf(x).numpy(), D.LogNormal(loc, scale).cdf(x).numpy())
    assert td.has_rsample and td.expand((4, 2)).batch_shape == (4, 2)
    lucid.manual_seed(0)
    draws = td.sample((N,)).numpy()
    assert (draws > 0).all()
    close(np.log(draws).mean(0), [0.2, -0.4], rtol=0, atol=4 * 1.3 / math.sqrt(N))


def test_compose_and_inverse_transforms_round_trip() -> None:
    chain = D.ComposeTransform([D.AffineTransform(1.0, -2.0), D.TanhTransform()])
    x = t([-0.7, 0.1, 0.4])
    y = chain(x)
    close(chain.inv(y).numpy(), x.numpy(), rtol=1e-9, atol=1e-12)
    close(chain.inv.log_abs_det_jacobian(y, x).numpy(), -chain.log_abs_det_jacobian(x, y).numpy())
    assert chain.sign == -1 and chain.bijective
    affine = D.AffineTransform(t([0.0, 1.0]), t([2.0, -3.0]))
    assert affine.sign.tolist() == [1.0, -1.0]


def test_transformed_rsample_gradients_match_finite_differences() -> None:
    def make(loc: lucid.Tensor, scale: lucid.Tensor) -> D.Distribution:
        return D.TransformedDistribution(
            D.Normal(loc, scale), [D.SigmoidTransform(), D.AffineTransform(1.0, 3.0)]
        )

    assert gradcheck(_rsample(make), (t([0.3, -1.0], True), t([1.5, 0.7], True)))


def test_transformed_distribution_refuses_what_is_not_a_transform() -> None:
    with pytest.raises(ValueError, match="transforms must be a Transform or a list"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [lambda x: x])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match="Expected value argument"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), D.ExpTransform()).log_prob(t(-1.0))


def test_mixture_samples_have_the_mixture_mean_and_variance() -> None:
    mix = D.MixtureSameFamily(
        D.Categorical(probs=t([0.3, 0.7])), D.Normal(t([-2.0, 1.0]), t([0.5, 1.0]))
    )
    mean, var = 0.3 * -2 + 0.7 * 1, 0.3 * 0.25 + 0.7 * 1.0 + 0.3 * 0.7 * 9
    close(mix.mean.numpy(), mean, rtol=1e-12, atol=1e-12)
    close(mix.variance.numpy(), var, rtol=1e-12, atol=0)
    lucid.manual_seed(6)
    x = mix.sample((N,)).numpy()
    close(x.mean(), mean, rtol=0, atol=4 * math.sqrt(var / N))
    close(x.var(), var, rtol=0.05, atol=0)
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(probs=t([0.5, 0.5])), D.Normal(t([0.0, 1, 2]), 1.0))
    with pytest.raises(ValueError, match="needs to be an  instance"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t([0.0, 1]), 1.0))  # type: ignore[arg-type]
