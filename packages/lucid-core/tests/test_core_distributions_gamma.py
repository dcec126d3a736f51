"""Gamma, Beta and Dirichlet without torch: closed forms, moments of 20k draws, Monte-Carlo
KL, finite-difference gradients (float64), and the implicit reparameterisation of rsample
(the mean of the sample gradients is the gradient of the mean)."""

from __future__ import annotations

import math

import numpy as np
from distribution_helpers import N, close, t

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from lucid.distributions._standard_gamma import gamma_log_pdf, gamma_series, standard_gamma_grad


def test_gamma_closed_forms() -> None:
    d = D.Gamma(t([2.0, 1.0]), t([3.0, 0.5]))
    x = t([1.0, 2.0])
    close(d.log_prob(x).numpy(), [2 * math.log(3) - 3, math.log(0.5) - 1.0])
    close(d.entropy().numpy()[1], 1 - math.log(0.5))  # the exponential distribution
    close(d.mean.numpy(), [2 / 3, 2.0])
    close(d.variance.numpy(), [2 / 9, 4.0])
    close(d.mode.numpy(), [1 / 3, 0.0])
    # P(1, x) = 1 - exp(-x); P(3, x) = 1 - exp(-x) (1 + x + x^2 / 2)
    x = np.array([0.1, 1.0, 4.0, 25.0])
    close(D.Gamma(t(1.0), 1.0).cdf(t(x)).numpy(), 1 - np.exp(-x), rtol=1e-12)
    close(D.Gamma(t(3.0), 1.0).cdf(t(x)).numpy(), 1 - np.exp(-x) * (1 + x + x**2 / 2), rtol=1e-12)
    assert D.Gamma(2.0, 1.0).cdf(t([0.0])).item() == 0.0


def test_beta_and_dirichlet_closed_forms() -> None:
    x = np.array([0.2, 0.5, 0.9])
    close(D.Beta(t(2.0), t(3.0)).log_prob(t(x)).numpy(), np.log(12 * x * (1 - x) ** 2))
    close(D.Beta(t(1.0), t(1.0)).entropy().item(), 0.0)
    b = D.Beta(t([2.0, 0.5]), t([3.0, 0.5]))
    close(b.mean.numpy(), [0.4, 0.5])
    close(b.variance.numpy(), [6 / 150, 0.25 / 2])
    close(b.mode.numpy()[0], 1 / 3)
    flat = D.Dirichlet(t([1.0, 1.0, 1.0]))
    close(flat.log_prob(t([0.2, 0.3, 0.5])).item(), math.log(2))
    close(flat.entropy().item(), -math.log(2))
    c = np.array([2.0, 3.0, 5.0])
    d = D.Dirichlet(t(c))
    close(d.mean.numpy(), c / 10)
    close(d.variance.numpy(), c * (10 - c) / (100 * 11))
    close(d.mode.numpy(), (c - 1) / 7)
    close(D.Dirichlet(t([0.5, 0.2, 0.9])).mode.numpy(), [1.0, 0.0, 0.0])


def test_beta_is_a_two_category_dirichlet() -> None:
    beta = D.Beta(t([2.0, 0.7]), t([3.0, 1.5]))
    dirichlet = D.Dirichlet(t([[2.0, 3.0], [0.7, 1.5]]))
    x = t([0.3, 0.6])
    close(beta.log_prob(x).numpy(), dirichlet.log_prob(lucid.stack([x, 1 - x], -1)).numpy())
    close(beta.entropy().numpy(), dirichlet.entropy().numpy())


def test_moments_of_20k_draws() -> None:
    lucid.manual_seed(0)
    a, rate = np.array([0.3, 2.0, 20.0]), np.array([1.0, 2.0, 0.5])
    g = D.Gamma(t(a), t(rate)).sample((N,)).numpy()
    assert (g > 0).all()
    close(g.mean(0), a / rate, rtol=0.04, atol=0)
    close(g.var(0), a / rate**2, rtol=0.08, atol=0)
    b = D.Beta(t([0.5, 2.0]), t([0.5, 5.0])).sample((N,)).numpy()
    close(b.mean(0), [0.5, 2 / 7], rtol=0.02, atol=0)
    close(b.var(0), [0.125, 10 / (49 * 8)], rtol=0.05, atol=0)
    c = np.array([0.5, 2.0, 4.0])
    x = D.Dirichlet(t(c)).sample((N,)).numpy()
    close(x.sum(-1), np.ones(N), rtol=1e-12)
    close(x.mean(0), c / c.sum(), rtol=0.03, atol=0)
    close(x.var(0), c * (c.sum() - c) / (c.sum() ** 2 * (c.sum() + 1)), rtol=0.06, atol=0)


def _monte_carlo_kl(p: D.Distribution, q: D.Distribution) -> float:
    x = p.sample((N,))
    return float((p.log_prob(x) - q.log_prob(x)).mean().item())


def test_kl_matches_a_monte_carlo_estimate() -> None:
    lucid.manual_seed(2)
    pairs = [
        (D.Gamma(t(2.0), t(1.5)), D.Gamma(t(3.0), t(1.0))),
        (D.Beta(t(2.0), t(3.0)), D.Beta(t(1.0), t(1.5))),
        (D.Dirichlet(t([1.0, 2.0, 3.0])), D.Dirichlet(t([2.0, 2.0, 1.0]))),
    ]
    for p, q in pairs:
        kl = D.kl_divergence(p, q).item()
        assert kl > 0 and D.kl_divergence(p, p).item() == 0.0
        close(_monte_carlo_kl(p, q), kl, rtol=0.06, atol=0)


def test_gradients_match_finite_differences() -> None:
    a, rate = t([0.7, 2.5], True), t([1.3, 0.4], True)
    x = t([0.5, 3.0], True)
    assert gradcheck(lambda c, r, v: D.Gamma(c, r).log_prob(v), (a, rate, x))
    assert gradcheck(lambda c, r: D.Gamma(c, r).entropy(), (a, rate))
    assert gradcheck(lambda c, r, v: D.Gamma(c, r).cdf(v), (a, rate, x))
    assert gradcheck(lambda c, r: D.kl_divergence(D.Gamma(c, r), D.Gamma(1.0, 2.0)), (a, rate))
    c1, c0 = t([0.7, 2.5], True), t([1.5, 0.9], True)
    y = t([0.3, 0.8])
    assert gradcheck(lambda u, v: D.Beta(u, v).log_prob(y), (c1, c0))
    assert gradcheck(lambda u, v: D.Beta(u, v).entropy(), (c1, c0))
    assert gradcheck(lambda u, v: D.kl_divergence(D.Beta(u, v), D.Beta(2.0, 2.0)), (c1, c0))
    # NOTE: not at 1: xlogy's gradient in its first argument is 0 where it is 0 (as torch)
    c = t([[0.7, 2.0, 1.1], [3.0, 0.4, 1.3]], True)
    z = t([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    q = D.Dirichlet(t([1.0, 2.0, 3.0]))
    assert gradcheck(lambda k: D.Dirichlet(k).log_prob(z), (c,))
    assert gradcheck(lambda k: D.Dirichlet(k).entropy(), (c,))
    assert gradcheck(lambda k: D.kl_divergence(D.Dirichlet(k), q), (c,))


def test_the_sample_gradient_is_minus_dcdf_over_the_density() -> None:
    a = np.array([0.05, 0.4, 1.0, 3.0, 12.0, 150.0])
    x = np.array([1e-9, 0.1, 0.7, 4.0, 9.0, 160.0])
    h = 1e-6 * a
    dp_da = (gamma_series(a + h, x)[0] - gamma_series(a - h, x)[0]) / (2 * h)
    expected = -dp_da / np.exp(gamma_log_pdf(a, x))
    close(standard_gamma_grad(a, x), expected, rtol=1e-5, atol=1e-12)


def test_gamma_rsample_gradient_has_the_mean_of_the_moment_gradients() -> None:
    lucid.manual_seed(3)
    a = t([0.3, 2.0, 15.0], True)
    rate = t([1.0, 2.0, 0.5], True)
    z = D.Gamma(a, rate).rsample((N,))
    z.mean(0).sum().backward()
    a_, r_ = a.detach().numpy(), rate.detach().numpy()
    close(a.grad.numpy(), 1 / r_, rtol=0.04, atol=0)  # d E[z] / da = 1 / rate
    close(rate.grad.numpy(), -z.detach().numpy().mean(0) / r_, rtol=1e-9, atol=0)
    a.grad = None
    (D.Gamma(a, 1.0).rsample((N,)) ** 2).mean(0).sum().backward()
    close(a.grad.numpy(), 2 * a_ + 1, rtol=0.06, atol=0)  # E[z^2] = a (a + 1)


def test_beta_and_dirichlet_rsample_gradients_have_the_mean_gradient() -> None:
    lucid.manual_seed(4)
    c1, c0 = t([0.5, 2.0], True), t([1.5, 4.0], True)
    D.Beta(c1, c0).rsample((N,)).mean(0).sum().backward()
    u, v = c1.detach().numpy(), c0.detach().numpy()
    close(c1.grad.numpy(), v / (u + v) ** 2, rtol=0.04, atol=0)
    close(c0.grad.numpy(), -u / (u + v) ** 2, rtol=0.04, atol=0)
    c = t([0.5, 2.0, 4.0], True)
    w = t([1.0, -2.0, 0.5])
    (D.Dirichlet(c).rsample((N,)) * w).sum(-1).mean().backward()
    k = c.detach().numpy()
    total = k.sum()
    expected = w.numpy() / total - (w.numpy() * k).sum() / total**2  # d (w . c / sum c) / dc
    close(c.grad.numpy(), expected, rtol=0.05, atol=0.003)
