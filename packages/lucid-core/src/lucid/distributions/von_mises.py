"""``VonMises(loc, concentration)`` (``torch.distributions.VonMises``): the circular normal."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np

from lucid._creation import tensor
from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all, where
from lucid.random import default_generator

__all__ = ["VonMises"]

# Abramowitz and Stegun 9.8.1-9.8.4: log I0 and log I1, as torch evaluates them.
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
             -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]  # fmt: skip
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
             0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]  # fmt: skip


def _eval_poly(y: Tensor, coef: list[float]) -> Tensor:
    result: Any = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    out: Tensor = result
    return out


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log I_order(x)`` for ``order`` 0 or 1 (polynomial fits, torch's)."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _I0_SMALL if order == 0 else _I1_SMALL)
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _I0_LARGE if order == 0 else _I1_LARGE).log()
    return where(x < 3.75, small.log(), large)


class VonMises(Distribution):
    """Density ``exp(kappa cos(x - loc)) / (2 pi I0(kappa))`` on the circle; ``sample`` by Best
    and Fisher's rejection sampler (in float64, as torch), no ``rsample``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(
        self, loc: Tensor | float, concentration: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        out: Tensor = (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                       - _log_modified_bessel_fn(self.concentration, 0))  # fmt: skip
        return out

    @cached_property
    def _proposal_r(self) -> np.ndarray:
        kappa = self.concentration.detach().numpy().astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = 1 + np.sqrt(1 + 4 * kappa**2)
            rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
            r = (1 + rho**2) / (2 * rho)
        return np.asarray(np.where(kappa < 1e-5, 1 / kappa + kappa, r))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        rng = default_generator.numpy_rng
        loc = np.broadcast_to(self.loc.detach().numpy().astype(np.float64), shape)
        kappa = np.broadcast_to(self.concentration.detach().numpy().astype(np.float64), shape)
        r = np.broadcast_to(self._proposal_r, shape)
        x = np.zeros(shape)
        done = np.zeros(shape, dtype=bool)
        while not done.all():
            u1, u2, u3 = rng.random((3, *shape))
            z = np.cos(math.pi * u1)
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            with np.errstate(divide="ignore", invalid="ignore"):
                accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
            accept &= ~done
            x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)  # noqa: E501
            done |= accept
        with no_grad():
            out: Tensor = tensor((x + math.pi + loc) % (2 * math.pi) - math.pi,
                                 dtype=self.loc.dtype, device=self.loc.device)  # fmt: skip
        return out

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return self._expanded(VonMises, batch_shape, {"loc": (), "concentration": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        out: Tensor = 1 - (_log_modified_bessel_fn(self.concentration, 1)
                           - _log_modified_bessel_fn(self.concentration, 0)).exp()  # fmt: skip
        return out
