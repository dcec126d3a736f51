# ruff: noqa: F405  (the names in __all__ come from the star imports)
"""All tensor operations. ``lucid.<op>`` and ``Tensor.<op>`` both come from here."""

from __future__ import annotations

from lucid.ops.elementwise import *  # noqa: F403
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.join import *  # noqa: F403
from lucid.ops.matmul import *  # noqa: F403
from lucid.ops.movement import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403
from lucid.ops.unary import *  # noqa: F403

# A literal list: type checkers cannot follow `+= module.__all__` through the import cycle
# with lucid._tensor. tests/test_core_tensor.py checks it against the modules.
__all__ = [
    "abs", "absolute", "acos", "acosh", "add", "addcdiv", "addcmul", "all", "allclose", "amax",
    "amin", "any", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "argmax", "argmin", "asin", "asinh", "atan", "atan2", "atanh", "atleast_1d", "atleast_2d",
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast_to", "cast", "cat",
    "ceil", "chunk", "clamp", "clamp_max", "clamp_min", "clip", "clone", "concat", "concatenate",
    "copysign", "cos", "cosh", "count_nonzero", "cumprod", "cumsum", "diag", "diag_embed",
    "diagonal", "div", "divide", "dot", "einsum", "eq", "equal", "exp", "exp2", "expand",
    "expand_as", "expand_copy", "expm1", "fix", "flatten", "flip", "fliplr", "flipud",
    "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "frac", "gather", "ge", "ger",
    "getitem", "greater", "greater_equal", "gt", "hstack", "hypot", "index_add", "index_select",
    "inner", "isclose", "isfinite", "isinf", "isnan", "le", "lerp", "less", "less_equal", "log",
    "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or", "logical_xor",
    "logsumexp", "lt", "masked_fill", "masked_select", "matmul", "max", "maximum", "mean", "min",
    "minimum", "mm", "moveaxis", "movedim", "mul", "multiply", "mv", "nan_to_num", "narrow", "ne",
    "neg", "negative", "norm", "not_equal", "outer", "pad", "permute", "pow", "prod", "ravel",
    "reciprocal", "relu", "remainder", "repeat", "repeat_interleave", "reshape", "reshape_as",
    "roll", "round", "rsqrt", "rsub", "scatter", "scatter_add", "setitem", "sgn", "sigmoid",
    "sign", "signbit", "sin", "sinh", "split", "sqrt", "square", "squeeze", "stack", "std",
    "std_mean", "sub", "subtract", "sum", "sum_to_size", "swapaxes", "swapdims", "t", "take",
    "take_along_dim", "tan", "tanh", "tensor_split", "tensordot", "tile", "to_device", "trace",
    "transpose", "tril", "triu", "true_divide", "trunc", "unbind", "unflatten", "unsqueeze", "var",
    "var_mean", "vdot", "view", "view_as", "vstack", "where", "xlogy",
]  # fmt: skip

# -- issue 3's ops (softmax family, sorting, special functions, ...) ---------------------------
from lucid.ops.blas import *  # noqa: E402, F403
from lucid.ops.grids import *  # noqa: E402, F403
from lucid.ops.softmax import log_softmax, softmax  # noqa: E402
from lucid.ops.sorting import *  # noqa: E402, F403
from lucid.ops.special import erf, erfc, erfinv  # noqa: E402

# A literal list too (see above); tests/test_core_exports.py checks it against the modules.
__all__ += [
    "addbmm", "addmm", "addmv", "argsort", "baddbmm", "bincount", "bmm", "bucketize",
    "cartesian_prod", "cdist", "cross", "erf", "erfc", "erfinv", "histc", "kthvalue",
    "log_softmax", "median", "meshgrid", "nanmedian", "nonzero", "searchsorted", "softmax", "sort",
    "topk", "tril_indices", "triu_indices", "unique",
]  # fmt: skip
