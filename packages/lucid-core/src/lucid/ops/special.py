"""Special functions: erf, erfc, erfinv, and GELU (exact erf form and tanh approximation).

NumPy has no erf, so the default forward evaluates fdlibm's rational approximations with
``xp`` arithmetic (float64 accuracy ~1 ulp); a backend whose ``xp`` has ``erf``/``erfinv``
(MLX) uses its own, and each op names its fused-op contract (``contract``): a backend's array
kernel may compute the values; the backward stays in lucid ops.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from lucid import dtypes, kernels
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.autograd.grad_mode import is_grad_enabled
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import OfInput

OPS = OpTable(
    op("erf", sample((3, 4))),
    op("erfc", sample((3, 4))),
    op("erfinv", sample((3, 4), domain="unit")),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_ERX = 8.45062911510467529297e-01
# fdlibm s_erf.c coefficients, lowest order first.
_PP = (
    1.28379167095512558561e-01,
    -3.25042107247001499370e-01,
    -2.84817495755985104766e-02,
    -5.77027029648944159157e-03,
    -2.37630166566501626084e-05,
)
_QQ = (
    1.0,
    3.97917223959155352819e-01,
    6.50222499887672944485e-02,
    5.08130628187576562776e-03,
    1.32494738004321644526e-04,
    -3.96022827877536812320e-06,
)
_PA = (
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
)
_QA = (
    1.0,
    1.06420880400844228286e-01,
    5.40397917702171048937e-01,
    7.18286544141962662868e-02,
    1.26171219808761642112e-01,
    1.36370839120290507362e-02,
    1.19844998467991074170e-02,
)
_RA = (
    -9.86494403484714822705e-03,
    -6.93858572707181764372e-01,
    -1.05586262253232909814e01,
    -6.23753324503260060396e01,
    -1.62396669462573470355e02,
    -1.84605092906711035994e02,
    -8.12874355063065934246e01,
    -9.81432934416914548592e00,
)
_SA = (
    1.0,
    1.96512716674392571292e01,
    1.37657754143519042600e02,
    4.34565877475229228821e02,
    6.45387271733267880336e02,
    4.29008140027567833386e02,
    1.08635005541779435134e02,
    6.57024977031928170135e00,
    -6.04244152148580987438e-02,
)
_RB = (
    -9.86494292470009928597e-03,
    -7.99283237680523006574e-01,
    -1.77579549177547519889e01,
    -1.60636384855821916062e02,
    -6.37566443368389627722e02,
    -1.02509513161107724954e03,
    -4.83519191608651397019e02,
)
_SB = (
    1.0,
    3.03380607434824582924e01,
    3.25792512996573918826e02,
    1.53672958608443695994e03,
    3.19985821950859553908e03,
    2.55305040643316442583e03,
    4.74528541206955367215e02,
    -2.24409524465858183362e01,
)


def _poly(coeffs: tuple[float, ...], z: Any) -> Any:
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * z + c
    return acc


def _erf_parts(xp: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """(|x|, erf on |x| < 0.84375, erx + P/Q on [0.84375, 1.25), erfc(|x|) on |x| >= 1.25)."""
    ax = xp.abs(x)
    xs = xp.where(ax < 0.84375, x, 0.0)  # each branch sees only inputs it is valid for
    z = xs * xs
    small = xs + xs * (_poly(_PP, z) / _poly(_QQ, z))
    s = xp.where(ax < 1.25, ax, 1.0) - 1.0
    mid = _ERX + _poly(_PA, s) / _poly(_QA, s)
    big = xp.where(ax < 1.25, 1.25, xp.minimum(ax, 28.0))
    w = 1.0 / (big * big)
    near = xp.where(big < 1.0 / 0.35, _poly(_RA, w) / _poly(_SA, w), _poly(_RB, w) / _poly(_SB, w))
    tail = xp.exp(-big * big - 0.5625 + near) / big
    return ax, small, mid, tail


def bfloat16_in_float32(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """For an ``xp``-arithmetic helper ``fn(xp, x)``: a NumPy half-precision ``x`` is evaluated
    in float32 and rounded back. NumPy widens bfloat16 (ml_dtypes) where it meets the float
    constants (the result would come out float32), and its float16 arithmetic is ~10x slower
    than float32's."""

    @functools.wraps(fn)
    def in_float32(xp: Any, x: Any) -> Any:
        if str(x.dtype) in ("bfloat16", "float16"):
            return fn(xp, x.astype(xp.float32)).astype(x.dtype)
        return fn(xp, x)

    return in_float32


@bfloat16_in_float32
def erf_array(xp: Any, x: Any) -> Any:
    """erf on a floating array with ``xp`` arithmetic only."""
    native = getattr(xp, "erf", None)
    if native is not None:
        return native(x)
    ax, small, mid, tail = _erf_parts(xp, x)
    pos = xp.where(ax < 1.25, mid, 1.0 - tail)
    signed = xp.where(x < 0, -pos, pos)
    return xp.where(ax < 0.84375, small, signed)


@bfloat16_in_float32
def erfc_array(xp: Any, x: Any) -> Any:
    """erfc = 1 - erf without cancellation for large x (relative accuracy in the tail)."""
    ax, small, mid, tail = _erf_parts(xp, x)
    one_side = xp.where(ax < 1.25, 1.0 - mid, tail)  # erfc(|x|)
    big = xp.where(x < 0, 2.0 - one_side, one_side)
    return xp.where(ax < 0.84375, 1.0 - small, big)


@bfloat16_in_float32
def erfinv_array(xp: Any, y: Any) -> Any:
    """erfinv: Giles' approximation refined by two Newton steps on erf (or erfc near +-1)."""
    native = getattr(xp, "erfinv", None)
    if native is not None:
        return native(y)
    ay = xp.abs(y)
    inside = ay < 1
    a = xp.where(inside, ay, 0.0)
    w = -xp.log((1.0 - a) * (1.0 + a))
    wc = xp.where(w < 5.0, w - 2.5, xp.sqrt(w) - 3.0)
    central = _poly(
        (
            1.50140941,
            0.246640727,
            -0.00417768164,
            -0.00125372503,
            0.00021858087,
            -4.39150654e-06,
            -3.5233877e-06,
            3.43273939e-07,
            2.81022636e-08,
        ),
        wc,
    )
    tails = _poly(
        (
            2.83297682,
            1.00167406,
            0.00943887047,
            -0.0076224613,
            0.00573950773,
            -0.00367342844,
            0.00134934322,
            0.000100950558,
            -0.000200214257,
        ),
        wc,
    )
    x = xp.where(w < 5.0, central, tails) * a
    tail = a > 0.5
    log_target = xp.log(xp.where(tail, 1.0 - a, 1.0))  # 1 - a is exact for a > 0.5
    for _ in range(3):
        deriv = _TWO_OVER_SQRT_PI * xp.exp(-x * x)
        # Near +-1 Newton runs on log(erfc(x)), which is close to -x^2: it converges from
        # the rough start where a plain Newton step on erf(x) would stall.
        c = erfc_array(xp, x)
        c_safe = xp.where(tail, c, 1.0)
        step_tail = (xp.log(c_safe) - log_target) * c_safe / deriv
        x = xp.where(tail, x + step_tail, x - (erf_array(xp, x) - a) / deriv)
    x = xp.where(y < 0, -x, x)
    inf = xp.full_like(y, math.inf)
    edge = xp.where(ay == 1, xp.where(y < 0, -inf, inf), xp.full_like(y, math.nan))
    return xp.where(inside, x, edge)


def _erf_slope(x: Tensor) -> Tensor:
    return _TWO_OVER_SQRT_PI * (-(x * x)).exp()


def _erfc_slope(x: Tensor) -> Tensor:
    return -_erf_slope(x)  # erfc = 1 - erf


class _Unary(OfInput):
    """``OfInput`` whose values a backend kernel may compute (``contract``)."""

    contract: ClassVar[kernels.KernelContract[kernels.UnaryKernel]]

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        cls = type(ctx)
        fused = cls.contract.find(ctx.backend)
        out = None if fused is None else fused.forward(ctx.backend, x)
        return cls.values(ctx.xp, x) if out is None else out


class Erf(_Unary):
    contract = kernels.ERF
    values = staticmethod(erf_array)
    derivative = staticmethod(_erf_slope)


class Erfc(_Unary):
    contract = kernels.ERFC
    values = staticmethod(erfc_array)
    derivative = staticmethod(_erfc_slope)


class Erfinv(Function):
    @staticmethod
    def forward(ctx: Any, y: Any) -> Any:
        fused = kernels.ERFINV.find(ctx.backend)
        out = erfinv_array(ctx.xp, y) if fused is None else fused.forward(ctx.backend, y)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        return g * (_SQRT_PI_OVER_2 * (x * x).exp())


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)


class Gelu(Function):
    """``x * Phi(x)`` (exact, through erf) or the tanh approximation."""

    @staticmethod
    def forward(ctx: Any, x: Any, approximate: str) -> Any:
        xp = ctx.xp
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        fused = kernels.GELU.find(ctx.backend)
        out = None if fused is None else fused.forward(ctx.backend, x, approximate)
        if out is not None:
            return out
        if approximate == "tanh":
            return 0.5 * x * (1.0 + xp.tanh(_TANH_K * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1.0 + erf_array(xp, x * _SQRT_HALF))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        fused = None if is_grad_enabled() else kernels.GELU_GRAD.find(ctx.backend)
        if fused is not None:  # no graph to build: one array pass (double backward below)
            dx = fused.forward(ctx.backend, g.array, x.array, ctx.approximate)
            if dx is not None:
                return Tensor.from_backend_array(dx, ctx.backend), None
        if ctx.approximate == "tanh":
            t = (_TANH_K * (x + 0.044715 * x * x * x)).tanh()
            dt = (1 - t * t) * (_TANH_K * (1 + 3 * 0.044715 * x * x))
            return g * (0.5 * (1 + t) + 0.5 * x * dt), None
        cdf = 0.5 * (1 + erf(x * _SQRT_HALF))
        pdf = _INV_SQRT_2PI * (-0.5 * x * x).exp()
        return g * (cdf + x * pdf), None


def _floating(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype.category < dtypes.FLOAT:
        return x.to(dtypes.get_default_dtype())
    if x.dtype.is_complex:
        raise RuntimeError(f"{name}(): complex input is not supported, got {x.dtype}")
    return x


def erf(input: Tensor) -> Tensor:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``."""
    return Erf.apply(_floating("erf", input))


def erfc(input: Tensor) -> Tensor:
    """``1 - erf(x)``, accurate where erf(x) is close to 1."""
    return Erfc.apply(_floating("erfc", input))


def erfinv(input: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1); +-inf at +-1 and nan outside [-1, 1] (as PyTorch)."""
    return Erfinv.apply(_floating("erfinv", input))


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU: ``x * Phi(x)`` with ``approximate="none"`` (erf) or ``"tanh"``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return Gelu.apply(_floating("gelu", x), approximate)
