"""NCSN (Song and Ermon, "Generative Modeling by Estimating Gradients of the Data Distribution",
NeurIPS 2019): the noise-conditional score network (a RefineNet with dilated convolutions and
conditional instance normalisation++, section 4.2 and Appendix B.1 of the paper), the denoising
score-matching loss over the geometric noise levels (eq. 5-6) and the annealed Langevin sampler
(Algorithm 1).

The network is laid out as the authors' ``CondRefineNetDilated`` (github.com/ermongroup/ncsn,
``models/cond_refinenet_dilated.py``): ``begin_conv``, ``res1`` .. ``res4``, ``refine1`` ..
``refine4`` (``adapt_convs.0.1_1_norm.embed`` ...), ``normalizer``, ``end_conv``, so their
checkpoints load unchanged. Inputs are images in [0, 1] (the network maps them to [-1, 1]).

Example:
    >>> net = NCSN(in_channels=1, ngf=8, num_classes=4)
    >>> sigmas = geometric_sigmas(1.0, 0.01, 4)
    >>> loss = anneal_dsm_loss(net, lucid.rand(2, 1, 16, 16), sigmas)
    >>> tuple(anneal_langevin_dynamics(net, lucid.rand(1, 1, 16, 16), sigmas, 2).shape)
    (1, 1, 16, 16)
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

_PAPER = (
    'Song and Ermon, "Generative Modeling by Estimating Gradients of the Data Distribution", '
    "NeurIPS 2019"
)


def _conv3x3(cin: int, cout: int, bias: bool = False, dilation: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, padding=dilation, dilation=dilation, bias=bias)


class ConditionalInstanceNorm2dPlus(nn.Module):
    """Instance normalisation++ conditioned on the noise level ``y`` (eq. 8 of Appendix A): the
    instance-normalised map, plus ``alpha[y]`` times the channel means standardised across
    channels, scaled by ``gamma[y]`` and shifted by ``beta[y]`` (one embedding row per level:
    ``[gamma, alpha, beta]``)."""

    def __init__(self, num_features: int, num_classes: int, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.bias = bias
        self.embed = nn.Embedding(num_classes, num_features * (3 if bias else 2))
        with lucid.no_grad():  # gamma and alpha ~ N(1, 0.02), beta = 0 (the authors' init)
            nn.init.normal_(self.embed.weight, 1.0, 0.02)
            if bias:
                self.embed.weight[:, 2 * num_features :] = 0.0

    def forward(self, x: Tensor, y: Tensor) -> Any:
        means = x.mean(dim=(2, 3))
        means = (means - means.mean(dim=-1, keepdim=True)) / lucid.sqrt(
            means.var(dim=-1, keepdim=True) + 1e-5
        )  # the unbiased variance, as the authors' torch.var
        h = F.instance_norm(x, eps=1e-5)
        parts = self.embed(y).chunk(3 if self.bias else 2, dim=-1)
        h = h + means[..., None, None] * parts[1][..., None, None]
        out = parts[0][..., None, None] * h
        return out + parts[2][..., None, None] if self.bias else out


class ConvMeanPool(nn.Module):
    """A conv, then 2x2 mean pooling (``adjust_padding`` pads one row and column at the top and
    left first, for 28x28 inputs: 7 -> 4)."""

    def __init__(self, cin: int, cout: int, kernel_size: int = 3,
                 adjust_padding: bool = False) -> None:  # fmt: skip
        super().__init__()
        conv = nn.Conv2d(cin, cout, kernel_size, padding=kernel_size // 2)
        self.conv: nn.Module = (
            nn.Sequential(nn.ZeroPad2d((1, 0, 1, 0)), conv) if adjust_padding else conv
        )

    def forward(self, x: Tensor) -> Any:
        out = self.conv(x)
        return (out[:, :, ::2, ::2] + out[:, :, 1::2, ::2] + out[:, :, ::2, 1::2]
                + out[:, :, 1::2, 1::2]) / 4.0  # fmt: skip


class ConditionalResidualBlock(nn.Module):
    """norm, ELU, conv, norm, ELU, conv, plus the shortcut (a conv where the width or size
    changes). ``resample="down"`` halves the size (by mean pooling, or keeps it with dilated
    convolutions, as the paper's last two stages do)."""

    def __init__(self, cin: int, cout: int, num_classes: int, resample: str | None = None,
                 adjust_padding: bool = False, dilation: int | None = None) -> None:  # fmt: skip
        super().__init__()
        if resample not in (None, "down"):
            raise ValueError(f"ConditionalResidualBlock: resample must be None or 'down', got "
                             f"{resample!r}")  # fmt: skip
        self.cin, self.cout, self.resample = cin, cout, resample
        self.normalize1 = ConditionalInstanceNorm2dPlus(cin, num_classes)
        mid = cin if resample == "down" else cout
        d = dilation or 1
        self.conv1 = _conv3x3(cin, mid, bias=True, dilation=d)
        self.normalize2 = ConditionalInstanceNorm2dPlus(mid, num_classes)
        self.conv2: nn.Module
        self.shortcut: nn.Module
        if resample == "down" and dilation is None:
            self.conv2 = ConvMeanPool(mid, cout, 3, adjust_padding)
            self.shortcut = ConvMeanPool(cin, cout, 1, adjust_padding)
        else:
            self.conv2 = _conv3x3(mid, cout, bias=True, dilation=d)
            if cout != cin or resample is not None:
                self.shortcut = (_conv3x3(cin, cout, bias=True, dilation=d) if dilation
                                 else nn.Conv2d(cin, cout, 1))  # fmt: skip

    def forward(self, x: Tensor, y: Tensor) -> Any:
        h = self.conv1(F.elu(self.normalize1(x, y)))
        h = self.conv2(F.elu(self.normalize2(h, y)))
        same = self.cout == self.cin and self.resample is None
        return (x if same else self.shortcut(x)) + h


class CondRCUBlock(nn.Module):
    """Residual conv units: ``n_blocks`` x (``n_stages`` x (norm, ELU, 3x3 conv)) + identity,
    the layers named ``{block}_{stage}_norm`` / ``_conv`` as the authors name them."""

    def __init__(self, features: int, n_blocks: int, n_stages: int, num_classes: int) -> None:
        super().__init__()
        self.n_blocks, self.n_stages = n_blocks, n_stages
        for i in range(1, n_blocks + 1):
            for j in range(1, n_stages + 1):
                setattr(self, f"{i}_{j}_norm", ConditionalInstanceNorm2dPlus(features, num_classes))
                setattr(self, f"{i}_{j}_conv", _conv3x3(features, features))

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        for i in range(1, self.n_blocks + 1):
            residual = x
            for j in range(1, self.n_stages + 1):
                x = getattr(self, f"{i}_{j}_conv")(F.elu(getattr(self, f"{i}_{j}_norm")(x, y)))
            x = x + residual
        return x


class CondMSFBlock(nn.Module):
    """Multi-resolution fusion: each input normalised, a 3x3 conv to ``features``, bilinear
    resizing (corners aligned) to ``shape``, summed."""

    def __init__(self, in_planes: Sequence[int], features: int, num_classes: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList([_conv3x3(c, features, bias=True) for c in in_planes])
        self.norms = nn.ModuleList([ConditionalInstanceNorm2dPlus(c, num_classes)
                                    for c in in_planes])  # fmt: skip

    def forward(self, xs: list[Tensor], y: Tensor, shape: tuple[int, int]) -> Tensor:
        out: Tensor | None = None
        for x, conv, norm in zip(xs, self.convs, self.norms):
            h = F.interpolate(conv(norm(x, y)), size=shape, mode="bilinear", align_corners=True)
            out = h if out is None else out + h
        assert out is not None
        return out


class CondCRPBlock(nn.Module):
    """Chained residual pooling: ELU, then ``n_stages`` x (norm, 5x5 average pool, 3x3 conv),
    each stage's output added to the running sum."""

    def __init__(self, features: int, n_stages: int, num_classes: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList([_conv3x3(features, features) for _ in range(n_stages)])
        self.norms = nn.ModuleList([ConditionalInstanceNorm2dPlus(features, num_classes)
                                    for _ in range(n_stages)])  # fmt: skip
        self.maxpool = nn.AvgPool2d(5, stride=1, padding=2)  # the authors' name, an average

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        x = path = F.elu(x)
        for conv, norm in zip(self.convs, self.norms):
            path = conv(self.maxpool(norm(path, y)))
            x = x + path
        return x


class CondRefineBlock(nn.Module):
    """A RefineNet block: residual conv units on each input, fusion (when there are two),
    chained residual pooling, output conv units (three at the last block)."""

    def __init__(self, in_planes: Sequence[int], features: int, num_classes: int,
                 start: bool = False, end: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.adapt_convs = nn.ModuleList([CondRCUBlock(c, 2, 2, num_classes) for c in in_planes])
        self.output_convs = CondRCUBlock(features, 3 if end else 1, 2, num_classes)
        if not start:
            self.msf = CondMSFBlock(in_planes, features, num_classes)
        self.crp = CondCRPBlock(features, 2, num_classes)

    def forward(self, xs: list[Tensor], y: Tensor, shape: tuple[int, int]) -> Any:
        hs = [adapt(x, y) for adapt, x in zip(self.adapt_convs, xs)]
        h = self.msf(hs, y, shape) if len(hs) > 1 else hs[0]
        return self.output_convs(self.crp(h, y), y)


class NCSN(nn.Module):
    """The noise-conditional score network ``s(x, sigma_y)`` (``CondRefineNetDilated``).

    ``model(x, y)``: images ``(batch, in_channels, H, W)`` in [0, 1] (perturbed by noise) and
    the index ``y`` (``(batch,)``, in ``[0, num_classes)``) of each one's noise level, to the
    estimated score ``(batch, in_channels, H, W)``.

    Args:
        in_channels: image channels (1 for MNIST, 3 for CIFAR-10 and CelebA).
        ngf: the base width (64 for MNIST, 128 for CIFAR-10 and CelebA).
        num_classes: the number of noise levels ``L`` (10 in the paper).
        image_size: 28 pads the last downsampling (7 -> 4), as the authors do for MNIST.
        logit_transform: inputs already in logit space (the map to [-1, 1] is skipped).
    """

    def __init__(self, in_channels: int = 3, ngf: int = 128, num_classes: int = 10,
                 image_size: int = 32, logit_transform: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.logit_transform = logit_transform
        self.num_classes = num_classes
        n, w = num_classes, 2 * ngf
        self.begin_conv = nn.Conv2d(in_channels, ngf, 3, padding=1)
        self.normalizer = ConditionalInstanceNorm2dPlus(ngf, n)
        self.end_conv = nn.Conv2d(ngf, in_channels, 3, padding=1)
        block = ConditionalResidualBlock
        self.res1 = nn.ModuleList([block(ngf, ngf, n), block(ngf, ngf, n)])
        self.res2 = nn.ModuleList([block(ngf, w, n, "down"), block(w, w, n)])
        self.res3 = nn.ModuleList([block(w, w, n, "down", dilation=2),
                                   block(w, w, n, dilation=2)])  # fmt: skip
        self.res4 = nn.ModuleList([block(w, w, n, "down", adjust_padding=image_size == 28,
                                         dilation=4), block(w, w, n, dilation=4)])  # fmt: skip
        self.refine1 = CondRefineBlock([w], w, n, start=True)
        self.refine2 = CondRefineBlock([w, w], w, n)
        self.refine3 = CondRefineBlock([w, w], ngf, n)
        self.refine4 = CondRefineBlock([ngf, ngf], ngf, n, end=True)

    def forward(self, x: Tensor, y: Tensor) -> Any:
        if x.ndim != 4 or y.ndim != 1 or y.shape[0] != x.shape[0]:
            raise ValueError(f"NCSN: expected images (batch, channels, H, W) and noise-level "
                             f"indices (batch,), got {tuple(x.shape)} and "
                             f"{tuple(y.shape)}")  # fmt: skip
        h = self.begin_conv(x if self.logit_transform else 2 * x - 1.0)
        layers = []
        for stage in (self.res1, self.res2, self.res3, self.res4):
            for blk in stage:
                h = blk(h, y)
            layers.append(h)
        size = [tuple(t.shape[2:]) for t in layers]
        ref = self.refine1([layers[3]], y, size[3])
        ref = self.refine2([layers[2], ref], y, size[2])
        ref = self.refine3([layers[1], ref], y, size[1])
        ref = self.refine4([layers[0], ref], y, size[0])
        return self.end_conv(F.elu(self.normalizer(ref, y)))


def geometric_sigmas(sigma_begin: float = 1.0, sigma_end: float = 0.01,
                     num: int = 10) -> Tensor:  # fmt: skip
    """The paper's noise levels: ``num`` values from ``sigma_begin`` down to ``sigma_end`` in a
    geometric sequence (float32)."""
    if not sigma_begin > sigma_end > 0 or num < 2:
        raise ValueError(f"geometric_sigmas: expected sigma_begin > sigma_end > 0 and num >= 2, "
                         f"got {sigma_begin}, {sigma_end}, {num}")  # fmt: skip
    ratio = math.log(sigma_end / sigma_begin) / (num - 1)
    return lucid.tensor([sigma_begin * math.exp(i * ratio) for i in range(num)])


def anneal_dsm_loss(model: Callable[[Tensor, Tensor], Tensor], x: Tensor, sigmas: Tensor,
                    labels: Tensor | None = None, anneal_power: float = 2.0,
                    generator: lucid.Generator | None = None) -> Tensor:  # fmt: skip
    """Denoising score matching over the noise levels (eq. 5-6): a level ``i`` per sample
    (uniform unless ``labels`` are given), ``x~ = x + sigma_i z``, and the mean over the batch
    of ``sigma_i ** anneal_power / 2 * || s(x~, i) + (x~ - x) / sigma_i ** 2 ||^2``
    (``lambda(sigma) = sigma^2``)."""
    if labels is None:
        labels = lucid.randint(0, sigmas.shape[0], (x.shape[0],), generator=generator)
    used = sigmas[labels].reshape(-1, *([1] * (x.ndim - 1)))
    perturbed = x + lucid.randn(*x.shape, generator=generator) * used
    target = -(perturbed - x) / used**2
    err = (model(perturbed, labels) - target).square().reshape(x.shape[0], -1).sum(dim=-1)
    return (0.5 * err * used.reshape(-1) ** anneal_power).mean()


def anneal_langevin_dynamics(model: Callable[[Tensor, Tensor], Tensor], x: Tensor,
                             sigmas: Tensor, n_steps_each: int = 100, step_lr: float = 2e-5,
                             generator: lucid.Generator | None = None) -> Tensor:  # fmt: skip
    """Algorithm 1: for each level ``sigma_i`` (largest first), ``n_steps_each`` Langevin steps
    ``x <- x + a s(x, i) + sqrt(2 a) z`` with ``a = step_lr * (sigma_i / sigma_L) ** 2`` (the
    authors' code; the paper's ``alpha_i / 2`` is this ``a``), starting from ``x`` (the paper
    starts from uniform noise). No gradients are kept."""
    with lucid.no_grad():
        last = float(sigmas[-1].item())
        for i in range(sigmas.shape[0]):
            labels = lucid.full((x.shape[0],), i, dtype=lucid.int64)
            step = step_lr * (float(sigmas[i].item()) / last) ** 2
            for _ in range(n_steps_each):
                noise = lucid.randn(*x.shape, generator=generator) * math.sqrt(2 * step)
                x = x + step * model(x, labels) + noise
    return x


def _register(num_params: int, size: tuple[int, ...]) -> Callable[[_F], _F]:
    return register_model(task="image-generation", paper=_PAPER, num_params=num_params,
                          input_size=size, reference="paper")  # fmt: skip


@_register(30_117_635, (3, 32, 32))
def ncsn_cifar10(**kwargs: Any) -> NCSN:
    """The paper's CIFAR-10 (and CelebA) score network: ngf 128, 10 noise levels, 3 channels;
    30,117,635 parameters (the authors' code's count, checked against it; the paper states none)."""
    return NCSN(**kwargs)


@_register(7_638_657, (1, 28, 28))
def ncsn_mnist(**kwargs: Any) -> NCSN:
    """The paper's MNIST score network: ngf 64, 10 noise levels, 1 channel, 28x28; 7,638,657
    parameters (the authors' code's count, checked against it; the paper states none)."""
    cfg: dict[str, Any] = {"in_channels": 1, "ngf": 64, "image_size": 28}
    return NCSN(**{**cfg, **kwargs})
