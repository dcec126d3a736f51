"""Normal, Uniform and MultivariateNormal without torch: closed forms, moments of 20k draws,
finite-difference gradients (float64) and the reparameterised gradients of rsample."""

from __future__ import annotations

import math

import numpy as np
import pytest
from distribution_helpers import F64, N, close, t

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck


def test_normal_closed_forms() -> None:
    d = D.Normal(t([1.0, -2.0]), t([2.0, 0.5]))
    x = t([0.0, -2.0])
    expected = [
        -0.125 - math.log(2) - 0.5 * math.log(2 * math.pi),
        -math.log(0.5) - 0.5 * math.log(2 * math.pi),
    ]
    close(d.log_prob(x).numpy(), expected)
    close(d.entropy().numpy(), 0.5 + 0.5 * math.log(2 * math.pi) + np.log([2.0, 0.5]))
    close(d.cdf(t([1.0, -2.0])).numpy(), [0.5, 0.5])
    close(d.icdf(d.cdf(t([0.3, -1.7]))).numpy(), [0.3, -1.7], rtol=1e-9)
    close(d.variance.numpy(), [4.0, 0.25])
    assert d.mode is d.loc and d.stddev is d.scale


def test_uniform_closed_forms() -> None:
    d = D.Uniform(t([1.0, 0.0]), t([3.0, 0.5]))
    close(d.log_prob(t([2.0, 0.25])).numpy(), -np.log([2.0, 0.5]))
    close(d.cdf(t([2.0, 0.5])).numpy(), [0.5, 1.0])
    close(d.icdf(t([0.25, 0.5])).numpy(), [1.5, 0.25])
    close(d.entropy().numpy(), np.log([2.0, 0.5]))
    close(d.mean.numpy(), [2.0, 0.25])
    close(d.variance.numpy(), [4 / 12, 0.25 / 12])
    assert math.isnan(d.mode.numpy()[0])
    outside = D.Uniform(0.0, 1.0, validate_args=False).log_prob(t([1.0, -0.5]))
    assert np.isneginf(outside.numpy()).all()  # [low, high): high itself is outside


def _cov() -> np.ndarray:
    a = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.4, 0.7]])
    return a @ a.T


def test_mvn_parametrisations_agree_and_match_the_closed_form() -> None:
    cov = _cov()
    loc = t([0.5, -1.0, 2.0])
    ds = [
        D.MultivariateNormal(loc, t(cov)),
        D.MultivariateNormal(loc, precision_matrix=t(np.linalg.inv(cov))),
        D.MultivariateNormal(loc, scale_tril=t(np.linalg.cholesky(cov))),
    ]
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]])
    diff = x - loc.numpy()
    maha = np.einsum("bi,ij,bj->b", diff, np.linalg.inv(cov), diff)
    expected = -0.5 * (3 * math.log(2 * math.pi) + np.log(np.linalg.det(cov)) + maha)
    entropy = 0.5 * np.log(np.linalg.det(2 * math.pi * math.e * cov))
    for d in ds:
        close(d.log_prob(t(x)).numpy(), expected, rtol=1e-9)
        close(d.entropy().item(), entropy, rtol=1e-9)
        close(d.covariance_matrix.numpy(), cov, rtol=1e-9)
        close(d.precision_matrix.numpy(), np.linalg.inv(cov), rtol=1e-9)
        close(d.variance.numpy(), np.diag(cov), rtol=1e-9)


def test_mvn_with_a_diagonal_covariance_is_independent_normals() -> None:
    loc, scale = t([[0.0, 1.0], [2.0, -1.0]]), t([[1.0, 2.0], [0.5, 3.0]])
    mvn = D.MultivariateNormal(loc, scale_tril=lucid.diag_embed(scale))
    ind = D.Independent(D.Normal(loc, scale), 1)
    x = t([[[0.3, 0.1], [1.0, 2.0]]])
    close(mvn.log_prob(x).numpy(), ind.log_prob(x).numpy())
    close(mvn.entropy().numpy(), ind.entropy().numpy())
    p2 = D.MultivariateNormal(loc + 1, scale_tril=lucid.diag_embed(scale * 2))
    q2 = D.Independent(D.Normal(loc + 1, scale * 2), 1)
    close(D.kl_divergence(mvn, p2).numpy(), D.kl_divergence(ind, q2).numpy(), rtol=1e-9)


def test_mvn_argument_errors() -> None:
    loc = lucid.zeros(2)
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix"):
        D.MultivariateNormal(loc)
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(loc, lucid.eye(2), scale_tril=lucid.eye(2))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        D.MultivariateNormal(lucid.tensor(0.0), lucid.eye(1))
    with pytest.raises(ValueError, match="scale_tril must be at least two-dimensional"):
        D.MultivariateNormal(loc, scale_tril=lucid.ones(2))


def test_moments_of_20k_draws() -> None:
    lucid.manual_seed(0)
    normal = D.Normal(t([1.0, -3.0]), t([2.0, 0.5])).sample((N,)).numpy()
    close(normal.mean(0), [1.0, -3.0], rtol=0, atol=0.05)
    close(normal.std(0), [2.0, 0.5], rtol=0.03, atol=0)
    uniform = D.Uniform(t([1.0]), t([3.0])).sample((N,)).numpy()
    assert uniform.min() >= 1.0 and uniform.max() < 3.0
    close(uniform.mean(), 2.0, rtol=0, atol=0.02)
    close(uniform.var(), 4 / 12, rtol=0.03, atol=0)
    mvn = D.MultivariateNormal(t([0.5, -1.0, 2.0]), t(_cov())).sample((N,)).numpy()
    close(mvn.mean(0), [0.5, -1.0, 2.0], rtol=0, atol=0.05)
    close(np.cov(mvn.T), _cov(), rtol=0, atol=0.15)


def test_log_prob_entropy_cdf_and_kl_gradients_match_finite_differences() -> None:
    loc, scale = t([0.3, -1.0], True), t([1.5, 0.7], True)
    x = t([0.1, 0.4], True)
    assert gradcheck(lambda m, s, v: D.Normal(m, s).log_prob(v), (loc, scale, x))
    assert gradcheck(lambda m, s, v: D.Normal(m, s).cdf(v), (loc, scale, x))
    assert gradcheck(lambda m, s: D.Normal(m, s).entropy(), (loc, scale))
    assert gradcheck(lambda m, s: D.kl_divergence(D.Normal(m, s), D.Normal(1.0, 2.0)), (loc, scale))
    low, high = t([0.0, -1.0], True), t([1.0, 2.0], True)
    assert gradcheck(lambda a, b: D.Uniform(a, b).log_prob(t([0.5, 0.0])), (low, high))
    inner = D.Uniform(t(0.2), t(0.5))
    assert gradcheck(lambda a, b: D.kl_divergence(inner, D.Uniform(a, b)), (low, high))


def test_mvn_gradients_match_finite_differences() -> None:
    loc = t([0.5, -1.0, 2.0], True)
    a = t(np.linalg.cholesky(_cov()), True)
    x = t([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]])

    def cov(m: lucid.Tensor) -> lucid.Tensor:
        return m @ m.mT + lucid.eye(3, dtype=F64)

    assert gradcheck(lambda m, f: D.MultivariateNormal(m, cov(f)).log_prob(x), (loc, a))
    assert gradcheck(
        lambda m, f: D.MultivariateNormal(m, precision_matrix=cov(f)).log_prob(x), (loc, a)
    )
    assert gradcheck(lambda f: D.MultivariateNormal(loc, cov(f)).entropy(), (a,))
    q = D.MultivariateNormal(t([0.0, 1.0, 0.0]), t(_cov()))
    assert gradcheck(lambda m, f: D.kl_divergence(D.MultivariateNormal(m, cov(f)), q), (loc, a))


def test_rsample_gradients_are_the_reparameterisation() -> None:
    lucid.manual_seed(1)
    loc, scale = t([0.3, -1.0], True), t([1.5, 0.7], True)
    x = D.Normal(loc, scale).rsample((50,))
    x.sum().backward()
    eps = (x.detach().numpy() - loc.detach().numpy()) / scale.detach().numpy()
    close(loc.grad.numpy(), [50.0, 50.0])
    close(scale.grad.numpy(), eps.sum(0), rtol=1e-9)

    low, high = t([0.0, -1.0], True), t([1.0, 2.0], True)
    u = D.Uniform(low, high).rsample((50,))
    u.sum().backward()
    frac = (u.detach().numpy() - low.detach().numpy()) / (high - low).detach().numpy()
    close(low.grad.numpy(), (1 - frac).sum(0), rtol=1e-9)
    close(high.grad.numpy(), frac.sum(0), rtol=1e-9)


def test_mvn_rsample_gradients_are_the_reparameterisation() -> None:
    lucid.manual_seed(2)
    loc = t([0.5, -1.0, 2.0], True)
    tril = t(np.linalg.cholesky(_cov()), True)
    x = D.MultivariateNormal(loc, scale_tril=tril).rsample((40,))
    x.sum().backward()
    eps = np.linalg.solve(tril.detach().numpy(), (x.detach().numpy() - loc.detach().numpy()).T).T
    close(loc.grad.numpy(), [40.0] * 3)
    # d sum(L eps) / dL[i, j] = sum over draws of eps_j
    close(tril.grad.numpy(), np.tile(eps.sum(0), (3, 1)), rtol=1e-8, atol=1e-10)


def _seeded_rsample(make: object) -> object:
    """``make(*params).rsample((5,))`` with the same noise at every call (finite differences
    then see the reparameterised sample as a smooth function of the parameters)."""

    def draw(*params: lucid.Tensor) -> lucid.Tensor:
        lucid.manual_seed(11)
        return make(*params).rsample((5,))  # type: ignore[operator, no-any-return]

    return draw


def test_rsample_is_differentiable_by_finite_differences() -> None:
    loc, scale = t([0.3, -1.0], True), t([1.5, 0.7], True)
    assert gradcheck(_seeded_rsample(D.Normal), (loc, scale))  # type: ignore[arg-type]
    low, high = t([0.0, -1.0], True), t([1.0, 2.0], True)
    assert gradcheck(_seeded_rsample(D.Uniform), (low, high))  # type: ignore[arg-type]
    mean = t([0.5, -1.0, 2.0], True)
    tril = t(np.linalg.cholesky(_cov()), True)

    def mvn(m: lucid.Tensor, f: lucid.Tensor) -> D.MultivariateNormal:
        return D.MultivariateNormal(m, scale_tril=f.tril())

    assert gradcheck(_seeded_rsample(mvn), (mean, tril))  # type: ignore[arg-type]
