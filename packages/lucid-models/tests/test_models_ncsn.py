"""NCSN (the noise-conditional score network, its loss and the annealed Langevin sampler):
registry metadata and parameter counts, forward and backward on a tiny configuration, gradients
by finite differences, the loss against its formula and the sampler against a Gaussian whose
score is known in closed form."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.ncsn import (
    NCSN,
    anneal_dsm_loss,
    anneal_langevin_dynamics,
    geometric_sigmas,
)

NCSN_BUILDERS = {"ncsn_cifar10": (3, 32, 32), "ncsn_mnist": (1, 28, 28)}


@pytest.mark.parametrize("name", sorted(NCSN_BUILDERS))
def test_registry_and_count(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info(name)
    assert (info.task, info.reference, info.family) == ("image-generation", "paper", "ncsn")
    assert info.input_size == NCSN_BUILDERS[name]
    assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == info.num_params


@pytest.mark.parametrize("size", [16, 28])
def test_forward_backward_and_conditioning(size: int) -> None:
    lucid.manual_seed(0)
    model = NCSN(in_channels=1, ngf=4, num_classes=3, image_size=size)
    x = lucid.rand(2, 1, size, size, requires_grad=True)
    out = model(x, lucid.tensor([0, 2]))
    assert out.shape == (2, 1, size, size)
    out.square().mean().backward()
    assert x.grad is not None and bool(lucid.isfinite(x.grad).all())
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    with lucid.no_grad():  # the noise level changes the output
        a, b = model(x, lucid.tensor([0, 0])), model(x, lucid.tensor([1, 1]))
    assert not np.allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match="noise-level indices"):
        model(x, lucid.tensor([0]))


def test_gradients_by_finite_differences() -> None:
    # a directional derivative in float64 over the input and every parameter at once
    lucid.manual_seed(0)
    model = NCSN(in_channels=1, ngf=4, num_classes=3, image_size=16).to(lucid.float64)
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.random((2, 1, 16, 16)), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((2, 1, 16, 16)))
    y = lucid.tensor([1, 2])
    leaves = [x, *model.parameters()]
    (model(x, y) * w).sum().backward()
    dirs = [rng.standard_normal(tuple(p.shape)) for p in leaves]
    analytic = sum(float((p.grad.numpy() * d).sum()) for p, d in zip(leaves, dirs))  # type: ignore[union-attr]
    h = 1e-6

    def shifted(sign: float) -> float:
        with lucid.no_grad():
            for p, d in zip(leaves, dirs):
                p.add_(lucid.tensor(sign * h * d))
            value = float((model(x, y) * w).sum().item())
            for p, d in zip(leaves, dirs):
                p.sub_(lucid.tensor(sign * h * d))
        return value

    numeric = (shifted(1.0) - shifted(-1.0)) / (2 * h)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_sigmas_and_loss_formula() -> None:
    sigmas = geometric_sigmas(1.0, 0.01, 10)
    np.testing.assert_allclose(sigmas.numpy(), np.geomspace(1.0, 0.01, 10), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="sigma_begin > sigma_end > 0"):
        geometric_sigmas(0.01, 1.0)
    lucid.manual_seed(0)
    model = NCSN(in_channels=1, ngf=4, num_classes=10, image_size=16)
    x = lucid.rand(3, 1, 16, 16)
    labels = lucid.tensor([0, 4, 9])
    loss = anneal_dsm_loss(model, x, sigmas, labels, generator=lucid.Generator().manual_seed(5))
    z = lucid.randn(3, 1, 16, 16, generator=lucid.Generator().manual_seed(5)).numpy()
    s = sigmas.numpy()[[0, 4, 9]][:, None, None, None]
    perturbed = x.numpy() + s * z
    with lucid.no_grad():
        score = model(lucid.tensor(perturbed), labels).numpy()
    per = 0.5 * ((score + z / s) ** 2).reshape(3, -1).sum(1) * s.reshape(-1) ** 2
    np.testing.assert_allclose(loss.item(), per.mean(), rtol=1e-4, atol=1e-6)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_annealed_langevin_samples_a_known_gaussian() -> None:
    # data N(mu, s^2): the score of its sigma-perturbed density is -(x - mu) / (s^2 + sigma^2),
    # so Langevin at the last level must end near N(mu, s^2 + sigma_L^2)
    mu, s = 0.7, 0.3
    sigmas = geometric_sigmas(1.0, 0.1, 5)

    def score(x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
        var = (sigmas[y] ** 2 + s**2).reshape(-1, 1)
        return -(x - mu) / var

    x0 = lucid.rand(4000, 1, generator=lucid.Generator().manual_seed(0))
    out = anneal_langevin_dynamics(score, x0, sigmas, n_steps_each=60, step_lr=2e-3,
                                   generator=lucid.Generator().manual_seed(1)).numpy()  # fmt: skip
    assert abs(out.mean() - mu) < 0.03
    assert abs(out.std() - np.sqrt(s**2 + 0.1**2)) < 0.03
