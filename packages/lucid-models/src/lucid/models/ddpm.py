"""DDPM (Ho, Jain and Abbeel, "Denoising Diffusion Probabilistic Models", NeurIPS 2020): the
noise-predicting U-Net with a sinusoidal time embedding and self-attention at the paper's
resolutions, and :class:`DDPMScheduler` with the linear beta schedule, ``q_sample`` (the forward
process), the simplified training loss and the ancestral sampler.

The U-Net is laid out as Hugging Face ``diffusers``' ``UNet2DModel`` lays out the converted
checkpoints of the paper (``conv_in``, ``time_embedding``, ``down_blocks.0.resnets.0.conv1``...,
``mid_block``, ``up_blocks``, ``conv_norm_out``, ``conv_out``), so its state dicts load unchanged;
the scheduler follows ``diffusers``' ``DDPMScheduler`` (``add_noise``, ``step``).

Example:
    >>> unet = DDPMUNet(sample_size=8, in_channels=1, out_channels=1,
    ...                 block_out_channels=(8, 16), attention_resolutions=(4,), norm_num_groups=4)
    >>> sched = DDPMScheduler(num_train_timesteps=10)
    >>> loss = sched.loss(unet, lucid.rand(2, 1, 8, 8) * 2 - 1)
    >>> tuple(sched.sample(unet, (1, 1, 8, 8)).shape)
    (1, 1, 8, 8)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import lucid
from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.nn import functional as F

_F = TypeVar("_F", bound=Callable[..., Any])

_PAPER = 'Ho, Jain and Abbeel, "Denoising Diffusion Probabilistic Models", NeurIPS 2020'


def timestep_embedding(timesteps: Tensor, dim: int, max_period: float = 10000.0) -> Tensor:
    """The sinusoidal embedding of the (integer or fractional) ``timesteps``, ``(batch, dim)``:
    ``[sin(t * f_i), cos(t * f_i)]`` with ``f_i = max_period ** (-i / (dim / 2 - 1))``, as in the
    paper's code (Transformer's position encoding, section 3.5 of Vaswani et al.)."""
    if timesteps.ndim != 1:
        raise ValueError(f"timestep_embedding: expected a 1-D tensor of timesteps, got shape "
                         f"{tuple(timesteps.shape)}")  # fmt: skip
    half = dim // 2
    exponent = lucid.arange(half, dtype=lucid.float32) * (-math.log(max_period) / (half - 1))
    freqs = lucid.exp(exponent)
    args = timesteps.to(lucid.float32)[:, None] * freqs[None, :]
    return lucid.cat([lucid.sin(args), lucid.cos(args)], dim=-1)


class TimestepEmbedding(nn.Module):
    """The time embedding's MLP: ``linear_2(silu(linear_1(emb)))``."""

    def __init__(self, in_channels: int, time_embed_dim: int) -> None:
        super().__init__()
        self.linear_1 = nn.Linear(in_channels, time_embed_dim)
        self.linear_2 = nn.Linear(time_embed_dim, time_embed_dim)

    def forward(self, emb: Tensor) -> Any:
        return self.linear_2(F.silu(self.linear_1(emb)))


class ResnetBlock2D(nn.Module):
    """The paper's residual block: GroupNorm, SiLU, 3x3 conv, plus the projected time embedding;
    GroupNorm, SiLU, dropout, 3x3 conv; a 1x1 conv on the shortcut where the width changes."""

    def __init__(self, cin: int, cout: int, temb: int, groups: int, eps: float,
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, eps=eps)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb, cout)
        self.norm2 = nn.GroupNorm(groups, cout, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.conv_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x: Tensor, temb: Tensor) -> Any:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return (x if self.conv_shortcut is None else self.conv_shortcut(x)) + h


class AttentionBlock(nn.Module):
    """Single-head self-attention over the pixels, with GroupNorm in front and a residual
    connection (the paper's ``attn_block``; its 1x1 convolutions are ``Linear`` layers here)."""

    def __init__(self, channels: int, groups: int, eps: float) -> None:
        super().__init__()
        self.group_norm = nn.GroupNorm(groups, channels, eps=eps)
        self.to_q = nn.Linear(channels, channels)
        self.to_k = nn.Linear(channels, channels)
        self.to_v = nn.Linear(channels, channels)
        self.to_out = nn.ModuleList([nn.Linear(channels, channels), nn.Dropout(0.0)])

    def forward(self, x: Tensor) -> Any:
        b, c, h, w = x.shape
        tokens = self.group_norm(x).reshape(b, c, h * w).transpose(1, 2)
        y = F.scaled_dot_product_attention(self.to_q(tokens), self.to_k(tokens),
                                           self.to_v(tokens))  # fmt: skip
        y = self.to_out[0](y)
        return x + y.transpose(1, 2).reshape(b, c, h, w)


class Downsample2D(nn.Module):
    """A stride-2 3x3 conv, the input padded by one row and column at the bottom and right (as
    TensorFlow's ``SAME`` padding does for the paper's model)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, stride=2)

    def forward(self, x: Tensor) -> Any:
        return self.conv(F.pad(x, (0, 1, 0, 1)))


class Upsample2D(nn.Module):
    """Nearest-neighbour 2x upsampling, then a 3x3 conv."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: Tensor) -> Any:
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class DownBlock2D(nn.Module):
    """One resolution of the contracting path: ``layers`` residual blocks (each followed by
    attention where ``attention``), then a downsampler unless it is the last resolution."""

    def __init__(self, cin: int, cout: int, layers: int, attention: bool, downsample: bool,
                 temb: int, groups: int, eps: float, dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.resnets = nn.ModuleList([
            ResnetBlock2D(cin if i == 0 else cout, cout, temb, groups, eps, dropout)
            for i in range(layers)
        ])  # fmt: skip
        if attention:
            self.attentions = nn.ModuleList([AttentionBlock(cout, groups, eps)
                                             for _ in range(layers)])  # fmt: skip
        self.has_attention = attention
        if downsample:
            self.downsamplers = nn.ModuleList([Downsample2D(cout)])
        self.has_downsample = downsample

    def forward(self, x: Tensor, temb: Tensor) -> tuple[Tensor, list[Tensor]]:
        skips = []
        for i, resnet in enumerate(self.resnets):
            x = resnet(x, temb)
            if self.has_attention:
                x = self.attentions[i](x)
            skips.append(x)
        if self.has_downsample:
            x = self.downsamplers[0](x)
            skips.append(x)
        return x, skips


class UpBlock2D(nn.Module):
    """One resolution of the expanding path: ``layers`` residual blocks, each on the running map
    concatenated with a skip of the contracting path (attention after each where
    ``attention``), then an upsampler unless it is the last resolution."""

    def __init__(self, prev: int, cout: int, skip_last: int, layers: int, attention: bool,
                 upsample: bool, temb: int, groups: int, eps: float,
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.resnets = nn.ModuleList()
        for i in range(layers):
            skip = skip_last if i == layers - 1 else cout
            self.resnets.append(ResnetBlock2D((prev if i == 0 else cout) + skip, cout, temb,
                                              groups, eps, dropout))  # fmt: skip
        if attention:
            self.attentions = nn.ModuleList([AttentionBlock(cout, groups, eps)
                                             for _ in range(layers)])  # fmt: skip
        self.has_attention = attention
        if upsample:
            self.upsamplers = nn.ModuleList([Upsample2D(cout)])
        self.has_upsample = upsample

    def forward(self, x: Tensor, skips: list[Tensor], temb: Tensor) -> Any:
        for i, resnet in enumerate(self.resnets):
            x = resnet(lucid.cat([x, skips.pop()], dim=1), temb)
            if self.has_attention:
                x = self.attentions[i](x)
        return self.upsamplers[0](x) if self.has_upsample else x


class UNetMidBlock2D(nn.Module):
    """The bottleneck: residual block, self-attention, residual block."""

    def __init__(self, channels: int, temb: int, groups: int, eps: float, dropout: float) -> None:
        super().__init__()
        self.attentions = nn.ModuleList([AttentionBlock(channels, groups, eps)])
        self.resnets = nn.ModuleList([ResnetBlock2D(channels, channels, temb, groups, eps, dropout)
                                      for _ in range(2)])  # fmt: skip

    def forward(self, x: Tensor, temb: Tensor) -> Any:
        return self.resnets[1](self.attentions[0](self.resnets[0](x, temb)), temb)


class DDPMUNet(nn.Module):
    """The paper's noise-prediction U-Net (its Appendix B; ``diffusers``' ``UNet2DModel``).

    ``model(sample, timestep)``: a noisy ``(batch, in_channels, H, W)`` sample and its timesteps
    (an int, or a tensor of one per sample) to the predicted noise ``(batch, out_channels, H, W)``.

    Args:
        sample_size: the side of the training images (attention is placed by resolution).
        block_out_channels: the width of each resolution (the paper: ``128 * ch_mult``); each
            resolution but the last halves the size.
        attention_resolutions: the sides at which the residual blocks are followed by
            self-attention (the paper: 16); the bottleneck always has one.
        layers_per_block: residual blocks per resolution on the contracting path (one more on
            the expanding path).
        dropout: dropout in the residual blocks (0.1 for the CIFAR-10 model).
        norm_num_groups: the GroupNorm layers' number of groups.
        norm_eps: the GroupNorm layers' epsilon.
    """

    def __init__(self, sample_size: int = 32, in_channels: int = 3, out_channels: int = 3,
                 block_out_channels: Sequence[int] = (128, 256, 256, 256),
                 attention_resolutions: Sequence[int] = (16,), layers_per_block: int = 2,
                 dropout: float = 0.1, norm_num_groups: int = 32,
                 norm_eps: float = 1e-6) -> None:  # fmt: skip
        super().__init__()
        widths = list(block_out_channels)
        if not widths or any(w % norm_num_groups for w in widths):
            raise ValueError(f"DDPMUNet: block_out_channels must be a non-empty list of "
                             f"multiples of norm_num_groups ({norm_num_groups}), got "
                             f"{tuple(block_out_channels)}")  # fmt: skip
        n, ch, temb = len(widths), widths[0], widths[0] * 4
        attn = [sample_size // 2**i in attention_resolutions for i in range(n)]
        common = {"temb": temb, "groups": norm_num_groups, "eps": norm_eps, "dropout": dropout}
        self.embedding_dim = ch
        self.levels = n
        self.conv_in = nn.Conv2d(in_channels, ch, 3, padding=1)
        self.time_embedding = TimestepEmbedding(ch, temb)
        self.down_blocks = nn.ModuleList([
            DownBlock2D(widths[i - 1] if i else ch, widths[i], layers_per_block, attn[i],
                        i < n - 1, **common)  # type: ignore[arg-type]
            for i in range(n)
        ])  # fmt: skip
        self.mid_block = UNetMidBlock2D(widths[-1], **common)  # type: ignore[arg-type]
        rev = widths[::-1]
        self.up_blocks = nn.ModuleList([
            UpBlock2D(rev[max(i - 1, 0)], rev[i], rev[min(i + 1, n - 1)], layers_per_block + 1,
                      attn[n - 1 - i], i < n - 1, **common)  # type: ignore[arg-type]
            for i in range(n)
        ])  # fmt: skip
        self.conv_norm_out = nn.GroupNorm(norm_num_groups, ch, eps=norm_eps)
        self.conv_out = nn.Conv2d(ch, out_channels, 3, padding=1)

    def forward(self, sample: Tensor, timestep: Tensor | int) -> Any:
        if (
            sample.ndim != 4
            or sample.shape[2] % 2 ** (self.levels - 1)
            or sample.shape[3] % 2 ** (self.levels - 1)
        ):
            raise ValueError(f"DDPMUNet: expected a (batch, channels, H, W) sample with H and W "
                             f"multiples of {2 ** (self.levels - 1)}, got "
                             f"{tuple(sample.shape)}")  # fmt: skip
        t = lucid.as_tensor(timestep)
        t = (t.reshape(-1) * lucid.ones(sample.shape[0], dtype=t.dtype)) if t.numel() == 1 else t
        emb = timestep_embedding(t, self.embedding_dim).to(self.conv_in.weight.dtype)
        temb = self.time_embedding(emb)
        x = self.conv_in(sample)
        skips = [x]
        for down in self.down_blocks:
            x, s = down(x, temb)
            skips += s
        x = self.mid_block(x, temb)
        for up in self.up_blocks:
            x = up(x, skips, temb)
        return self.conv_out(F.silu(self.conv_norm_out(x)))


class DDPMScheduler:
    """The diffusion process of the paper with its linear schedule
    ``beta_t = linspace(beta_start, beta_end, T)``, and the ancestral sampler (Algorithm 2).

    ``variance_type`` is the reverse process' ``sigma_t^2``: ``"fixed_small"`` (the posterior's
    ``beta~_t``, ``diffusers``' default) or ``"fixed_large"`` (``beta_t``; the paper's CIFAR-10
    choice). ``clip_sample`` clips the predicted ``x_0`` to [-1, 1] before the posterior mean
    is taken (the paper's code does; without it ``step`` is Algorithm 2's line 4 exactly).
    The tensors live in float32, as ``diffusers``' do.
    """

    def __init__(self, num_train_timesteps: int = 1000, beta_start: float = 1e-4,
                 beta_end: float = 0.02, variance_type: str = "fixed_small",
                 clip_sample: bool = True) -> None:  # fmt: skip
        if variance_type not in ("fixed_small", "fixed_large"):
            raise ValueError(f"DDPMScheduler: variance_type must be 'fixed_small' or "
                             f"'fixed_large', got {variance_type!r}")  # fmt: skip
        if num_train_timesteps < 2 or not 0 < beta_start <= beta_end < 1:
            raise ValueError(f"DDPMScheduler: expected num_train_timesteps >= 2 and 0 < "
                             f"beta_start <= beta_end < 1, got {num_train_timesteps}, "
                             f"{beta_start}, {beta_end}")  # fmt: skip
        self.num_train_timesteps = num_train_timesteps
        self.variance_type = variance_type
        self.clip_sample = clip_sample
        self.betas = lucid.linspace(beta_start, beta_end, num_train_timesteps, dtype=lucid.float32)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = lucid.cumprod(self.alphas, dim=0)

    def add_noise(self, original_samples: Tensor, noise: Tensor, timesteps: Tensor) -> Tensor:
        """``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) noise``, one timestep per sample."""
        abar = self.alphas_cumprod[timesteps.to(lucid.int64)]
        shape = (-1,) + (1,) * (original_samples.ndim - 1)
        return (abar.sqrt().reshape(shape) * original_samples
                + (1.0 - abar).sqrt().reshape(shape) * noise)  # fmt: skip

    def q_sample(self, x_start: Tensor, t: Tensor, noise: Tensor | None = None) -> Tensor:
        """The forward process ``q(x_t | x_0)`` (the paper's code's name; ``add_noise`` with the
        noise drawn when not given)."""
        return self.add_noise(x_start, lucid.randn_like(x_start) if noise is None else noise, t)

    def loss(self, model: Callable[[Tensor, Tensor], Tensor], x_start: Tensor,
             generator: lucid.Generator | None = None) -> Tensor:  # fmt: skip
        """The simplified objective (eq. 14, Algorithm 1): ``t`` uniform in ``[0, T)``, the mean
        squared error between the noise and ``model(x_t, t)``."""
        t = lucid.randint(0, self.num_train_timesteps, (x_start.shape[0],), generator=generator)
        noise = lucid.randn(*x_start.shape, generator=generator)
        return F.mse_loss(model(self.add_noise(x_start, noise, t), t), noise)

    def _coefficients(self, t: int) -> tuple[Tensor, Tensor, Tensor]:
        """``abar_t``, ``abar_{t-1}`` and ``beta_t`` recomputed as ``1 - abar_t / abar_{t-1}``
        (``diffusers``' float32 arithmetic, so that ``beta_t / (1 - abar_t)`` is 1 at t = 0)."""
        abar = self.alphas_cumprod[t]
        abar_prev = self.alphas_cumprod[t - 1] if t > 0 else lucid.tensor(1.0)
        return abar, abar_prev, 1.0 - abar / abar_prev

    def step(self, model_output: Tensor, timestep: int, sample: Tensor,
             noise: Tensor | None = None,
             generator: lucid.Generator | None = None) -> Tensor:  # fmt: skip
        """One step of the reverse process: ``x_{t-1}`` from ``x_t`` (``sample``) and the
        predicted noise, with ``sigma_t * noise`` added for ``t > 0`` (``noise`` drawn from
        ``generator`` when not given). Returns the tensor (``diffusers`` wraps it in an output
        object's ``prev_sample``)."""
        t = int(timestep)
        if not 0 <= t < self.num_train_timesteps:
            raise ValueError(f"DDPMScheduler.step: timestep must be in [0, "
                             f"{self.num_train_timesteps}), got {timestep}")  # fmt: skip
        abar, abar_prev, beta = self._coefficients(t)
        x0 = (sample - (1.0 - abar).sqrt() * model_output) / abar.sqrt()
        if self.clip_sample:
            x0 = x0.clamp(-1.0, 1.0)
        # the posterior q(x_{t-1} | x_t, x_0)'s mean (eq. 7)
        mean = ((abar_prev.sqrt() * beta / (1.0 - abar)) * x0
                + ((1.0 - beta).sqrt() * (1.0 - abar_prev) / (1.0 - abar)) * sample)  # fmt: skip
        if t == 0:
            return mean
        if noise is None:
            noise = lucid.randn(*sample.shape, generator=generator)
        var = (
            beta
            if self.variance_type == "fixed_large"
            else ((1.0 - abar_prev) / (1.0 - abar) * beta)
        )  # the posterior's beta~_t (eq. 7)
        return mean + var.clamp(min=1e-20).sqrt() * noise

    def sample(self, model: Callable[[Tensor, Tensor], Tensor], shape: Sequence[int],
               generator: lucid.Generator | None = None) -> Tensor:  # fmt: skip
        """Algorithm 2: ``x_T ~ N(0, I)``, then ``T`` steps of :meth:`step` (without gradients).
        ``model`` is called as ``model(x_t, t)`` with ``t`` one timestep per sample."""
        with lucid.no_grad():
            x = lucid.randn(*shape, generator=generator)
            for t in range(self.num_train_timesteps - 1, -1, -1):
                eps = model(x, lucid.full((shape[0],), t, dtype=lucid.int64))
                x = self.step(eps, t, x, generator=generator)
        return x


def _register(num_params: int, size: int) -> Callable[[_F], _F]:
    return register_model(task="image-generation", paper=_PAPER, num_params=num_params,
                          input_size=(3, size, size), reference="diffusers")  # fmt: skip


@_register(35_746_307, 32)
def ddpm_cifar10(**kwargs: Any) -> DDPMUNet:
    """The paper's CIFAR-10 model: 128 to 256 channels over 4 resolutions (32 to 4), 2 residual
    blocks each, attention at 16x16, dropout 0.1; 35,746,307 parameters (the paper: 35.7M)."""
    return DDPMUNet(**kwargs)


@_register(113_673_219, 256)
def ddpm_256(**kwargs: Any) -> DDPMUNet:
    """The paper's 256x256 model (CelebA-HQ, LSUN): 128 to 512 channels over 6 resolutions,
    attention at 16x16, no dropout; 113,673,219 parameters (the paper: 114M)."""
    cfg: dict[str, Any] = {"sample_size": 256, "block_out_channels": (128, 128, 256, 256, 512, 512),
                           "dropout": 0.0}  # fmt: skip
    return DDPMUNet(**{**cfg, **kwargs})
