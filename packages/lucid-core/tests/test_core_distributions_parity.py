"""PyTorch parity for lucid.distributions: the same parameters give the same log_prob,
entropy, moments, cdf/icdf and KL divergences, and the same gradients of them (float64).

Each case builds its distribution from leaf tensors with one function that runs on both
``lucid.distributions`` and ``torch.distributions`` (the APIs are the same).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.distributions as ld
from lucid.distributions._standard_gamma import standard_gamma_grad

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

Arrays = dict[str, np.ndarray]
F64 = lucid.float64


def _positive(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(0.5, 3.0, shape)


def _spd_factor(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((3, 3)) * 0.5


def _params(name: str, seed: int) -> Arrays:
    rng = np.random.default_rng(seed)
    table: dict[str, Callable[[], Arrays]] = {
        "normal": lambda: {"loc": rng.standard_normal(3), "scale": _positive(rng, 3)},
        "uniform": lambda: {"low": rng.standard_normal(3), "width": _positive(rng, 3)},
        "bernoulli_probs": lambda: {"probs": rng.uniform(0.1, 0.9, 3)},
        "bernoulli_logits": lambda: {"logits": rng.standard_normal(3)},
        "categorical_probs": lambda: {"probs": _positive(rng, 2, 4)},
        "categorical_logits": lambda: {"logits": rng.standard_normal((2, 4))},
        "mvn_cov": lambda: {"loc": rng.standard_normal((2, 3)), "a": _spd_factor(rng)},
        "mvn_prec": lambda: {"loc": rng.standard_normal(3), "a": _spd_factor(rng)},
        "mvn_tril": lambda: {"loc": rng.standard_normal(3), "a": _spd_factor(rng)},
        "beta": lambda: {"c1": _positive(rng, 3), "c0": _positive(rng, 3)},
        "gamma": lambda: {"concentration": _positive(rng, 3), "rate": _positive(rng, 3)},
        "dirichlet": lambda: {"concentration": _positive(rng, 2, 4)},
        "independent": lambda: {"loc": rng.standard_normal((2, 3)), "scale": _positive(rng, 2, 3)},
        "exponential": lambda: {"rate": _positive(rng, 3)},
        "laplace": lambda: {"loc": rng.standard_normal(3), "scale": _positive(rng, 3)},
        "cauchy": lambda: {"loc": rng.standard_normal(3), "scale": _positive(rng, 3)},
        "gumbel": lambda: {"loc": rng.standard_normal(3), "scale": _positive(rng, 3)},
        "lognormal": lambda: {"loc": rng.standard_normal(3) * 0.3, "scale": _positive(rng, 3)},
        "halfnormal": lambda: {"scale": _positive(rng, 3)},
        "halfcauchy": lambda: {"scale": _positive(rng, 3)},
        "chi2": lambda: {"df": _positive(rng, 3) * 2},
        "studentt": lambda: {
            "df": np.array([0.7, 1.5, 4.0]),
            "loc": rng.standard_normal(3),
            "scale": _positive(rng, 3),
        },
        "poisson": lambda: {"rate": _positive(rng, 3) * 2},
        "geometric_probs": lambda: {"probs": rng.uniform(0.1, 0.9, 3)},
        "geometric_logits": lambda: {"logits": rng.standard_normal(3)},
        "binomial_probs": lambda: {"probs": rng.uniform(0.1, 0.9, 3)},
        "binomial_logits": lambda: {"logits": rng.standard_normal(3)},
        "onehot": lambda: {"probs": _positive(rng, 2, 4)},
        "negbinomial_probs": lambda: {
            "n": _positive(rng, 3) * 2,
            "probs": rng.uniform(0.1, 0.9, 3),
        },
        "negbinomial_logits": lambda: {
            "n": _positive(rng, 3) * 2,
            "logits": rng.standard_normal(3),
        },
        "weibull": lambda: {"scale": _positive(rng, 3), "c": _positive(rng, 3)},
        "inverse_gamma": lambda: {"c": _positive(rng, 3) + 1.0, "rate": _positive(rng, 3)},
        "pareto": lambda: {"scale": rng.uniform(0.1, 0.5, 3), "alpha": _positive(rng, 3) + 1.5},
        "multinomial": lambda: {"logits": rng.standard_normal((2, 4))},
        "relaxed_bernoulli": lambda: {"t": _positive(rng, 3), "logits": rng.standard_normal(3)},
        "relaxed_onehot": lambda: {"t": _positive(rng), "probs": _positive(rng, 2, 4)},
    }
    return table[name]()


def _spd(mod: Any, a: Any) -> Any:
    return a @ a.mT + mod.eye(3, dtype=a.dtype)


def _tril(mod: Any, a: Any) -> Any:
    return a.tril(-1) + mod.diag_embed(a.diagonal(dim1=-2, dim2=-1).exp())


def _build(name: str, mod: Any, p: dict[str, Any]) -> Any:
    dist = mod.distributions
    builders: dict[str, Callable[[], Any]] = {
        "normal": lambda: dist.Normal(p["loc"], p["scale"]),
        "uniform": lambda: dist.Uniform(p["low"], p["low"] + p["width"]),
        "bernoulli_probs": lambda: dist.Bernoulli(probs=p["probs"]),
        "bernoulli_logits": lambda: dist.Bernoulli(logits=p["logits"]),
        "categorical_probs": lambda: dist.Categorical(probs=p["probs"]),
        "categorical_logits": lambda: dist.Categorical(logits=p["logits"]),
        "mvn_cov": lambda: dist.MultivariateNormal(p["loc"], _spd(mod, p["a"])),
        "mvn_prec": lambda: dist.MultivariateNormal(p["loc"], precision_matrix=_spd(mod, p["a"])),
        "mvn_tril": lambda: dist.MultivariateNormal(p["loc"], scale_tril=_tril(mod, p["a"])),
        "beta": lambda: dist.Beta(p["c1"], p["c0"]),
        "gamma": lambda: dist.Gamma(p["concentration"], p["rate"]),
        "dirichlet": lambda: dist.Dirichlet(p["concentration"]),
        "independent": lambda: dist.Independent(dist.Normal(p["loc"], p["scale"]), 1),
        "exponential": lambda: dist.Exponential(p["rate"]),
        "laplace": lambda: dist.Laplace(p["loc"], p["scale"]),
        "cauchy": lambda: dist.Cauchy(p["loc"], p["scale"]),
        "gumbel": lambda: dist.Gumbel(p["loc"], p["scale"]),
        "lognormal": lambda: dist.LogNormal(p["loc"], p["scale"]),
        "halfnormal": lambda: dist.HalfNormal(p["scale"]),
        "halfcauchy": lambda: dist.HalfCauchy(p["scale"]),
        "chi2": lambda: dist.Chi2(p["df"]),
        "studentt": lambda: dist.StudentT(p["df"], p["loc"], p["scale"]),
        "poisson": lambda: dist.Poisson(p["rate"]),
        "geometric_probs": lambda: dist.Geometric(probs=p["probs"]),
        "geometric_logits": lambda: dist.Geometric(logits=p["logits"]),
        "binomial_probs": lambda: dist.Binomial(mod.tensor([5.0, 8.0, 12.0]), probs=p["probs"]),
        "binomial_logits": lambda: dist.Binomial(12, logits=p["logits"]),
        "onehot": lambda: dist.OneHotCategorical(probs=p["probs"]),
        "negbinomial_probs": lambda: dist.NegativeBinomial(p["n"], probs=p["probs"]),
        "negbinomial_logits": lambda: dist.NegativeBinomial(p["n"], logits=p["logits"]),
        "weibull": lambda: dist.Weibull(p["scale"], p["c"]),
        "pareto": lambda: dist.Pareto(p["scale"], p["alpha"]),
        "inverse_gamma": lambda: dist.InverseGamma(p["c"], p["rate"]),
        "multinomial": lambda: dist.Multinomial(7, logits=p["logits"]),
        "relaxed_bernoulli": lambda: dist.RelaxedBernoulli(p["t"], logits=p["logits"]),
        "relaxed_onehot": lambda: dist.RelaxedOneHotCategorical(p["t"], probs=p["probs"]),
    }
    return builders[name]()


def _value(name: str, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name.startswith("bernoulli"):
        return rng.integers(0, 2, (2, 3)).astype(np.float64)
    if name.startswith("categorical"):
        return rng.integers(0, 4, (3, 2)).astype(np.float64)
    if name == "dirichlet":
        g = rng.uniform(0.2, 1.0, (2, 4))
        return g / g.sum(-1, keepdims=True)
    if name == "onehot":
        return np.eye(4)[rng.integers(0, 4, (3, 2))]
    if name == "multinomial":
        return rng.multinomial(7, [0.1, 0.2, 0.3, 0.4], (3, 2)).astype(np.float64)
    if name == "relaxed_onehot":
        g = rng.uniform(0.05, 1.0, (3, 2, 4))
        return g / g.sum(-1, keepdims=True)
    if name in ("beta", "uniform", "relaxed_bernoulli"):
        return rng.uniform(0.05, 0.95, (2, 3))
    if name in ("gamma", "exponential", "lognormal", "halfnormal", "halfcauchy", "chi2"):
        return rng.uniform(0.1, 4.0, (2, 3))
    if name in ("weibull", "pareto", "inverse_gamma"):
        return rng.uniform(0.1, 4.0, (2, 3))
    if name in ("poisson",) or name.startswith(("geometric", "binomial", "negbinomial")):
        return rng.integers(0, 6, (2, 3)).astype(np.float64)
    return rng.standard_normal((2, 3))


def _uniform_value(p: dict[str, Any], u: Any) -> Any:
    return p["low"] + u * p["width"]


# The statistics each family defines (Categorical's mean/variance are NaN, its mode an index).
_STATS = {
    "normal": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "uniform": ("mean", "variance", "stddev", "cdf", "icdf"),
    "bernoulli_probs": ("mean", "variance", "stddev"),
    "bernoulli_logits": ("mean", "variance", "stddev"),
    "categorical_probs": ("mode",),
    "categorical_logits": ("mode",),
    "mvn_cov": ("mean", "variance", "mode", "scale_tril", "precision_matrix"),
    "mvn_prec": ("variance", "covariance_matrix", "scale_tril"),
    "mvn_tril": ("variance", "covariance_matrix", "precision_matrix"),
    "beta": ("mean", "variance", "stddev", "mode"),
    "gamma": ("mean", "variance", "stddev", "mode"),
    "dirichlet": ("mean", "variance", "mode"),
    "independent": ("mean", "variance", "mode"),
    "exponential": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "laplace": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "cauchy": ("mean", "variance", "mode", "cdf", "icdf"),
    "gumbel": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "lognormal": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "halfnormal": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "halfcauchy": ("mean", "variance", "mode", "cdf", "icdf"),
    "chi2": ("mean", "variance", "stddev", "mode"),  # torch has no cdf gradient in df
    "studentt": ("mean", "variance", "mode"),
    "poisson": ("mean", "variance", "mode"),
    "geometric_probs": ("mean", "variance", "mode"),
    "geometric_logits": ("mean", "variance", "mode"),
    "binomial_probs": ("mean", "variance", "mode"),
    "binomial_logits": ("mean", "variance", "mode"),
    "onehot": ("mean", "variance", "mode"),
    "negbinomial_probs": ("mean", "variance", "mode"),
    "negbinomial_logits": ("mean", "variance", "mode"),
    "weibull": ("mean", "variance", "stddev", "mode", "cdf", "icdf"),
    "pareto": ("mean", "variance", "mode", "cdf", "icdf"),
    "inverse_gamma": ("mean", "variance", "mode"),
    "multinomial": ("mean", "variance"),
    "relaxed_bernoulli": (),
    "relaxed_onehot": (),
}

# Families torch defines no entropy for.
_NO_ENTROPY = {
    "poisson", "binomial_probs", "binomial_logits", "relaxed_bernoulli", "relaxed_onehot",
    "negbinomial_probs", "negbinomial_logits",
    "multinomial",  # torch's enumerates binomial supports; lucid has no Multinomial.entropy yet
}  # fmt: skip


def _outputs(name: str, mod: Any, p: dict[str, Any], value: Any) -> list[Any]:
    d = _build(name, mod, p)
    if name == "uniform":
        value = _uniform_value(p, value)
    out = [d.log_prob(value)]
    if name not in _NO_ENTROPY:
        out.append(d.entropy())
    for stat in _STATS[name]:
        if stat == "cdf":
            out.append(d.cdf(value))
        elif stat == "icdf":
            out.append(d.icdf(mod.full_like(value, 0.3)))
        else:
            out.append(getattr(d, stat))
    return out


def _leaves(arrays: Arrays, mod: Any) -> dict[str, Any]:
    return {k: mod.tensor(v, dtype=mod.float64, requires_grad=True) for k, v in arrays.items()}


def _assert_same(lo: list[Any], to: list[Any], rtol: float, atol: float) -> None:
    assert len(lo) == len(to)
    for a, b in zip(lo, to, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def _assert_same_grads(
    lo: list[Any], to: list[Any], lp: dict[str, Any], tp: dict[str, Any], rtol: float, atol: float
) -> None:
    """The gradients of one random weighting of every float output, for each parameter."""
    rng = np.random.default_rng(3)
    lsum: Any = 0
    tsum: Any = 0
    for a, b in zip(lo, to, strict=True):
        if b.dtype.is_floating_point and b.requires_grad:
            w = rng.standard_normal(tuple(b.shape))
            lsum = lsum + (a * lucid.tensor(w)).sum()
            tsum = tsum + (b * torch.tensor(w)).sum()
    lsum.backward()
    tsum.backward()
    for k in tp:
        expected = tp[k].grad.numpy() if tp[k].grad is not None else np.zeros(tp[k].shape)
        got = lp[k].grad.numpy() if lp[k].grad is not None else np.zeros(tp[k].shape)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("name", sorted(_STATS))
def test_values_and_gradients_match_torch(name: str) -> None:
    arrays, value = _params(name, 0), _value(name)
    lp, tp = _leaves(arrays, lucid), _leaves(arrays, torch)
    lo = _outputs(name, lucid, lp, lucid.tensor(value, dtype=lucid.float64))
    to = _outputs(name, torch, tp, torch.tensor(value, dtype=torch.float64))
    _assert_same(lo, to, rtol=1e-9, atol=1e-10)
    _assert_same_grads(lo, to, lp, tp, rtol=1e-7, atol=1e-9)


_KL_CASES = [
    "normal",
    "bernoulli_probs",
    "bernoulli_logits",
    "categorical_probs",
    "categorical_logits",
    "mvn_cov",
    "mvn_prec",
    "mvn_tril",
    "beta",
    "gamma",
    "dirichlet",
    "independent",
    "exponential",
    "laplace",
    "cauchy",
    "gumbel",
    "lognormal",
    "halfnormal",
    "chi2",
    "poisson",
    "geometric_probs",
    "geometric_logits",
    "binomial_probs",
    "binomial_logits",
]


@pytest.mark.parametrize("name", _KL_CASES)
def test_kl_divergence_and_its_gradients_match_torch(name: str) -> None:
    pa, qa = _params(name, 0), _params(name, 1)
    lp, lq, tp, tq = _leaves(pa, lucid), _leaves(qa, lucid), _leaves(pa, torch), _leaves(qa, torch)
    lo = [ld.kl_divergence(_build(name, lucid, lp), _build(name, lucid, lq))]
    to = [torch.distributions.kl_divergence(_build(name, torch, tp), _build(name, torch, tq))]
    _assert_same(lo, to, rtol=1e-9, atol=1e-10)
    lboth = {**{f"p.{k}": v for k, v in lp.items()}, **{f"q.{k}": v for k, v in lq.items()}}
    tboth = {**{f"p.{k}": v for k, v in tp.items()}, **{f"q.{k}": v for k, v in tq.items()}}
    _assert_same_grads(lo, to, lboth, tboth, rtol=1e-7, atol=1e-9)


def test_kl_uniform_uniform_matches_torch_inside_and_outside_the_support() -> None:
    lo, to = [], []
    for mod, out in ((lucid, lo), (torch, to)):
        d = mod.distributions
        t = mod.tensor
        p = d.Uniform(t([0.0, 0.0]), t([1.0, 1.0]))
        out.append(d.kl_divergence(p, d.Uniform(t([-1.0, 0.5]), t([2.0, 1.0]))))
    _assert_same(lo, to, rtol=1e-6, atol=1e-7)


def test_gamma_cdf_and_its_value_gradient_match_torch() -> None:
    a = np.array([0.3, 1.0, 2.5, 9.0, 40.0])
    x = np.array([0.2, 1.5, 2.0, 14.0, 35.0])
    lx = lucid.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    lc = ld.Gamma(lucid.tensor(a), 1.0).cdf(lx)
    tc = torch.distributions.Gamma(torch.tensor(a), 1.0).cdf(tx)
    # torch's large-a asymptotic series is good to about 1e-9 (P(40, 35) = 0.2198095548253180
    # to 16 digits; lucid's series gives 0.2198095548253167, torch 0.2198095546103792)
    np.testing.assert_allclose(lc.detach().numpy(), tc.detach().numpy(), rtol=3e-9, atol=1e-12)
    lc.sum().backward()
    tc.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_gamma_sample_gradient_matches_torch_at_the_same_draws() -> None:
    torch.manual_seed(0)
    a = torch.tensor([0.05, 0.4, 1.0, 3.0, 12.0, 150.0], dtype=torch.float64)
    x = torch._standard_gamma(a.expand(200, 6).contiguous()).clamp(min=1e-300)
    expected = torch._standard_gamma_grad(a.expand(200, 6), x).numpy()
    got = standard_gamma_grad(a.expand(200, 6).numpy(), x.numpy())
    # torch's own gradient is an approximation (series, Rice saddle point, rational fits)
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=1e-8)


def _message(mod: Any, make: Callable[[Any], Any]) -> str:
    with pytest.raises(ValueError) as info:
        make(mod)
    # lucid's shapes are tuples where torch prints torch.Size([...])
    return re.sub(r"torch\.Size\(\[([^\]]*)\]\)", _as_tuple, str(info.value))


def _as_tuple(m: re.Match[str]) -> str:
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, -2.0])),
        lambda m: m.distributions.Normal(0.0, -1.0),
        lambda m: m.distributions.Gamma(1.0, 1.0).log_prob(m.tensor([-1.0])),
        lambda m: m.distributions.Normal(m.zeros(3), 1.0).log_prob(m.zeros(2)),
        lambda m: m.distributions.Bernoulli(probs=m.tensor([0.5]), logits=m.tensor([0.0])),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
        lambda m: m.distributions.Categorical(probs=m.tensor([0.5, 0.5])).log_prob(m.tensor(2)),
        lambda m: m.distributions.Exponential(m.tensor([1.0, -1.0])),
        lambda m: m.distributions.Laplace(0.0, 0.0),
        lambda m: m.distributions.StudentT(m.tensor([2.0]), 0.0, -1.0),
        lambda m: m.distributions.Poisson(m.tensor([-0.5])),
        lambda m: m.distributions.Poisson(2.0).log_prob(m.tensor([0.5])),
        lambda m: m.distributions.Geometric(probs=m.tensor([0.0, 0.5])),
        lambda m: m.distributions.Binomial(m.tensor([-1.0]), probs=m.tensor([0.5])),
        lambda m: m.distributions.HalfNormal(m.tensor([1.0])).log_prob(m.tensor([-0.5])),
        lambda m: m.distributions.Chi2(m.tensor([-2.0])),
    ],
)
def test_validation_errors_read_as_torchs(make: Callable[[Any], Any]) -> None:
    assert _message(lucid, make) == _message(torch, make)


def _transformed(mod: Any, p: dict[str, Any]) -> list[Any]:
    d = mod.distributions
    base = d.Normal(p["loc"], p["scale"])
    return [
        d.TransformedDistribution(base, [d.AffineTransform(0.5, -2.0), d.ExpTransform()]),
        d.TransformedDistribution(base, d.ComposeTransform([d.TanhTransform()])),
        d.TransformedDistribution(base, [d.SigmoidTransform(), d.AffineTransform(p["a"], p["b"])]),
        d.TransformedDistribution(base, [d.AffineTransform(p["a"], p["b"], event_dim=1)]),
    ]


_TRANSFORMED_VALUES = [[0.3, 1.2, 2.0], [-0.3, 0.2, 0.9], [1.5, 3.2, 6.0], [0.3, 1.2, 2.0]]


@pytest.mark.parametrize("case", range(4))
def test_transformed_distribution_matches_torch(case: int) -> None:
    rng = np.random.default_rng(case)
    arrays = {
        "loc": rng.standard_normal(3),
        "scale": _positive(rng, 3),
        "a": np.array([1.0, 2.0, 3.0]),
        "b": np.array([2.0, 3.0, 4.0]),
    }
    lp, tp = _leaves(arrays, lucid), _leaves(arrays, torch)
    ld_, td = _transformed(lucid, lp)[case], _transformed(torch, tp)[case]
    assert ld_.batch_shape == tuple(td.batch_shape) and ld_.event_shape == tuple(td.event_shape)
    assert repr(ld_.support) == repr(td.support) and ld_.has_rsample == td.has_rsample
    value = np.array(_TRANSFORMED_VALUES[case])
    lo = [ld_.log_prob(lucid.tensor(value))]
    to = [td.log_prob(torch.tensor(value))]
    if case < 3:
        lo += [ld_.cdf(lucid.tensor(value)), ld_.icdf(lucid.tensor([0.2, 0.5, 0.7], dtype=F64))]
        to += [
            td.cdf(torch.tensor(value)),
            td.icdf(torch.tensor([0.2, 0.5, 0.7], dtype=torch.float64)),
        ]
    _assert_same(lo, to, rtol=1e-9, atol=1e-10)
    _assert_same_grads(lo, to, lp, tp, rtol=1e-7, atol=1e-9)


def test_transforms_match_torch_forward_inverse_and_jacobian() -> None:
    x = np.array([-1.5, -0.2, 0.4, 2.0])
    for name, args in (
        ("ExpTransform", ()),
        ("SigmoidTransform", ()),
        ("TanhTransform", ()),
        ("SoftplusTransform", ()),
    ):
        lt, tt = getattr(ld, name)(*args), getattr(torch.distributions, name)(*args)
        lx, tx = lucid.tensor(x), torch.tensor(x)
        ly, ty = lt(lx), tt(tx)
        np.testing.assert_allclose(ly.numpy(), ty.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(lt.inv(ly).numpy(), tt.inv(ty).numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(
            lt.log_abs_det_jacobian(lx, ly).numpy(),
            tt.log_abs_det_jacobian(tx, ty).numpy(),
            rtol=1e-12,
            atol=1e-14,
        )
        assert lt.sign == tt.sign and lt.bijective == tt.bijective
        assert repr(lt.codomain) == repr(tt.codomain)


def test_power_softmax_and_abs_transforms_match_torch() -> None:
    x = np.array([0.3, 1.2, 2.5])
    lx, tx = lucid.tensor(x), torch.tensor(x)
    lt, tt = ld.PowerTransform(2.5), torch.distributions.PowerTransform(torch.tensor(2.5))
    ly, ty = lt(lx), tt(tx)
    np.testing.assert_allclose(ly.numpy(), ty.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lt.inv(ly).numpy(), x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        lt.log_abs_det_jacobian(lx, ly).numpy(),
        tt.log_abs_det_jacobian(tx, ty).numpy(),
        rtol=1e-12,
        atol=1e-14,
    )
    sm, tsm = ld.SoftmaxTransform(), torch.distributions.SoftmaxTransform()
    np.testing.assert_allclose(sm(lx).numpy(), tsm(tx).numpy(), rtol=1e-12, atol=1e-14)
    ab, tab = ld.AbsTransform(), torch.distributions.AbsTransform()
    np.testing.assert_allclose(ab(-lx).numpy(), tab(-tx).numpy(), rtol=0, atol=0)
    assert repr(sm.codomain) == repr(tsm.codomain) and repr(ab.codomain) == repr(tab.codomain)


def test_straight_through_rsample_has_the_probs_gradient_of_torch() -> None:
    probs = np.array([0.2, 0.3, 0.5])
    weights = np.array([1.0, -2.0, 0.5])
    lp = lucid.tensor(probs, requires_grad=True)
    tp = torch.tensor(probs, requires_grad=True)
    ls = ld.OneHotCategoricalStraightThrough(probs=lp).rsample()
    ts = torch.distributions.OneHotCategoricalStraightThrough(probs=tp).rsample()
    (ls * lucid.tensor(weights)).sum().backward()
    (ts * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(lp.grad.numpy(), tp.grad.numpy(), rtol=1e-12, atol=1e-14)


def _mixture(mod: Any, p: dict[str, Any], multivariate: bool) -> Any:
    d = mod.distributions
    mix = d.Categorical(logits=p["w"])
    comp: Any = d.Normal(p["loc"], p["scale"])
    if multivariate:
        comp = d.Independent(comp, 1)
    return d.MixtureSameFamily(mix, comp)


@pytest.mark.parametrize("multivariate", [False, True])
def test_mixture_same_family_matches_torch(multivariate: bool) -> None:
    rng = np.random.default_rng(9)
    tail = (2,) if multivariate else ()
    arrays = {
        "w": rng.standard_normal((3, 4)),
        "loc": rng.standard_normal((3, 4, *tail)),
        "scale": _positive(rng, 3, 4, *tail),
    }
    lp, tp = _leaves(arrays, lucid), _leaves(arrays, torch)
    lm, tm = _mixture(lucid, lp, multivariate), _mixture(torch, tp, multivariate)
    assert lm.batch_shape == tuple(tm.batch_shape) and lm.event_shape == tuple(tm.event_shape)
    value = rng.standard_normal((5, 3, *tail))
    lo = [lm.log_prob(lucid.tensor(value)), lm.mean, lm.variance]
    to = [tm.log_prob(torch.tensor(value)), tm.mean, tm.variance]
    if not multivariate:
        lo.append(lm.cdf(lucid.tensor(value)))
        to.append(tm.cdf(torch.tensor(value)))
    _assert_same(lo, to, rtol=1e-9, atol=1e-10)
    _assert_same_grads(lo, to, lp, tp, rtol=1e-7, atol=1e-9)
    lucid.manual_seed(0)
    assert tuple(lm.sample((7,)).shape) == tuple(tm.sample((7,)).shape)
    assert tuple(lm.expand((2, 3)).sample().shape) == tuple(tm.expand((2, 3)).sample().shape)
