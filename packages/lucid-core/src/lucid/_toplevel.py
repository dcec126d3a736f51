"""torch's top-level names of things lucid keeps elsewhere: the in-place functions
(``torch.abs_(t)`` is ``t.abs_()``) and the ``igamma``/``igammac`` names of
``lucid.special.gammainc``/``gammaincc``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid import special
from lucid._tensor import Tensor

# torch's top-level in-place functions, each a Tensor method of the same name.
INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_",
    "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_",
    "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_",
)  # fmt: skip


def _method_function(name: str) -> Callable[..., Tensor]:
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        result: Tensor = getattr(input, name)(*args, **kwargs)
        return result

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``: ``input`` changed in place and returned."
    return function


FUNCTIONS: dict[str, Callable[..., Tensor]] = {n: _method_function(n) for n in INPLACE_FUNCTIONS}


def _tensor_pair(name: str, input: Any, other: Any) -> None:  # noqa: A002
    for position, (arg, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )


def igamma(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(input, other)`` of two tensors
    (``torch.igamma``; :func:`lucid.special.gammainc`)."""
    _tensor_pair("igamma", input, other)
    return special.gammainc(input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(input, other)`` of two tensors
    (``torch.igammac``; :func:`lucid.special.gammaincc`)."""
    _tensor_pair("igammac", input, other)
    return special.gammaincc(input, other)
