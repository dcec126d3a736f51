"""``lucid.special`` (``torch.special``): error, gamma and Bessel functions, the normal CDF,
orthogonal polynomials, and the special-function names of ordinary ops.

NumPy has none of the special functions, so their forwards are ``xp`` arithmetic (run on
every backend): the modified Bessel functions I0/I1 by Cephes' Chebyshev expansions (the
coefficients are Cephes', as in PyTorch), the Hurwitz zeta function by Cephes' Euler-Maclaurin
summation, erfcx by ``exp(x^2) erfc(x)`` below 5 and its continued fraction above. Gradients are
lucid ops where PyTorch has them; the orthogonal polynomials have none (as in PyTorch).
"""

from __future__ import annotations

import math
from typing import Any

from lucid import dtypes, ops
from lucid._creation import full_like, ones_like, zeros_like
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.autograd.grad_mode import no_grad
from lucid.ops._util import add_out as _add_out
from lucid.ops._util import index_int, promote
from lucid.ops.gamma import digamma, lgamma_array, trigamma_array
from lucid.ops.special import erf, erfc, erfc_array, erfinv, gelu

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gelu",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)

# The special-function names of ordinary ops (torch.special aliases them the same way).
expm1 = ops.expm1
exp2 = ops.exp2
log1p = ops.log1p
logit = ops.logit
xlogy = ops.xlogy
softmax = ops.softmax
log_softmax = ops.log_softmax
logsumexp = ops.logsumexp
round = ops.round  # noqa: A001
sinc = ops.sinc
gammaln = ops.lgamma
psi = digamma


def _float(name: str, x: Any) -> Tensor:
    """``x`` as a real floating tensor (integers and bool become the default float)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype.is_complex:
        raise RuntimeError(f"{name}(): complex input is not supported, got {x.dtype}")
    if x.dtype.category < dtypes.FLOAT:
        return x.to(dtypes.get_default_dtype())
    return x


def ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """The standard normal CDF ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``."""
    return 0.5 * erfc(-_float("ndtr", input) * _SQRT_HALF)


def ndtri(input: Tensor) -> Tensor:  # noqa: A002
    """The inverse of :func:`ndtr` (the standard normal quantile function)."""
    return _SQRT_2 * erfinv(2 * _float("ndtri", input) - 1)


def expit(input: Tensor) -> Tensor:  # noqa: A002
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    out: Tensor = _float("expit", input).sigmoid()
    return out


class _Xlog1py(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(a, b)
        zero = xp.logical_and(a == 0, ~xp.isnan(b))
        return xp.where(zero, 0.0, a * xp.log1p(xp.where(zero, 0.0, b)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        dead = (a == 0) & (b <= -1)  # PyTorch's mask: no -inf * 0 there
        safe = ops.where(dead, zeros_like(b), b)
        return g * ops.where(dead, zeros_like(b), safe.log1p()), g * a / (b + 1)


def xlog1py(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input * log1p(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN)."""
    a, b = _float_pair("xlog1py", input, other)
    return _Xlog1py.apply(a, b)


def entr(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise entropy: ``-x log x`` for x > 0, 0 at 0, -inf for x < 0 (nan stays nan)."""
    x = _float("entr", input)
    pos = x > 0
    safe = ops.where(pos, x, ones_like(x))
    inner = ops.where(x == 0, zeros_like(x), full_like(x, -math.inf))
    out: Tensor = ops.where(pos, -safe * safe.log(), ops.where(x.isnan(), x, inner))
    return out


def multigammaln(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The log of the multivariate gamma function of dimension ``p``."""
    x = _float("multigammaln", input)
    one = None if isinstance(p, bool) else index_int(p)
    if one is not None:
        p = one  # a NumPy integer (or 0-d integer tensor) is an int, as in torch
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1, got p={p}")
    if x.numel() and bool((x <= (p - 1) / 2).any().item()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    out = x.lgamma() + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p):
        out = out + (x - j / 2).lgamma()
    return out


# --- erfcx, log_ndtr -------------------------------------------------------------------------

_CF_TERMS = 60  # the continued fraction at |x| >= 5 converges to double precision in fewer


def erfcx_array(xp: Any, x: Any) -> Any:
    """``exp(x^2) erfc(x)``: direct below 5, the continued fraction of erfc above."""
    a = xp.abs(x)
    near = a < 5.0
    a_near = xp.where(near, a, 0.0)
    direct = xp.exp(a_near * a_near) * erfc_array(xp, a_near)
    a_far = xp.where(near, 5.0, a)
    t = a_far
    for k in range(_CF_TERMS, 0, -1):
        t = a_far + (k / 2.0) / t
    cf = _INV_SQRT_PI / t
    pos = xp.where(near, direct, cf)
    # erfcx(-a) = 2 exp(a^2) - erfcx(a); inf once exp(a^2) overflows, as PyTorch
    a2 = a * a
    huge = a2 > math.log(float(xp.finfo(x.dtype).max))
    neg = 2.0 * xp.exp(xp.where(huge, 0.0, a2)) - pos
    neg = xp.where(huge, xp.full_like(a, math.inf), neg)
    return xp.where(xp.isnan(x), x, xp.where(x < 0, neg, pos))


class _Erfcx(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        out = erfcx_array(ctx.xp, x)
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        return g * (2 * x * erfcx(x) - 2 * _INV_SQRT_PI)


def erfcx(input: Tensor) -> Tensor:  # noqa: A002
    """The scaled complementary error function ``exp(x^2) * erfc(x)``."""
    return _Erfcx.apply(_float("erfcx", input))


class _LogNdtr(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(x)
        t = x * _SQRT_HALF
        low = x < -1.0
        t_low = xp.where(low, t, -1.0)
        t_high = xp.where(low, 0.0, t)
        tail = xp.log(erfcx_array(xp, -t_low) / 2.0) - t_low * t_low
        body = xp.log1p(-erfc_array(xp, t_high) / 2.0)
        return xp.where(low, tail, body)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        return g * (_SQRT_2_OVER_PI / erfcx(-x * _SQRT_HALF))  # pdf / cdf


def log_ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``, accurate far into the lower tail (through erfcx)."""
    return _LogNdtr.apply(_float("log_ndtr", input))


# --- modified Bessel functions I0, I1 (Cephes) ------------------------------------------------

_I0E_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)  # fmt: skip
_I0E_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)  # fmt: skip
_I1E_A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)  # fmt: skip
_I1E_B = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)  # fmt: skip


def _chbevl(x: Any, coeffs: tuple[float, ...]) -> Any:
    """Cephes' Clenshaw sum of a Chebyshev series (highest coefficient first)."""
    b0 = x * 0 + coeffs[0]
    b1 = x * 0
    b2 = b1
    for c in coeffs[1:]:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _bessel_scaled(xp: Any, x: Any, a_coef: tuple[float, ...], b_coef: tuple[float, ...],
                   odd: bool) -> Any:  # fmt: skip
    """``exp(-|x|) I_nu(x)`` for nu = 0 (``odd`` False) or 1."""
    a = xp.abs(x)
    small = a <= 8.0
    far = xp.where(small, 8.0, a)  # keeps 32 / 0 out of the unused branch
    near = _chbevl(a / 2.0 - 2.0, a_coef)
    if odd:
        near = near * a
    out = xp.where(small, near, _chbevl(32.0 / far - 2.0, b_coef) / xp.sqrt(far))
    return xp.where(x < 0, -out, out) if odd else out


def i0e_array(xp: Any, x: Any) -> Any:
    """``exp(-|x|) I0(x)``."""
    return _bessel_scaled(xp, x, _I0E_A, _I0E_B, odd=False)


def i1e_array(xp: Any, x: Any) -> Any:
    """``exp(-|x|) I1(x)``."""
    return _bessel_scaled(xp, x, _I1E_A, _I1E_B, odd=True)


class _BesselI(Function):
    """I0, I0e, I1 or I1e (``kind``), with PyTorch's gradients."""

    @staticmethod
    def forward(ctx: Any, x: Any, kind: str) -> Any:
        xp = ctx.xp
        ctx.kind = kind
        ctx.save_for_backward(x)
        if kind == "i0e":
            return i0e_array(xp, x)
        if kind == "i1e":
            return i1e_array(xp, x)
        scaled = i0e_array(xp, x) if kind == "i0" else i1e_array(xp, x)
        return xp.exp(xp.abs(x)) * scaled  # nan at +-inf (inf * 0), as PyTorch

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        kind = ctx.kind
        if kind == "i0":
            return g * i1(x), None
        if kind == "i0e":
            return g * (i1e(x) - x.sign() * i0e(x)), None
        eps = x.dtype.finfo().eps if hasattr(x.dtype, "finfo") else 1e-7
        tiny = x.abs() <= eps
        safe = ops.where(tiny, full_like(x, eps), x)
        if kind == "i1":
            slope = i0(safe) - i1(safe) / safe
        else:
            slope = i0e(safe) - i1e(safe) * (safe.sign() + 1 / safe)
        return g * ops.where(tiny, full_like(x, 0.5), slope), None


def i0(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 0."""
    return _BesselI.apply(_float("i0", input), "i0")


def i0e(input: Tensor) -> Tensor:  # noqa: A002
    """The exponentially scaled ``exp(-|x|) I0(x)``."""
    return _BesselI.apply(_float("i0e", input), "i0e")


def i1(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 1."""
    return _BesselI.apply(_float("i1", input), "i1")


def i1e(input: Tensor) -> Tensor:  # noqa: A002
    """The exponentially scaled ``exp(-|x|) I1(x)``."""
    return _BesselI.apply(_float("i1e", input), "i1e")


def modified_bessel_i0(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 0 (as :func:`i0`)."""
    return i0(input)


def modified_bessel_i1(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 1 (as :func:`i1`)."""
    return i1(input)


_K0_A = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
    1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
    -5.35327393233902768720e-01,
)  # fmt: skip
_K0_B = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
    6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
    1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
    2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
    -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
    2.44030308206595545468e00,
)  # fmt: skip
_K1_A = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
    -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
    -3.53155960776544875667e-01, 1.52530022733894777053e00,
)  # fmt: skip
_K1_B = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
    1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
    3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
    2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
    -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
    1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
    2.72062619048444266945e00,
)  # fmt: skip


def bessel_k_array(xp: Any, x: Any, order: int, scaled: bool) -> Any:
    """``K_0`` / ``K_1`` (times ``exp(x)`` when ``scaled``): Cephes' Chebyshev expansions on
    (0, 2] and (2, inf); inf at 0 and nan below, as PyTorch."""
    near = x <= 2.0
    xn = xp.where(xp.logical_and(near, x > 0), x, 1.0)
    xf = xp.where(near, 4.0, x)
    if order == 0:
        small = _chbevl(xn * xn - 2.0, _K0_A) - xp.log(0.5 * xn) * xp.exp(xn) * i0e_array(xp, xn)
        large = _chbevl(8.0 / xf - 2.0, _K0_B) / xp.sqrt(xf)
    else:
        small = (
            xp.log(0.5 * xn) * xp.exp(xn) * i1e_array(xp, xn) + _chbevl(xn * xn - 2.0, _K1_A) / xn
        )
        large = _chbevl(8.0 / xf - 2.0, _K1_B) / xp.sqrt(xf)
    if scaled:
        small = small * xp.exp(xn)
    else:
        large = large * xp.exp(-xf)
    out = xp.where(near, small, large)
    out = xp.where(x == 0, xp.full_like(out, math.inf), out)
    return xp.where(x < 0, xp.full_like(out, math.nan), out)


class _BesselK(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, order: int, scaled: bool) -> Any:
        return bessel_k_array(ctx.xp, x, order, scaled)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise NotImplementedError("the derivative of the modified Bessel K functions is not "
                                  "implemented (as in PyTorch)")  # fmt: skip


def modified_bessel_k0(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the second kind, order 0."""
    return _BesselK.apply(_float("modified_bessel_k0", input), 0, False)


def modified_bessel_k1(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the second kind, order 1."""
    return _BesselK.apply(_float("modified_bessel_k1", input), 1, False)


def scaled_modified_bessel_k0(x: Tensor) -> Tensor:
    """``exp(x) K_0(x)``."""
    return _BesselK.apply(_float("scaled_modified_bessel_k0", x), 0, True)


def scaled_modified_bessel_k1(x: Tensor) -> Tensor:
    """``exp(x) K_1(x)``."""
    return _BesselK.apply(_float("scaled_modified_bessel_k1", x), 1, True)


# Cephes j0.c / j1.c rational approximations (highest power first, as Horner runs them)
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e00,
          5.44725003058768775090e00, 8.74716500199817011941e00, 5.30324038235394892183e00,
          9.99999999999999997821e-01)  # fmt: skip
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e00,
          5.47097740330417105182e00, 8.76190883237069594232e00, 5.30605288235394617618e00,
          1.00000000000000000218e00)  # fmt: skip
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e00, -1.95539544257735972385e01,
          -9.32060152123768231369e01, -1.77681167980488050595e02, -1.47077505154951170175e02,
          -5.14105326766599330220e01, -6.05014350600728481186e00)  # fmt: skip
_J0_QQ = (6.43178256118178023184e01, 8.56430025976980587198e02, 3.88240183605401609683e03,
          7.24046774195652478189e03, 5.93072701187316984827e03, 2.06209331660327847417e03,
          2.42005740240291393179e02)  # fmt: skip
_J0_RP = (-4.79443220978201773821e09, 1.95617491946556577543e12, -2.49248344360967716204e14,
          9.70862251047306323952e15)  # fmt: skip
_J0_RQ = (4.99563147152651017219e02, 1.73785401676374683123e05, 4.84409658339962045305e07,
          1.11855537045356834862e10, 2.11277520115489217587e12, 3.10518229857422583814e14,
          3.18121955943204943306e16, 1.71086294081043136091e18)  # fmt: skip
_Y0_YP = (1.55924367855235737965e04, -1.46639295903971606143e07, 5.43526477051876500413e09,
          -9.82136065717911466409e11, 8.75906394395366999549e13, -3.46628303384729719441e15,
          4.42733268572569800351e16, -1.84950800436986690637e16)  # fmt: skip
_Y0_YQ = (1.04128353664259848412e03, 6.26107330137134956842e05, 2.68919633393814121987e08,
          8.64002487103935000337e10, 2.02979612750105546709e13, 3.17157752842975028269e15,
          2.50596256172653059228e17)  # fmt: skip
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e00,
          5.11207951146807644818e00, 8.42404590141772420927e00, 5.21451598682361504063e00,
          1.00000000000000000254e00)  # fmt: skip
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e00,
          5.07386386128601488557e00, 8.39985554327604159757e00, 5.20982848682361821619e00,
          9.99999999999999997461e-01)  # fmt: skip
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e00, 7.58238284132545283818e01,
          3.66779609360150777800e02, 7.10856304998926107277e02, 5.97489612400613639965e02,
          2.11688757100572135698e02, 2.52070205858023719784e01)  # fmt: skip
_J1_QQ = (7.42373277035675149943e01, 1.05644886038262816351e03, 4.98641058337653607651e03,
          9.56231892404756170795e03, 7.99704160447350683650e03, 2.82619278517639096600e03,
          3.36093607810698293419e02)  # fmt: skip
_J1_RP = (-8.99971225705559398224e08, 4.52228297998194034323e11, -7.27494245221818276015e13,
          3.68295732863852883286e15)  # fmt: skip
_J1_RQ = (6.20836478118054335476e02, 2.56987256757748830383e05, 8.35146791431949253037e07,
          2.21511595479792499675e10, 4.74914122079991414898e12, 7.84369607876235854894e14,
          8.95222336184627338078e16, 5.32278620332680085395e18)  # fmt: skip
_Y1_YP = (1.26320474790178026440e09, -6.47355876379160291031e11, 1.14509511541823727583e14,
          -8.12770255501325109621e15, 2.02439475713594898196e17,
          -7.78877196265950026825e17)  # fmt: skip
_Y1_YQ = (5.94301592346128195359e02, 2.35564092943068577943e05, 7.34811944459721705660e07,
          1.87601316108706159478e10, 3.88231277496238566008e12, 6.20557727146953693363e14,
          6.87141087355300489866e16, 3.97270608116560655612e18)  # fmt: skip
_TWO_OVER_PI = 0.636619772367581343075535053490057448
_SQRT_2_OVER_PI_J = 0.797884560802865355879892119868763737


def _horner(z: Any, coeffs: tuple[float, ...]) -> Any:
    out = z * 0.0
    for c in coeffs:
        out = out * z + c
    return out


def _bessel_far(xp: Any, a: Any, order: int, second_kind: bool) -> Any:
    """Hankel's asymptotic form of J_n / Y_n for a > 5 (``a`` already clamped there)."""
    pp, pq, qp, qq = ((_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0
                      else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ))  # fmt: skip
    z = 25.0 / (a * a)
    p = _horner(z, pp) / _horner(z, pq)
    q = _horner(z, qp) / _horner(z, qq)
    phase = a - (0.785398163397448309615660845819875721 if order == 0
                 else 2.356194490192344928846982537459627163)  # fmt: skip
    if second_kind:
        val = p * xp.sin(phase) + 5.0 / a * q * xp.cos(phase)
    else:
        val = p * xp.cos(phase) - 5.0 / a * q * xp.sin(phase)
    return val * _SQRT_2_OVER_PI_J / xp.sqrt(a)


def bessel_j_array(xp: Any, x: Any, order: int) -> Any:
    """``J_0`` / ``J_1`` of the first kind (Cephes)."""
    a = xp.abs(x)
    near = a <= 5.0
    an = xp.where(near, a, 1.0)
    af = xp.where(near, 6.0, a)
    z = an * an
    if order == 0:
        small = (z - 5.78318596294678452118e00) * (z - 3.04712623436620863991e01) * _horner(
            z, _J0_RP) / _horner(z, _J0_RQ)  # fmt: skip
        small = xp.where(an < 1e-5, 1.0 - z / 4.0, small)
    else:
        small = _horner(z, _J1_RP) / _horner(z, _J1_RQ) * an * (
            z - 1.46819706421238932572e01) * (z - 4.92184563216946036703e01)  # fmt: skip
    out = xp.where(near, small, _bessel_far(xp, af, order, False))
    return xp.where(x < 0, -out, out) if order == 1 else out


def bessel_y_array(xp: Any, x: Any, order: int) -> Any:
    """``Y_0`` / ``Y_1`` of the second kind (Cephes): -inf at 0, nan below."""
    near = x <= 5.0
    xn = xp.where(xp.logical_and(near, x > 0), x, 1.0)
    xf = xp.where(near, 6.0, x)
    z = xn * xn
    if order == 0:
        small = _horner(z, _Y0_YP) / _horner(z, _Y0_YQ) + _TWO_OVER_PI * xp.log(
            xn) * bessel_j_array(xp, xn, 0)  # fmt: skip
    else:
        small = xn * (_horner(z, _Y1_YP) / _horner(z, _Y1_YQ)) + _TWO_OVER_PI * (
            bessel_j_array(xp, xn, 1) * xp.log(xn) - 1.0 / xn)  # fmt: skip
    out = xp.where(near, small, _bessel_far(xp, xf, order, True))
    out = xp.where(x == 0, xp.full_like(out, -math.inf), out)
    return xp.where(x < 0, xp.full_like(out, math.nan), out)


class _BesselJY(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, order: int, second_kind: bool) -> Any:
        if second_kind:
            return bessel_y_array(ctx.xp, x, order)
        return bessel_j_array(ctx.xp, x, order)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise NotImplementedError("the derivative of the Bessel J and Y functions is not "
                                  "implemented (as in PyTorch)")  # fmt: skip


def bessel_j0(input: Tensor) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind, order 0."""
    return _BesselJY.apply(_float("bessel_j0", input), 0, False)


def bessel_j1(input: Tensor) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind, order 1."""
    return _BesselJY.apply(_float("bessel_j1", input), 1, False)


def bessel_y0(input: Tensor) -> Tensor:  # noqa: A002
    """The Bessel function of the second kind, order 0."""
    return _BesselJY.apply(_float("bessel_y0", input), 0, True)


def bessel_y1(input: Tensor) -> Tensor:  # noqa: A002
    """The Bessel function of the second kind, order 1."""
    return _BesselJY.apply(_float("bessel_y1", input), 1, True)


# Cephes airy.c: Ai(x) by its power series on [-2.09, 2.09], asymptotic forms outside
_AI_AN = (3.46538101525629032477e-01, 1.20075952739645805542e01, 7.62796053615234516538e01,
          1.68089224934630576269e02, 1.59756391350164413639e02, 7.05360906840444183113e01,
          1.40264691163389668864e01, 9.99999999999999995305e-01)  # fmt: skip
_AI_AD = (5.67594532638770212846e-01, 1.47562562584847203173e01, 8.45138970141474626562e01,
          1.77318088145400459522e02, 1.64234692871529701831e02, 7.14778400825575695274e01,
          1.40959135607834029598e01, 1.00000000000000000470e00)  # fmt: skip
_AI_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01,
           -6.93158036036933542233e-01, -2.79779981545119124951e-01,
           -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06,
           -1.67787698489114633780e-08)  # fmt: skip
_AI_AFD = (1.33560420706553243746e01, 3.26825032795224613948e01, 2.67367040941499554804e01,
           9.18707402907259625840e00, 1.47529146771666414581e00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05,
           4.51850092970580378464e-07)  # fmt: skip
_AI_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10)  # fmt: skip
_AI_AGD = (9.30892908077441974853e00, 1.98352928718312140417e01, 1.55646628932864612953e01,
           5.47686069422975497931e00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09)  # fmt: skip
_AI_SERIES_TERMS = 30  # |x| < 2.09: the series' terms fall below 1e-16 well before this


def airy_ai_array(xp: Any, x: Any) -> Any:
    """The Airy function Ai (Cephes): nan at +-inf, 0 beyond 103.892, as PyTorch."""
    neg = x < -2.09
    pos = x >= 2.09
    xneg = xp.where(neg, x, -3.0)
    zeta_n = -2.0 * xneg * xp.sqrt(-xneg) / 3.0
    z = 1.0 / zeta_n
    z2 = z * z
    t = zeta_n + 0.25 * math.pi
    f_neg = 1.0 + z2 * _horner(z2, _AI_AFN) / _horner(z2, _AI_AFD)
    g_neg = z * _horner(z2, _AI_AGN) / _horner(z2, _AI_AGD)
    ai_neg = 5.64189583547756286948e-01 / xp.sqrt(xp.sqrt(-xneg)) * (
        xp.sin(t) * f_neg - xp.cos(t) * g_neg)  # fmt: skip
    xpos = xp.where(xp.logical_and(pos, x <= 103.892), x, 3.0)
    zeta_p = 2.0 * xpos * xp.sqrt(xpos) / 3.0
    ai_pos = (
        5.64189583547756286948e-01
        * (_horner(1.0 / zeta_p, _AI_AN) / _horner(1.0 / zeta_p, _AI_AD))
        / (2.0 * xp.sqrt(xp.sqrt(xpos)) * xp.exp(zeta_p))
    )
    xs = xp.where(xp.logical_or(neg, pos), 0.0, x)
    cube = xs * xs * xs
    f, g, m, n = xs * 0 + 1.0, xs, xs * 0 + 1.0, xs
    k = 1.0
    for _ in range(_AI_SERIES_TERMS):
        m = m * cube
        k += 1.0
        m = m / k
        n = n * cube
        k += 1.0
        n = n / k
        m = m / k
        f = f + m
        k += 1.0
        n = n / k
        g = g + n
    ai_mid = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    out = xp.where(neg, ai_neg, xp.where(pos, ai_pos, ai_mid))
    out = xp.where(x > 103.892, xp.zeros_like(out), out)
    return xp.where(xp.isinf(x), xp.full_like(out, math.nan), out)


class _AiryAi(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return airy_ai_array(ctx.xp, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise NotImplementedError("the derivative of airy_ai is not implemented (as in PyTorch)")


def airy_ai(x: Tensor) -> Tensor:
    """The Airy function ``Ai(x)``."""
    return _AiryAi.apply(_float("airy_ai", x))


def spherical_bessel_j0(x: Tensor) -> Tensor:
    """The spherical Bessel function of the first kind, order 0: ``sin(x) / x``."""
    x = _float("spherical_bessel_j0", x)
    small = x.abs() < 0.5
    safe = ops.where(small, ones_like(x), x)
    x2 = x * x  # Taylor series near 0, where sin(x) / x loses digits
    series = 1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110))))
    out: Tensor = ops.where(small, series, safe.sin() / safe)
    out = ops.where(x.isinf(), zeros_like(x), out)
    return out


# --- Hurwitz zeta, polygamma (Cephes) ---------------------------------------------------------

_ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18,
)  # fmt: skip
_ZETA_DIRECT = 9  # terms summed directly (Cephes); then Euler-Maclaurin from q + 9 on


def zeta_array(xp: Any, x: Any, q: Any) -> Any:
    """The Hurwitz zeta function ``sum_k (k + q)^-x`` (x > 1; Cephes' domain rules)."""
    # Move q up to >= _ZETA_DIRECT by direct summation, then Euler-Maclaurin at w.
    pole = xp.logical_and(q <= 0, q == xp.floor(q))
    bad_q = xp.logical_and(q <= 0, xp.logical_and(~pole, x != xp.floor(x)))
    qs = xp.where(xp.logical_or(pole, bad_q), 1.0, q)
    a = qs
    s = a ** (-x)
    for i in range(_max_shift(xp, qs)):
        go = xp.logical_or(a <= _ZETA_DIRECT, i < _ZETA_DIRECT)
        a = xp.where(go, a + 1.0, a)
        s = s + xp.where(go, a ** (-x), 0.0)
    w = a
    b = w ** (-x)
    s = s + b * w / (x - 1.0) - 0.5 * b
    fact = x * 0.0 + 1.0
    k = 0.0
    for coef in _ZETA_A:
        fact = fact * (x + k)
        b = b / w
        s = s + fact * b / coef
        k += 1.0
        fact = fact * (x + k)
        b = b / w
        k += 1.0
    out = xp.where(pole, math.inf, xp.where(bad_q, math.nan, s))
    out = xp.where(x < 1.0, math.nan, out)  # Cephes' order: x's domain before q's poles
    out = xp.where(x == 1.0, math.inf, out)
    return xp.where(xp.logical_or(xp.isnan(x), xp.isnan(q)), math.nan, out)


def _max_shift(xp: Any, q: Any) -> int:
    """Enough unit steps for the smallest finite ``q`` to pass ``_ZETA_DIRECT`` (and >= 9)."""
    finite = xp.where(xp.isfinite(q), q, float(_ZETA_DIRECT))
    low = float(finite.min()) if finite.size else float(_ZETA_DIRECT)
    return _ZETA_DIRECT + max(0, math.ceil(_ZETA_DIRECT - low) + 1)


class _Zeta(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, q: Any) -> Any:
        return zeta_array(ctx.xp, x, q)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _float_pair(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    ref = a if isinstance(a, Tensor) else b
    if not isinstance(ref, Tensor):
        raise TypeError(f"{name}(): expected at least one Tensor argument")
    ta = a if isinstance(a, Tensor) else ref.new_tensor(a)
    tb = b if isinstance(b, Tensor) else ref.new_tensor(b)
    ta, tb = promote(ta, tb)
    ta, tb = _float(name, ta), _float(name, tb)
    ta, tb = ops.broadcast_tensors(ta, tb)
    return ta, tb


def zeta(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ``zeta(x, q) = sum_{k >= 0} (k + q)^-x``."""
    x, q = _float_pair("zeta", input, other)
    return _Zeta.apply(x, q)


class _Polygamma(Function):
    _node_name = "PolygammaBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, n: int) -> Any:
        ctx.n = n
        ctx.save_for_backward(x)
        xp = ctx.xp
        if n == 1:
            return trigamma_array(xp, x)
        scale = (-1.0) ** (n + 1) * math.factorial(n)
        return scale * zeta_array(xp, x * 0.0 + (n + 1), x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        return g * polygamma(ctx.n + 1, x), None


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of the digamma function."""
    one = None if isinstance(n, bool) else index_int(n)
    if one is not None:
        n = one  # a NumPy integer (or 0-d integer tensor) is an int, as in torch
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _float("polygamma", input)
    if n == 0:
        return digamma(x)
    return _Polygamma.apply(x, n)


# --- regularized incomplete gamma functions (Cephes' series and continued fraction) ---------

_IGAM_TERMS = 600  # fixed-count loops (vectorised); enough for a, x up to a few hundred
_IGAM_BIG = 4.503599627370496e15


def _igam_prefactor(xp: Any, a: Any, x: Any) -> Any:
    """``x^a e^-x / Gamma(a)``."""
    return xp.exp(a * xp.log(x) - x - lgamma_array(xp, a))


def _igam_series(xp: Any, a: Any, x: Any) -> Any:
    r, c, total = a, x * 0 + 1.0, x * 0 + 1.0
    for _ in range(_IGAM_TERMS):
        r = r + 1.0
        c = c * x / r
        total = total + c
    return total * _igam_prefactor(xp, a, x) / a


def _igamc_fraction(xp: Any, a: Any, x: Any) -> Any:
    y = 1.0 - a
    z = x + y + 1.0
    pkm2, qkm2 = x * 0 + 1.0, x
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    for c in range(1, _IGAM_TERMS):
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        ans = xp.where(qk != 0, pk / xp.where(qk != 0, qk, 1.0), ans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        big = xp.abs(pk) > _IGAM_BIG
        one = pk * 0 + 1.0  # keeps the input's dtype (where of two Python floats is float64)
        scale = xp.where(big, one / _IGAM_BIG, one)
        pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
    return ans * _igam_prefactor(xp, a, x)


def igamma_array(xp: Any, a: Any, x: Any, upper: bool) -> Any:
    """P(a, x) (``upper`` False) or Q(a, x) = 1 - P(a, x), with Cephes' edge values."""
    inside = xp.logical_and(xp.logical_and(a > 0, x > 0), xp.isfinite(a) & xp.isfinite(x))
    sa = xp.where(inside, a, 1.0)
    sx = xp.where(inside, x, 1.0)
    use_fraction = xp.logical_and(sx > 1.0, sx > sa)  # where the series converges slowly
    fa, fx = xp.where(use_fraction, sa, 1.0), xp.where(use_fraction, sx, 2.0)
    qa, qx = xp.where(use_fraction, 1.0, sa), xp.where(use_fraction, 1.0, sx)
    q_far = _igamc_fraction(xp, fa, fx)
    p_near = _igam_series(xp, qa, qx)
    p = xp.where(use_fraction, 1.0 - q_far, p_near)
    q = xp.where(use_fraction, q_far, 1.0 - p_near)
    out = q if upper else p
    nan = xp.full_like(out, math.nan)
    # the edges (PyTorch's calc_igamma / calc_igammac): P, then Q = 1 - P
    p_edge = xp.where(x == 0, 0.0, nan)
    p_edge = xp.where(xp.logical_and(a == 0, x > 0), 1.0, p_edge)
    p_edge = xp.where(xp.logical_and(xp.isinf(a), ~xp.isinf(x)), 0.0, p_edge)
    p_edge = xp.where(xp.logical_and(xp.isinf(x), ~xp.isinf(a)), 1.0, p_edge)
    p_edge = xp.where(xp.logical_or(a < 0, x < 0), nan, p_edge)
    p_edge = xp.where(xp.logical_and(a == 0, x == 0), nan, p_edge)
    edge = 1.0 - p_edge if upper else p_edge
    return xp.where(inside, out, edge)


class _Igamma(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, x: Any, upper: bool) -> Any:
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        return igamma_array(ctx.xp, a, x, upper)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(
                f"the derivative for '{'igammac' if ctx.upper else 'igamma'}: input' is not "
                f"implemented."
            )
        slope = (a * x.log() - x - a.lgamma() - x.log()).exp()  # x^(a-1) e^-x / Gamma(a)
        return None, g * (-slope if ctx.upper else slope), None


def gammainc(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(a, x)`` (a = input, x = other)."""
    a, x = _float_pair("gammainc", input, other)
    return _Igamma.apply(a, x, False)


def gammaincc(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    a, x = _float_pair("gammaincc", input, other)
    return _Igamma.apply(a, x, True)


# --- orthogonal polynomials (three-term recurrences, no gradient, as PyTorch) -----------------


def _poly_args(name: str, x: Any, n: Any) -> tuple[Tensor, Tensor, int]:
    xt, nt = _float_pair(name, x, n)
    nt = nt.trunc()
    top = int(nt.max().item()) if nt.numel() else 0
    return xt, nt, max(top, 0)


def _recurrence(name: str, x: Any, n: Any, p1: Any, step: Any) -> Tensor:
    """``P_n(x)`` from ``P_0 = 1``, ``P_1 = p1(x)`` and ``P_{k+1} = step(k, x, P_k, P_{k-1})``;
    0 where ``n < 0``."""
    with no_grad():
        xt, nt, top = _poly_args(name, x, n)
        prev = ones_like(xt)
        cur = p1(xt)
        out = ops.where(nt == 0, prev, zeros_like(xt))
        out = ops.where(nt == 1, cur, out)
        for k in range(1, top):
            prev, cur = cur, step(k, xt, cur, prev)
            out = ops.where(nt == k + 1, cur, out)
        result: Tensor = ops.where(nt < 0, zeros_like(xt), out)
        return result


def chebyshev_polynomial_t(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the first kind ``T_n(x)``."""
    return _recurrence("chebyshev_polynomial_t", x, n, lambda x: x,
                       lambda k, x, p, q: 2 * x * p - q)  # fmt: skip


def chebyshev_polynomial_u(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the second kind ``U_n(x)``."""
    return _recurrence("chebyshev_polynomial_u", x, n, lambda x: 2 * x,
                       lambda k, x, p, q: 2 * x * p - q)  # fmt: skip


def chebyshev_polynomial_v(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the third kind ``V_n(x)``."""
    return _recurrence("chebyshev_polynomial_v", x, n, lambda x: 2 * x - 1,
                       lambda k, x, p, q: 2 * x * p - q)  # fmt: skip


def chebyshev_polynomial_w(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the fourth kind ``W_n(x)``."""
    return _recurrence("chebyshev_polynomial_w", x, n, lambda x: 2 * x + 1,
                       lambda k, x, p, q: 2 * x * p - q)  # fmt: skip


def _shifted(x: Any) -> Any:
    return 2 * x - 1 if isinstance(x, Tensor) else 2 * float(x) - 1


def shifted_chebyshev_polynomial_t(x: Any, n: Any) -> Tensor:
    """``T_n(2x - 1)``, the Chebyshev polynomial of the first kind on [0, 1]."""
    return chebyshev_polynomial_t(_shifted(x), n)


def shifted_chebyshev_polynomial_u(x: Any, n: Any) -> Tensor:
    """``U_n(2x - 1)``, the Chebyshev polynomial of the second kind on [0, 1]."""
    return chebyshev_polynomial_u(_shifted(x), n)


def shifted_chebyshev_polynomial_v(x: Any, n: Any) -> Tensor:
    """``V_n(2x - 1)``, the Chebyshev polynomial of the third kind on [0, 1]."""
    return chebyshev_polynomial_v(_shifted(x), n)


def shifted_chebyshev_polynomial_w(x: Any, n: Any) -> Tensor:
    """``W_n(2x - 1)``, the Chebyshev polynomial of the fourth kind on [0, 1]."""
    return chebyshev_polynomial_w(_shifted(x), n)


def hermite_polynomial_h(x: Any, n: Any) -> Tensor:
    """The physicists' Hermite polynomial ``H_n(x)``."""
    return _recurrence("hermite_polynomial_h", x, n, lambda x: 2 * x,
                       lambda k, x, p, q: 2 * x * p - 2 * k * q)  # fmt: skip


def hermite_polynomial_he(x: Any, n: Any) -> Tensor:
    """The probabilists' Hermite polynomial ``He_n(x)``."""
    return _recurrence("hermite_polynomial_he", x, n, lambda x: x,
                       lambda k, x, p, q: x * p - k * q)  # fmt: skip


def laguerre_polynomial_l(x: Any, n: Any) -> Tensor:
    """The Laguerre polynomial ``L_n(x)``."""
    return _recurrence("laguerre_polynomial_l", x, n, lambda x: 1 - x,
                       lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1))  # fmt: skip


def legendre_polynomial_p(x: Any, n: Any) -> Tensor:
    """The Legendre polynomial ``P_n(x)``."""
    return _recurrence("legendre_polynomial_p", x, n, lambda x: x,
                       lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1))  # fmt: skip


# torch's out= on the functions that take it (lucid.ops._util.with_out)
_OUT = """
    chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v
    chebyshev_polynomial_w gammainc gammaincc hermite_polynomial_h hermite_polynomial_he
    laguerre_polynomial_l legendre_polynomial_p polygamma shifted_chebyshev_polynomial_t
    shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
    shifted_chebyshev_polynomial_w xlog1py xlogy zeta
"""
_add_out(globals(), _OUT, cast=_OUT)
