"""``MixtureSameFamily(mixture_distribution, component_distribution)``
(``torch.distributions.MixtureSameFamily``): a Categorical choice among the rightmost batch
dim of one component distribution."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.categorical import Categorical
from lucid.distributions.distribution import Distribution, as_shape


class MixtureSameFamily(Distribution):
    """``p(x) = sum_k pi_k p_k(x)``: ``pi`` from ``mixture_distribution`` (a Categorical over
    K), ``p_k`` the K components along ``component_distribution``'s last batch dim."""

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(
        self,
        mixture_distribution: Categorical,
        component_distribution: Distribution,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an  instance of "
                "torch.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution need to be an instance of "
                "torch.distributions.Distribution"
            )
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs), strict=False):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(
        self, batch_shape: Any, _instance: MixtureSameFamily | None = None
    ) -> MixtureSameFamily:
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        shape = as_shape(batch_shape)
        new._component_distribution = self._component_distribution.expand(
            shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        """The Categorical that picks a component."""
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        """The components, along the last batch dim."""
        return self._component_distribution

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self._batch_shape)
        cat_batch_ndims = len(self._mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        comp = self._component_distribution
        mean_cond_var = (probs * comp.variance).sum(dim)
        var_cond_mean = (probs * (comp.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        logits = self._mixture_distribution.logits
        log_mix_prob = logits - logits.logsumexp(-1, keepdim=True)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = as_shape(sample_shape)
        gather_dim = len(shape) + len(self._batch_shape)
        es = self._event_shape
        with no_grad():
            mix_sample = self._mixture_distribution.sample(shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self._component_distribution.sample(shape)
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.expand(mix_shape + (1,) + es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)
