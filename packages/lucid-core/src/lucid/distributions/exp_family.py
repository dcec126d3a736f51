"""``ExponentialFamily`` (``torch.distributions.ExponentialFamily``): densities
``exp(<t(x), theta> - F(theta) + k(x))``; the entropy follows from the log normaliser ``F``."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import grad
from lucid.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of the exponential-family distributions: subclasses give ``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure``; :meth:`entropy` is then the Bregman
    divergence of the log normaliser, computed with autograd (as torch does)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""
        result: Any = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads, strict=True):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        out: Tensor = result
        return out
