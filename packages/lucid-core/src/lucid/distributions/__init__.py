"""``lucid.distributions`` (``torch.distributions``): probability distributions built on lucid
ops, so ``log_prob``, ``entropy``, ``kl_divergence`` and ``rsample`` are differentiable.

>>> import lucid
>>> from lucid.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
tensor(0.5000)
"""

from __future__ import annotations

from lucid.distributions import constraints
from lucid.distributions.bernoulli import Bernoulli
from lucid.distributions.beta import Beta
from lucid.distributions.categorical import Categorical
from lucid.distributions.dirichlet import Dirichlet
from lucid.distributions.distribution import Distribution
from lucid.distributions.gamma import Gamma
from lucid.distributions.independent import Independent
from lucid.distributions.kl import kl_divergence, register_kl
from lucid.distributions.multivariate_normal import MultivariateNormal
from lucid.distributions.normal import Normal
from lucid.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Gamma", "Independent",
    "MultivariateNormal", "Normal", "Uniform", "constraints", "kl_divergence", "register_kl",
]  # fmt: skip
