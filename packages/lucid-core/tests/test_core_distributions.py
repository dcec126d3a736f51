"""lucid.distributions: the base class's contract (shapes, validation, expand, seeding) and
the KL registry, independent of any one family."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.distributions import constraints


def _t(*values: float) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=lucid.float64)


def test_a_bad_parameter_raises_value_error_with_torchs_wording() -> None:
    with pytest.raises(ValueError) as info:
        D.Normal(_t(0.0, 1.0), _t(1.0, -2.0))
    msg = str(info.value)
    assert msg.startswith("Expected parameter scale (Tensor of shape (2,)) of distribution Normal(")
    assert "to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values" in msg


@pytest.mark.parametrize(
    "make",
    [
        lambda: D.Bernoulli(probs=_t(1.5)),
        lambda: D.Categorical(probs=_t(0.5, -0.1)),
        lambda: D.Uniform(_t(2.0), _t(1.0)),
        lambda: D.Gamma(_t(0.0), _t(1.0)),
        lambda: D.Beta(_t(1.0), _t(-1.0)),
        lambda: D.Dirichlet(_t(1.0, 0.0)),
        lambda: D.MultivariateNormal(_t(0.0, 0.0), lucid.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda: D.MultivariateNormal(_t(0.0, 0.0), scale_tril=lucid.tensor([[1.0, 1.0], [0, 1]])),
    ],
)
def test_every_family_checks_its_parameters(make: object) -> None:
    with pytest.raises(ValueError, match="Expected parameter"):
        make()  # type: ignore[operator]


def test_validation_can_be_turned_off_per_instance_and_by_default() -> None:
    d = D.Normal(_t(0.0), _t(-1.0), validate_args=False)
    assert d.scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Gamma(-1.0, 1.0).concentration.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Gamma(-1.0, 1.0)


def test_values_outside_the_support_or_of_the_wrong_shape_are_refused() -> None:
    d = D.Normal(lucid.zeros(3), lucid.ones(3))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        d.log_prob(lucid.zeros(2))
    with pytest.raises(ValueError, match="must be a Tensor"):
        d.log_prob(0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="to be within the support \\(GreaterThanEq"):
        D.Gamma(1.0, 1.0).log_prob(lucid.tensor(-1.0))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        D.Dirichlet(lucid.ones(3)).log_prob(lucid.ones(2) / 2)
    with np.errstate(invalid="ignore"):
        unchecked = D.Gamma(2.0, 1.0, validate_args=False).log_prob(lucid.tensor(-1.0))
    assert math.isnan(unchecked.item())  # log(-1)


def test_either_probs_or_logits() -> None:
    for cls in (D.Bernoulli, D.Categorical):
        with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
            cls()
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            cls(probs=lucid.ones(2) / 2, logits=lucid.zeros(2))
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional"):
        D.Categorical(probs=lucid.tensor(1.0))


@pytest.mark.parametrize(
    ("dist", "batch", "event"),
    [
        (D.Normal(lucid.zeros(2, 3), 1.0), (2, 3), ()),
        (D.Normal(0.0, 1.0), (), ()),
        (D.Categorical(logits=lucid.zeros(2, 5)), (2,), ()),
        (D.Dirichlet(lucid.ones(4, 3)), (4,), (3,)),
        (D.MultivariateNormal(lucid.zeros(2, 3), lucid.eye(3)), (2,), (3,)),
        (D.Independent(D.Normal(lucid.zeros(4, 2, 3), 1.0), 2), (4,), (2, 3)),
        (D.Beta(lucid.ones(5), 2.0), (5,), ()),
    ],
)
def test_sample_shape_is_sample_plus_batch_plus_event(
    dist: D.Distribution, batch: tuple[int, ...], event: tuple[int, ...]
) -> None:
    assert dist.batch_shape == batch and dist.event_shape == event
    assert dist.sample().shape == batch + event
    assert dist.sample((7,)).shape == (7, *batch, *event)
    assert dist.sample((2, 1)).shape == (2, 1, *batch, *event)
    assert dist.log_prob(dist.sample((6,))).shape == (6, *batch)


def test_sampling_follows_lucid_manual_seed() -> None:
    dists = [D.Normal(0.0, 1.0), D.Gamma(lucid.ones(3), 1.0), D.Categorical(logits=lucid.zeros(4))]
    lucid.manual_seed(3)
    first = [d.sample((5,)).numpy() for d in dists]
    lucid.manual_seed(3)
    second = [d.sample((5,)).numpy() for d in dists]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_sample_carries_no_gradient_and_rsample_does() -> None:
    loc = lucid.zeros(3, requires_grad=True)
    d = D.Normal(loc, 1.0)
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad


@pytest.mark.parametrize("dist", [D.Bernoulli(0.3), D.Categorical(logits=lucid.zeros(3))])
def test_discrete_families_have_no_rsample(dist: D.Distribution) -> None:
    assert not dist.has_rsample
    with pytest.raises(NotImplementedError, match="does not support rsample"):
        dist.rsample()


@pytest.mark.parametrize(
    "dist",
    [
        D.Normal(_t(0.0, 1.0), _t(1.0, 2.0)),
        D.Uniform(_t(0.0, 1.0), _t(1.0, 2.0)),
        D.Bernoulli(logits=_t(0.0, 1.0)),
        D.Categorical(probs=lucid.ones(2, 3, dtype=lucid.float64)),
        D.Gamma(_t(1.0, 2.0), _t(1.0, 3.0)),
        D.Beta(_t(1.0, 2.0), _t(1.0, 3.0)),
        D.Dirichlet(lucid.ones(2, 3, dtype=lucid.float64)),
        D.MultivariateNormal(
            lucid.zeros(2, 3, dtype=lucid.float64), lucid.eye(3, dtype=lucid.float64)
        ),
        D.Independent(D.Normal(lucid.zeros(2, 3, dtype=lucid.float64), 1.0), 1),
    ],
)
def test_expand_adds_batch_dims_and_keeps_the_values(dist: D.Distribution) -> None:
    big = dist.expand((4, *dist.batch_shape))
    assert type(big) is type(dist) and big.batch_shape == (4, *dist.batch_shape)
    value = dist.sample()
    expected = dist.log_prob(value).numpy()
    got = big.log_prob(value).numpy()
    np.testing.assert_allclose(got, np.broadcast_to(expected, got.shape), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        big.entropy().numpy()[0], dist.entropy().numpy(), rtol=1e-12, atol=1e-12
    )


def test_independent_sums_the_reinterpreted_dims() -> None:
    lucid.manual_seed(0)
    loc, scale = lucid.randn(4, 3, dtype=lucid.float64), lucid.rand(4, 3, dtype=lucid.float64) + 1
    base = D.Normal(loc, scale)
    ind = D.Independent(base, 1)
    x = base.sample((2,))
    np.testing.assert_allclose(
        ind.log_prob(x).numpy(), base.log_prob(x).sum(-1).numpy(), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        ind.entropy().numpy(), base.entropy().sum(-1).numpy(), rtol=1e-12, atol=1e-12
    )
    assert repr(ind.support) == "IndependentConstraint(Real(), 1)"
    with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims <= "):
        D.Independent(base, 3)


def test_kl_divergence_raises_for_pairs_without_a_rule() -> None:
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Gamma",
    ):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))


def test_register_kl_prefers_the_most_specific_rule() -> None:
    class Wide(D.Normal):
        pass

    @D.register_kl(Wide, D.Normal)
    def _kl_wide(p: D.Normal, q: D.Normal) -> lucid.Tensor:
        return lucid.tensor(-1.0)

    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(0.0, 1.0)).item() == -1.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), Wide(1.0, 1.0)).item() == pytest.approx(
        0.5, rel=1e-6, abs=1e-7
    )
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_kl_infinite_where_q_misses_the_mass_of_p() -> None:
    assert math.isinf(D.kl_divergence(D.Uniform(0.0, 2.0), D.Uniform(0.0, 1.0)).item())
    assert math.isinf(D.kl_divergence(D.Bernoulli(0.5), D.Bernoulli(0.0)).item())
    p = D.Categorical(probs=lucid.tensor([0.5, 0.5]))
    assert math.isinf(D.kl_divergence(p, D.Categorical(probs=lucid.tensor([1.0, 0.0]))).item())
    zero = D.kl_divergence(D.Categorical(probs=lucid.tensor([1.0, 0.0])), p).item()
    assert zero == pytest.approx(math.log(2), rel=1e-6, abs=1e-7)


def test_constraints_check_elementwise_and_per_event() -> None:
    x = lucid.tensor([[0.2, 0.8], [0.5, 0.6]])
    assert constraints.simplex.check(x).tolist() == [True, False]
    assert constraints.unit_interval.check(x).all().item()
    assert constraints.positive_definite.check(lucid.eye(2)).item()
    assert not constraints.positive_definite.check(-lucid.eye(2)).item()
    assert constraints.lower_cholesky.check(lucid.tensor([[1.0, 0.0], [3.0, 2.0]])).item()
    assert repr(constraints.real_vector) == "IndependentConstraint(Real(), 1)"


def test_the_subpackage_imports_as_torch_distributions_does() -> None:
    import lucid.distributions as dist

    assert dist.Normal is D.Normal and dist.kl.kl_divergence is D.kl_divergence
    assert lucid.distributions is dist  # reachable from `import lucid`, as torch.distributions
