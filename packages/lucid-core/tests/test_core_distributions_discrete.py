"""Bernoulli and Categorical without torch: probs/logits agree, closed forms, frequencies of
20k draws, finite-difference gradients (float64) of log_prob, entropy and KL."""

from __future__ import annotations

import math

import numpy as np
import pytest
from distribution_helpers import N, close, t

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck


def test_bernoulli_probs_and_logits_describe_the_same_distribution() -> None:
    p = np.array([0.2, 0.5, 0.9])
    by_probs = D.Bernoulli(probs=t(p))
    by_logits = D.Bernoulli(logits=t(np.log(p / (1 - p))))
    x = t([1.0, 0.0, 1.0])
    expected = np.log([0.2, 0.5, 0.9])
    for d in (by_probs, by_logits):
        close(d.log_prob(x).numpy(), expected, rtol=1e-9)
        close(d.entropy().numpy(), -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-9)
        close(d.mean.numpy(), p, rtol=1e-9)
        close(d.variance.numpy(), p * (1 - p), rtol=1e-9)
    mode = by_probs.mode.numpy()
    assert mode[0] == 0.0 and math.isnan(mode[1]) and mode[2] == 1.0


def test_bernoulli_gradient_at_logit_zero_is_one_half() -> None:
    # NOTE: softplus is one op here; relu(x) + log1p(exp(-|x|)) would give slope 0 at x = 0
    logits = t([0.0], True)
    D.Bernoulli(logits=logits).log_prob(t([1.0])).sum().backward()
    close(logits.grad.numpy(), [0.5])


def test_bernoulli_support_and_draws() -> None:
    with pytest.raises(ValueError, match="within the support \\(Boolean\\(\\)\\)"):
        D.Bernoulli(0.3).log_prob(lucid.tensor(0.5))
    lucid.manual_seed(0)
    draws = D.Bernoulli(probs=t([0.1, 0.7])).sample((N,)).numpy()
    assert set(np.unique(draws)) <= {0.0, 1.0}
    close(draws.mean(0), [0.1, 0.7], rtol=0, atol=0.015)
    close(D.Bernoulli(probs=t([0.3, 0.6])).enumerate_support().numpy(), [[0, 0], [1, 1]])


def test_categorical_normalises_and_scores() -> None:
    probs = t([[1.0, 2.0, 7.0], [3.0, 3.0, 4.0]])
    d = D.Categorical(probs=probs)
    p = probs.numpy() / probs.numpy().sum(-1, keepdims=True)
    close(d.probs.numpy(), p)
    close(d.log_prob(t([2, 0])).numpy(), np.log([p[0, 2], p[1, 0]]))
    close(d.entropy().numpy(), -(p * np.log(p)).sum(-1))
    assert d.mode.tolist() == [2, 2]
    assert np.isnan(d.mean.numpy()).all() and d.mean.shape == (2,)
    by_logits = D.Categorical(logits=t(np.log(p) + 5.0))
    close(by_logits.probs.numpy(), p)
    close(by_logits.logits.numpy(), np.log(p))


def test_categorical_log_prob_broadcasts_values_against_the_batch() -> None:
    d = D.Categorical(logits=lucid.zeros(2, 4))
    assert d.log_prob(lucid.tensor([[0], [3]])).shape == (2, 2)
    assert d.log_prob(lucid.tensor([[0, 1], [2, 3], [1, 1]])).shape == (3, 2)
    assert d.enumerate_support().shape == (4, 2)
    assert d.enumerate_support(expand=False).shape == (4, 1)


def test_categorical_draw_frequencies() -> None:
    lucid.manual_seed(1)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = D.Categorical(probs=t(p)).sample((N,)).numpy()
    assert draws.dtype == np.int64
    close(np.bincount(draws, minlength=4) / N, p, rtol=0, atol=0.015)


def test_gradients_match_finite_differences() -> None:
    probs = t([0.2, 0.6, 0.9], True)
    logits = t([-1.0, 0.3, 2.0], True)
    x = t([1.0, 0.0, 1.0])
    assert gradcheck(lambda p: D.Bernoulli(probs=p).log_prob(x), (probs,))
    assert gradcheck(lambda z: D.Bernoulli(logits=z).entropy(), (logits,))
    q = D.Bernoulli(probs=t([0.5, 0.3, 0.1]))
    assert gradcheck(lambda p: D.kl_divergence(D.Bernoulli(probs=p), q), (probs,))
    cat_logits = t([[0.1, -0.5, 1.2], [2.0, 0.0, 0.3]], True)
    k = t([2, 1])
    assert gradcheck(lambda z: D.Categorical(logits=z).log_prob(k), (cat_logits,))
    assert gradcheck(lambda z: D.Categorical(logits=z).entropy(), (cat_logits,))
    cat_q = D.Categorical(probs=t([0.2, 0.3, 0.5]))
    assert gradcheck(lambda z: D.kl_divergence(D.Categorical(logits=z), cat_q), (cat_logits,))


def test_kl_matches_its_definition() -> None:
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.4, 0.2])
    kl = D.kl_divergence(D.Categorical(probs=t(p)), D.Categorical(probs=t(q)))
    close(kl.item(), (p * np.log(p / q)).sum())
    kl_b = D.kl_divergence(D.Bernoulli(0.3), D.Bernoulli(0.6)).item()
    close(kl_b, 0.3 * math.log(0.3 / 0.6) + 0.7 * math.log(0.7 / 0.4), rtol=1e-6, atol=1e-7)
