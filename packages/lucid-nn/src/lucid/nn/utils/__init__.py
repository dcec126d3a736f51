"""Utilities: gradient clipping, flattening parameters to one vector, ``rnn`` (packed
variable-length sequences)."""

from lucid.nn.utils import rnn as rnn
from lucid.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from lucid.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
]
