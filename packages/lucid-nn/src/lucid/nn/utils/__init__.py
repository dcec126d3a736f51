"""Utilities (``torch.nn.utils``): gradient clipping, flattening parameters to one vector,
``rnn`` (packed variable-length sequences), ``parametrize`` and ``parametrizations``, weight
and spectral normalisation, ``prune``, conv/linear + batch-norm ``fusion``, ``stateless``,
conv weights' memory format."""

from lucid.nn.utils import fusion as fusion
from lucid.nn.utils import init as init
from lucid.nn.utils import parametrizations as parametrizations
from lucid.nn.utils import parametrize as parametrize
from lucid.nn.utils import prune as prune
from lucid.nn.utils import rnn as rnn
from lucid.nn.utils import stateless as stateless
from lucid.nn.utils._memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from lucid.nn.utils._spectral_norm_hook import remove_spectral_norm, spectral_norm
from lucid.nn.utils._weight_norm_hook import remove_weight_norm, weight_norm
from lucid.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from lucid.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from lucid.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from lucid.nn.utils.init import skip_init

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "fusion",
    "init",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "prune",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "skip_init",
    "spectral_norm",
    "stateless",
    "vector_to_parameters",
    "weight_norm",
]
