"""Utilities (``torch.nn.utils``): gradient clipping, flattening parameters to one vector,
``rnn`` (packed variable-length sequences), ``parametrize`` and ``parametrizations``, weight
and spectral normalisation, ``prune``, conv/linear + batch-norm ``fusion``, ``stateless``."""

from lucid.nn.utils import parametrizations as parametrizations
from lucid.nn.utils import parametrize as parametrize
from lucid.nn.utils import rnn as rnn
from lucid.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from lucid.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "rnn",
    "vector_to_parameters",
]
