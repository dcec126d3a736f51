"""Generative models in the layouts of pytorch/examples, so their state dicts load unchanged:
the MNIST variational autoencoder (Kingma and Welling, "Auto-Encoding Variational Bayes", ICLR
2014; ``examples/vae``) and DCGAN's generator and discriminator (Radford et al., "Unsupervised
Representation Learning with Deep Convolutional Generative Adversarial Networks", ICLR 2016;
``examples/dcgan``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import lucid
from lucid import nn
from lucid.models._registry import register_model
from lucid.nn import functional as F

_F = TypeVar("_F", bound=Callable[..., Any])

_VAE_PAPER = 'Kingma and Welling, "Auto-Encoding Variational Bayes", ICLR 2014'
_DCGAN_PAPER = (
    'Radford et al., "Unsupervised Representation Learning with Deep Convolutional Generative '
    'Adversarial Networks", ICLR 2016'
)


class VAE(nn.Module):
    """pytorch/examples' MNIST VAE: 784 -> 400 -> (mu, logvar) of ``latent`` dims -> 400 -> 784.

    ``model(x)`` (``x`` of any shape with 784 values per sample) returns
    ``(reconstruction, mu, logvar)``; the reconstruction is Bernoulli means (a sigmoid), the
    latent sample ``mu + eps * exp(logvar / 2)`` in training mode and ``mu`` in eval mode.
    """

    def __init__(self, in_features: int = 784, hidden: int = 400, latent: int = 20) -> None:
        super().__init__()
        self.in_features = in_features
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, in_features)

    def encode(self, x: Any) -> tuple[Any, Any]:
        """``(mu, logvar)`` of the approximate posterior."""
        h = F.relu(self.fc1(x))
        return self.fc21(h), self.fc22(h)

    def reparameterize(self, mu: Any, logvar: Any) -> Any:
        """A sample of ``N(mu, exp(logvar))`` differentiable in both (``mu`` in eval mode)."""
        if not self.training:
            return mu
        return mu + lucid.randn_like(mu) * lucid.exp(0.5 * logvar)

    def decode(self, z: Any) -> Any:
        """The Bernoulli means of the pixels, ``(batch, in_features)``."""
        return lucid.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x: Any) -> tuple[Any, Any, Any]:
        if x.numel() % self.in_features:
            raise ValueError(f"VAE: expected {self.in_features} values per sample, got input of "
                             f"shape {tuple(x.shape)}")  # fmt: skip
        mu, logvar = self.encode(x.reshape(-1, self.in_features))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def _dcgan_init(module: nn.Module) -> None:
    # DCGAN's initialisation (section 4 of the paper; examples/dcgan's weights_init)
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.normal_(m.weight, 1.0, 0.02)
            nn.init.zeros_(m.bias)


class DCGANGenerator(nn.Module):
    """DCGAN's generator: a ``(batch, nz, 1, 1)`` latent to a ``(batch, nc, 64, 64)`` image in
    [-1, 1] (four stride-2 transposed convolutions with batch norm and ReLU, then tanh)."""

    def __init__(self, nz: int = 100, ngf: int = 64, nc: int = 3) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        widths = [nz, ngf * 8, ngf * 4, ngf * 2, ngf]
        for i, (a, b) in enumerate(zip(widths, widths[1:])):
            stride, pad = (1, 0) if i == 0 else (2, 1)  # 1x1 -> 4x4, then doubling
            layers += [nn.ConvTranspose2d(a, b, 4, stride, pad, bias=False), nn.BatchNorm2d(b),
                       nn.ReLU(True)]  # fmt: skip
        layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)
        _dcgan_init(self)

    def forward(self, z: Any) -> Any:
        return self.main(z)


class DCGANDiscriminator(nn.Module):
    """DCGAN's discriminator: a ``(batch, nc, 64, 64)`` image to the probability ``(batch,)``
    that it is real (stride-2 convolutions with batch norm and LeakyReLU(0.2), then sigmoid)."""

    def __init__(self, nc: int = 3, ndf: int = 64) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
                                   nn.LeakyReLU(0.2, inplace=True)]  # fmt: skip
        widths = [ndf, ndf * 2, ndf * 4, ndf * 8]
        for a, b in zip(widths, widths[1:]):
            layers += [nn.Conv2d(a, b, 4, 2, 1, bias=False), nn.BatchNorm2d(b),
                       nn.LeakyReLU(0.2, inplace=True)]  # fmt: skip
        layers += [nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid()]
        self.main = nn.Sequential(*layers)
        _dcgan_init(self)

    def forward(self, x: Any) -> Any:
        return self.main(x).reshape(-1)


def _register(paper: str, num_params: int, input_size: tuple[int, ...]) -> Callable[[_F], _F]:
    return register_model(task="image-generation", paper=paper, num_params=num_params,
                          input_size=input_size, reference="pytorch-examples")  # fmt: skip


@_register(_VAE_PAPER, 652_824, (1, 28, 28))
def vae_mnist(**kwargs: Any) -> VAE:
    """pytorch/examples' MNIST VAE (400 hidden units, 20 latent dims); 652,824 parameters."""
    return VAE(**kwargs)


@_register(_DCGAN_PAPER, 3_576_704, (100, 1, 1))
def dcgan_generator(**kwargs: Any) -> DCGANGenerator:
    """DCGAN's 64x64 generator (nz 100, ngf 64, 3 channels); 3,576,704 parameters."""
    return DCGANGenerator(**kwargs)


@_register(_DCGAN_PAPER, 2_765_568, (3, 64, 64))
def dcgan_discriminator(**kwargs: Any) -> DCGANDiscriminator:
    """DCGAN's 64x64 discriminator (ndf 64, 3 channels); 2,765,568 parameters."""
    return DCGANDiscriminator(**kwargs)
