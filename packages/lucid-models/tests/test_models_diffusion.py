"""DDPM (the noise-prediction U-Net and its scheduler): registry metadata, parameter counts
against the paper, forward and backward on a tiny configuration, the schedule and the sampler
against the paper's formulas; in the parity environment, the U-Net against ``diffusers``'
``UNet2DModel`` (counts, state-dict keys, outputs) and the scheduler against its
``DDPMScheduler``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.ddpm import DDPMScheduler, DDPMUNet, timestep_embedding

DDPM = {"ddpm_cifar10": "35.7", "ddpm_256": "114"}  # the paper's Table 1 / Appendix B
TINY: dict[str, Any] = {"sample_size": 16, "in_channels": 2, "out_channels": 2,
                        "block_out_channels": (8, 16, 16), "attention_resolutions": (8,),
                        "layers_per_block": 1, "norm_num_groups": 4, "dropout": 0.0}  # fmt: skip


def _skip_init(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)


@pytest.mark.parametrize("name", sorted(DDPM))
def test_ddpm_registry_and_count(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info(name)
    assert (info.task, info.reference, info.family) == ("image-generation", "diffusers", "ddpm")
    assert "Denoising Diffusion Probabilistic Models" in (info.paper or "")
    assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
    stated = DDPM[name]
    assert f"{(info.num_params or 0) / 1e6:.{len(stated.partition('.')[2])}f}" == stated
    _skip_init(monkeypatch)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == info.num_params


def test_timestep_embedding_is_the_papers() -> None:
    t = np.array([0.0, 3.0, 999.0])
    freqs = np.exp(-np.log(10000.0) * np.arange(4) / 3)  # dim 8: half 4, f_i = 10000^(-i/3)
    expected = np.concatenate([np.sin(t[:, None] * freqs), np.cos(t[:, None] * freqs)], axis=1)
    got = timestep_embedding(lucid.tensor(t), 8).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="1-D tensor of timesteps"):
        timestep_embedding(lucid.zeros(2, 2), 8)


def test_unet_forward_backward_and_errors() -> None:
    lucid.manual_seed(0)
    model = DDPMUNet(**{**TINY, "dropout": 0.1})
    x = lucid.randn(2, 2, 16, 16, requires_grad=True)
    out = model(x, lucid.tensor([3, 500]))
    assert out.shape == (2, 2, 16, 16)
    out.square().mean().backward()
    assert x.grad is not None and bool(lucid.isfinite(x.grad).all())
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    model.eval()
    with lucid.no_grad():  # one int timestep is broadcast over the batch
        np.testing.assert_allclose(model(x, 7).numpy(), model(x, lucid.tensor([7, 7])).numpy(),
                                   rtol=1e-6, atol=1e-6)  # fmt: skip
        # the time embedding matters
        assert not np.allclose(model(x, 7).numpy(), model(x, 700).numpy(), rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match="multiples of 4"):
        model(lucid.randn(1, 2, 10, 10), 0)
    with pytest.raises(ValueError, match="multiples of norm_num_groups"):
        DDPMUNet(block_out_channels=(30, 60))


def test_unet_gradients_by_finite_differences() -> None:
    # directional derivatives in float64: <grad, v> against (f(x + h v) - f(x - h v)) / 2h for a
    # random direction v over the input and every parameter at once (two forwards, not one per
    # element)
    lucid.manual_seed(0)
    model = DDPMUNet(**TINY).to(lucid.float64)
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.standard_normal((1, 2, 16, 16)), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((1, 2, 16, 16)))
    t = lucid.tensor([5])
    leaves = [x, *model.parameters()]
    (model(x, t) * w).sum().backward()
    dirs = [rng.standard_normal(tuple(p.shape)) for p in leaves]
    analytic = sum(float((p.grad.numpy() * d).sum()) for p, d in zip(leaves, dirs))  # type: ignore[union-attr]
    h = 1e-6

    def shifted(sign: float) -> float:
        with lucid.no_grad():
            for p, d in zip(leaves, dirs):
                p.add_(lucid.tensor(sign * h * d))
            value = float((model(x, t) * w).sum().item())
            for p, d in zip(leaves, dirs):
                p.sub_(lucid.tensor(sign * h * d))
        return value

    numeric = (shifted(1.0) - shifted(-1.0)) / (2 * h)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_schedule_and_q_sample_are_the_papers() -> None:
    sched = DDPMScheduler()
    betas = np.linspace(1e-4, 0.02, 1000)
    np.testing.assert_allclose(sched.alphas_cumprod.numpy(), np.cumprod(1 - betas),
                               rtol=1e-5, atol=1e-7)  # fmt: skip
    rng = np.random.default_rng(0)
    x0, noise = rng.uniform(-1, 1, (3, 1, 4, 4)), rng.standard_normal((3, 1, 4, 4))
    t = np.array([0, 499, 999])
    abar = np.cumprod(1 - betas)[t][:, None, None, None]
    expected = np.sqrt(abar) * x0 + np.sqrt(1 - abar) * noise
    got = sched.q_sample(lucid.tensor(x0, dtype=lucid.float32), lucid.tensor(t),
                         lucid.tensor(noise, dtype=lucid.float32))  # fmt: skip
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="variance_type"):
        DDPMScheduler(variance_type="learned")


@pytest.mark.parametrize("variance_type", ["fixed_small", "fixed_large"])
def test_step_is_algorithm_2(variance_type: str) -> None:
    # without clipping: x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps) / sqrt(alpha_t) + sigma z
    sched = DDPMScheduler(num_train_timesteps=100, variance_type=variance_type, clip_sample=False)
    betas = np.linspace(1e-4, 0.02, 100)
    abar = np.cumprod(1 - betas)
    rng = np.random.default_rng(1)
    x, eps, z = (rng.standard_normal((2, 1, 3, 3)).astype(np.float32) for _ in range(3))
    for t in (0, 1, 57, 99):
        sigma2 = betas[t] if variance_type == "fixed_large" else (
            (1 - abar[t - 1]) / (1 - abar[t]) * betas[t] if t else 0.0)  # fmt: skip
        expected = (x - betas[t] / np.sqrt(1 - abar[t]) * eps) / np.sqrt(1 - betas[t])
        expected = expected + (np.sqrt(sigma2) * z if t else 0.0)
        got = sched.step(lucid.tensor(eps), t, lucid.tensor(x), noise=lucid.tensor(z))
        np.testing.assert_allclose(got.numpy(), expected, rtol=2e-3, atol=2e-4)  # float32 abar
    with pytest.raises(ValueError, match=r"timestep must be in \[0, 100\)"):
        sched.step(lucid.tensor(eps), 100, lucid.tensor(x))


def test_loss_is_the_simplified_objective_and_the_sampler_is_seeded() -> None:
    lucid.manual_seed(0)
    model = DDPMUNet(**{**TINY, "in_channels": 1, "out_channels": 1}).eval()
    sched = DDPMScheduler(num_train_timesteps=8)
    x0 = lucid.rand(3, 1, 16, 16) * 2 - 1
    loss = sched.loss(model, x0, generator=lucid.Generator().manual_seed(1))
    gen = lucid.Generator().manual_seed(1)  # the same draws, in the same order: t, then noise
    t = lucid.randint(0, 8, (3,), generator=gen)
    noise = lucid.randn(3, 1, 16, 16, generator=gen)
    with lucid.no_grad():
        expected = (model(sched.q_sample(x0, t, noise), t) - noise).square().mean()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6, atol=1e-7)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    a = sched.sample(model, (2, 1, 16, 16), generator=lucid.Generator().manual_seed(3))
    b = sched.sample(model, (2, 1, 16, 16), generator=lucid.Generator().manual_seed(3))
    assert a.shape == (2, 1, 16, 16) and bool(lucid.isfinite(a).all()) and not a.requires_grad
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def _diffusers() -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    reason = "diffusers is not installed (the parity env has it: hatch.toml)"
    return torch, pytest.importorskip("diffusers", reason=reason)


def _reference_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """``UNet2DModel``'s configuration of the same network (the converted checkpoints')."""
    n, size = len(cfg["block_out_channels"]), cfg["sample_size"]
    attn = [size // 2**i in cfg["attention_resolutions"] for i in range(n)]
    return {
        "sample_size": size, "in_channels": cfg.get("in_channels", 3),
        "out_channels": cfg.get("out_channels", 3),
        "block_out_channels": tuple(cfg["block_out_channels"]),
        "layers_per_block": cfg.get("layers_per_block", 2),
        "norm_num_groups": cfg.get("norm_num_groups", 32), "dropout": cfg.get("dropout", 0.1),
        "down_block_types": tuple("AttnDownBlock2D" if a else "DownBlock2D" for a in attn),
        "up_block_types": tuple("AttnUpBlock2D" if a else "UpBlock2D" for a in attn[::-1]),
        "attention_head_dim": None, "flip_sin_to_cos": False, "freq_shift": 1,
        "downsample_padding": 0, "norm_eps": 1e-6,
    }  # fmt: skip


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(DDPM))
def test_count_matches_diffusers(name: str) -> None:
    torch, diffusers = _diffusers()
    cfg = {"sample_size": 32, "block_out_channels": (128, 256, 256, 256),
           "attention_resolutions": (16,)}  # fmt: skip
    if name == "ddpm_256":
        cfg = {"sample_size": 256, "block_out_channels": (128, 128, 256, 256, 512, 512),
               "attention_resolutions": (16,), "dropout": 0.0}  # fmt: skip
    with torch.device("meta"):
        ref = diffusers.UNet2DModel(**_reference_config(cfg))
    assert sum(p.numel() for p in ref.parameters()) == models.model_info(name).num_params


@pytest.mark.parity
@pytest.mark.parametrize("layers", [1, 2])
def test_unet_matches_diffusers(layers: int) -> None:
    torch, diffusers = _diffusers()
    torch.manual_seed(0)
    cfg = {**TINY, "layers_per_block": layers}
    ref = diffusers.UNet2DModel(**_reference_config(cfg))
    model = DDPMUNet(**cfg)
    state = {k: lucid.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    assert sorted(state) == sorted(model.state_dict())
    model.load_state_dict(state)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 16, 16)).astype(np.float32)
    t = np.array([0, 17, 999])
    for train in (True, False):  # no dropout, no running statistics: the modes agree too
        ref.train(train), model.train(train)
        with torch.no_grad():
            expected = ref(torch.tensor(x), torch.tensor(t)).sample.numpy()
        with lucid.no_grad():
            got = model(lucid.tensor(x), lucid.tensor(t)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)  # float32


@pytest.mark.parity
@pytest.mark.parametrize("variance_type", ["fixed_small", "fixed_large"])
@pytest.mark.parametrize("clip", [True, False])
def test_scheduler_matches_diffusers(variance_type: str, clip: bool) -> None:
    torch, diffusers = _diffusers()
    ref = diffusers.DDPMScheduler(num_train_timesteps=50, variance_type=variance_type,
                                  clip_sample=clip)  # fmt: skip
    ours = DDPMScheduler(num_train_timesteps=50, variance_type=variance_type, clip_sample=clip)
    np.testing.assert_allclose(ours.alphas_cumprod.numpy(), ref.alphas_cumprod.numpy(),
                               rtol=1e-6, atol=1e-7)  # fmt: skip
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.5, 1.5, (3, 2, 4, 4)).astype(np.float32)
    eps = rng.standard_normal(x.shape).astype(np.float32)
    t = np.array([0, 20, 49])
    expected = ref.add_noise(torch.tensor(x), torch.tensor(eps), torch.tensor(t)).numpy()
    got = ours.add_noise(lucid.tensor(x), lucid.tensor(eps), lucid.tensor(t)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    for step in (0, 1, 30, 49):
        out = ref.step(torch.tensor(eps), step, torch.tensor(x),
                       generator=torch.Generator().manual_seed(step)).prev_sample  # fmt: skip
        z = torch.randn(x.shape, generator=torch.Generator().manual_seed(step)).numpy()
        got = ours.step(lucid.tensor(eps), step, lucid.tensor(x), noise=lucid.tensor(z)).numpy()
        np.testing.assert_allclose(got, out.numpy(), rtol=1e-5, atol=1e-5)
