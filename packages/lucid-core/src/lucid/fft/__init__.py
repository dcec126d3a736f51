"""Discrete Fourier transforms, as ``torch.fft``.

Every transform is built from three one-dimensional Functions (complex-to-complex,
real-to-complex and complex-to-real, on the backend's ``xp.fft``) and a zero-pad/trim along a
dim; the n-dimensional transforms apply them one dim at a time. Result dtypes are torch's:
float32 and complex64 inputs give complex64 (or float32 for the inverse real transforms),
float64 and complex128 give complex128, integers go through the default float. Gradients follow
torch's complex convention (the adjoint transform with the dual normalisation; the one-sided
transforms account for their Hermitian half as torch's ``fft_r2c_backward`` and
``fft_c2r_backward`` do).

>>> import lucid
>>> lucid.fft.rfft(lucid.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

from lucid import _creation, dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops import roll
from lucid.ops._util import add_out as _add_out
from lucid.ops._util import index_int, normalize_dim
from lucid.ops.complex import complex_dtype, conj, real_dtype

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn",
    "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

_NORMS = ("backward", "forward", "ortho")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check_norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'Invalid normalization mode: "{norm}"')
    return norm


def _scale(n: int, norm: str, inverse: bool) -> float:
    """The factor of the unscaled sum: 1/n on the "backward" inverse or the "forward" forward
    transform, 1/sqrt(n) for "ortho"."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "backward") == inverse else 1.0


def _fft_module(ctx: Any, name: str) -> Any:
    mod = getattr(ctx.xp, "fft", None)
    if mod is None:
        raise NotImplementedError(
            f"lucid.fft.{name} is not supported on the {ctx.backend.name} backend (its array "
            "namespace has no fft)"
        )
    return mod


def _as(ctx: Any, arr: Any, dt: dtypes.dtype) -> Any:
    """``arr`` in ``dt``: NumPy < 2 computes every FFT in double precision."""
    return arr if ctx.backend.dtype_of(arr) is dt else ctx.backend.astype(arr, dt)


class FftC2C(Function):
    """The complex transform of one dim (``inverse`` picks the sign of the exponent)."""

    complex_aware = True

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, inverse: bool, norm: str) -> Any:
        ctx.dim, ctx.inverse, ctx.norm = dim, inverse, norm
        n = a.shape[dim]
        mod = _fft_module(ctx, "ifft" if inverse else "fft")
        # numpy/mlx's ifft divides by n: undo that into the requested factor
        raw = mod.ifft(a, axis=dim) if inverse else mod.fft(a, axis=dim)
        factor = _scale(n, norm, inverse) * (n if inverse else 1)
        out = raw if factor == 1.0 else raw * factor
        return _as(ctx, out, ctx.backend.dtype_of(a))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # the adjoint: the opposite direction with the dual normalisation
        return FftC2C.apply(g, ctx.dim, not ctx.inverse, _DUAL[ctx.norm]), None, None, None


class FftR2C(Function):
    """The one-sided transform of a real dim (``n // 2 + 1`` outputs)."""

    complex_aware = True

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, norm: str) -> Any:
        n = a.shape[dim]
        ctx.dim, ctx.norm, ctx.n = dim, norm, n
        raw = _fft_module(ctx, "rfft").rfft(a, axis=dim)
        factor = _scale(n, norm, False)
        out = raw if factor == 1.0 else raw * factor
        return _as(ctx, out, complex_dtype(ctx.backend.dtype_of(a)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # torch's fft_r2c_backward: zero-fill the missing half, inverse c2c, real part
        full = Resize.apply(g, ctx.dim, ctx.n)
        return FftC2C.apply(full, ctx.dim, True, _DUAL[ctx.norm]).real, None, None


class FftC2R(Function):
    """The real inverse of a one-sided spectrum of ``n // 2 + 1`` entries along ``dim``."""

    complex_aware = True

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, n: int, norm: str) -> Any:
        ctx.dim, ctx.norm, ctx.n = dim, norm, n
        raw = _fft_module(ctx, "irfft").irfft(a, n=n, axis=dim)
        factor = _scale(n, norm, True) * n
        out = raw if factor == 1.0 else raw * factor
        return _as(ctx, out, real_dtype(ctx.backend.dtype_of(a)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # torch's fft_c2r_backward: rfft, then double the entries whose mirror image lies
        # outside the one-sided half (1 .. n - (n // 2 + 1))
        gi = FftR2C.apply(g, ctx.dim, _DUAL[ctx.norm])
        m = gi.shape[ctx.dim]
        double = ctx.n - m
        if double > 0:
            w = [1.0] * m
            w[1 : 1 + double] = [2.0] * double
            shape = [1] * gi.ndim
            shape[ctx.dim] = m
            weights = _creation.tensor(w, dtype=real_dtype(gi.dtype), device=gi.device)
            gi = gi * weights.reshape(shape)
        return gi, None, None, None


class Resize(Function):
    """Trim or zero-pad ``dim`` to ``n`` entries (the ``n``/``s`` arguments)."""

    complex_aware = True

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, n: int) -> Any:
        ctx.dim, ctx.size = dim, a.shape[dim]
        return _resize_array(ctx.xp, a, dim, n)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return Resize.apply(g, ctx.dim, ctx.size), None, None


def _resize_array(xp: Any, a: Any, dim: int, n: int) -> Any:
    size = a.shape[dim]
    if n <= size:
        index = [slice(None)] * a.ndim
        index[dim] = slice(0, n)
        return a[tuple(index)]
    shape = list(a.shape)
    shape[dim] = n - size
    return xp.concatenate([a, xp.zeros(tuple(shape), dtype=a.dtype)], axis=dim)


# -- argument handling ----------------------------------------------------------------------


def _resize(x: Tensor, dim: int, n: int) -> Tensor:
    return x if x.shape[dim] == n else Resize.apply(x, dim, n)


def _fft_dim(dim: int, ndim: int) -> int:
    """``dim`` wrapped as torch's FFTs wrap it: a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_dim(dim, ndim)


def _check_n(n: int, name: str = "n") -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _to_complex(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a Tensor as input, got {type(x).__name__}")
    if x.dtype.is_complex:
        return x
    return x.to(complex_dtype(_float(x).dtype))


def _float(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a Tensor as input, got {type(x).__name__}")
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return x
    return x.to(dtypes.get_default_dtype())


def _real_input(x: Tensor, name: str) -> Tensor:
    x = _float(x)
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {x.dtype.name}")
    return x


def _dims_and_sizes(
    x: Tensor, s: Sequence[int] | None, dim: int | Sequence[int] | None, default_all: bool
) -> tuple[list[int], list[int | None]]:
    """torch's rules for ``s`` and ``dim``: ``dim`` alone names the dims; ``s`` alone the last
    ``len(s)`` dims; neither: every dim (``fftn``) or the last two (``fft2``, given as dim)."""
    one = index_int(dim)
    dims_given: Sequence[int] | None = (
        [one] if one is not None else cast("Sequence[int] | None", dim)
    )
    if s is not None:
        s = list(s)
        if dims_given is None:
            dims_given = list(range(x.ndim - len(s), x.ndim))
        elif len(s) != len(dims_given):
            raise RuntimeError(
                f"When given, dim and shape arguments must have the same length, got "
                f"{len(dims_given)} and {len(s)}"
            )
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")  # fmt: skip
    elif dims_given is None:
        dims_given = list(range(x.ndim)) if default_all else []
    dims = [_fft_dim(int(d), x.ndim) for d in dims_given]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes: list[int | None] = [None] * len(dims)
    if s is not None:
        for i, v in enumerate(s):
            if int(v) != -1:
                _check_n(int(v))
                sizes[i] = int(v)
    return dims, sizes


# -- complex transforms ---------------------------------------------------------------------


def _c2c(x: Tensor, dims: list[int], sizes: list[int | None], inverse: bool, norm: str) -> Tensor:
    x = _to_complex(x)
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
        if x.shape[d] < 1:
            _check_n(x.shape[d])
        x = FftC2C.apply(x, d, inverse, norm)
    return x


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``, trimmed or
    zero-padded to ``n`` points first. ``norm``: "backward" (no scaling, the default),
    "forward" (1/n) or "ortho" (1/sqrt(n)). Real inputs give complex results."""
    x = _to_complex(input)
    if n is not None:
        _check_n(n)
    return _c2c(x, [_fft_dim(dim, x.ndim)], [n], False, _check_norm(norm))


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`fft` ("backward" scales by 1/n)."""
    x = _to_complex(input)
    if n is not None:
        _check_n(n)
    return _c2c(x, [_fft_dim(dim, x.ndim)], [n], True, _check_norm(norm))


def fftn(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional transform over ``dim`` (all dims by default; the last ``len(s)`` when
    only ``s`` is given), each trimmed or padded to ``s``."""
    x = _to_complex(input)
    dims, sizes = _dims_and_sizes(x, s, dim, True)
    return _c2c(x, dims, sizes, False, _check_norm(norm))


def ifftn(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The inverse of :func:`fftn`."""
    x = _to_complex(input)
    dims, sizes = _dims_and_sizes(x, s, dim, True)
    return _c2c(x, dims, sizes, True, _check_norm(norm))


def fft2(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """The two-dimensional transform (:func:`fftn` over the last two dims by default)."""
    return fftn(input, s, dim, norm)


def ifft2(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """The inverse of :func:`fft2`."""
    return ifftn(input, s, dim, norm)


# -- real transforms ------------------------------------------------------------------------


def _r2c(x: Tensor, dims: list[int], sizes: list[int | None], norm: str, name: str) -> Tensor:
    """rfft over the last of ``dims``, then fft over the others (as torch's rfftn)."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = dims[-1]
    if sizes[-1] is not None:
        x = _resize(x, last, sizes[-1])
    _check_n(x.shape[last])
    out = FftR2C.apply(x, last, norm)
    return _c2c(out, dims[:-1], sizes[:-1], False, norm)


def _c2r(x: Tensor, dims: list[int], sizes: list[int | None], norm: str, name: str) -> Tensor:
    """ifft over all but the last of ``dims``, then irfft over the last (as torch's irfftn)."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _c2c(x, dims[:-1], sizes[:-1], True, norm)
    last = dims[-1]
    n = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[last] - 1)
    _check_n(n)
    x = _resize(x, last, n // 2 + 1)
    return FftC2R.apply(x, last, n, norm)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The transform of a real signal, one-sided: the ``n // 2 + 1`` non-negative
    frequencies."""
    x = _real_input(input, "rfft")
    if n is not None:
        _check_n(n)
    return _r2c(x, [_fft_dim(dim, x.ndim)], [n], _check_norm(norm), "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`rfft`: a real signal of ``n`` points (``2 * (m - 1)`` by default,
    for ``m`` input frequencies)."""
    x = _to_complex(input)
    if n is not None:
        _check_n(n)
    return _c2r(x, [_fft_dim(dim, x.ndim)], [n], _check_norm(norm), "irfft")


def rfftn(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional transform of a real input, one-sided in the last of ``dim``."""
    x = _real_input(input, "rfftn")
    dims, sizes = _dims_and_sizes(x, s, dim, True)
    return _r2c(x, dims, sizes, _check_norm(norm), "rfftn")


def irfftn(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The inverse of :func:`rfftn`."""
    x = _to_complex(input)
    dims, sizes = _dims_and_sizes(x, s, dim, True)
    return _c2r(x, dims, sizes, _check_norm(norm), "irfftn")


def rfft2(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """:func:`rfftn` over the last two dims."""
    return rfftn(input, s, dim, norm)


def irfft2(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """:func:`irfftn` over the last two dims."""
    return irfftn(input, s, dim, norm)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its one-sided half: a real
    result of ``n`` points (``irfft`` of the conjugate, with the normalisation swapped)."""
    x = conj(_to_complex(input))
    if n is not None:
        _check_n(n)
    return _c2r(x, [_fft_dim(dim, x.ndim)], [n], _DUAL[_check_norm(norm)], "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`hfft`: the one-sided half of a real signal's inverse transform."""
    x = _real_input(input, "ihfft")
    if n is not None:
        _check_n(n)
    dims = [_fft_dim(dim, x.ndim)]
    return conj(_r2c(x, dims, [n], _DUAL[_check_norm(norm)], "ihfft"))


def hfftn(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional :func:`hfft` (one-sided in the last of ``dim``)."""
    x = conj(_to_complex(input))
    dims, sizes = _dims_and_sizes(x, s, dim, True)
    return _c2r(x, dims, sizes, _DUAL[_check_norm(norm)], "hfftn")


def ihfftn(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional :func:`ihfft`."""
    x = _real_input(input, "ihfftn")
    dims, sizes = _dims_and_sizes(x, s, dim, True)
    return conj(_r2c(x, dims, sizes, _DUAL[_check_norm(norm)], "ihfftn"))


def hfft2(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """:func:`hfftn` over the last two dims."""
    return hfftn(input, s, dim, norm)


def ihfft2(
    input: Tensor,  # noqa: A002
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """:func:`ihfftn` over the last two dims."""
    return ihfftn(input, s, dim, norm)


# -- helpers --------------------------------------------------------------------------------


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an ``n``-point :func:`fft` with spacing ``d``:
    ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -n//2, ..., -1] / (d * n)``, in the default float."""
    pos = list(range((n - 1) // 2 + 1))
    neg = list(range(-(n // 2), 0))
    vals = [v / (d * n) for v in pos + neg]
    return _creation.tensor(vals, dtype=dtype or dtypes.get_default_dtype(), device=device,
                            requires_grad=requires_grad)  # fmt: skip


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an ``n``-point :func:`rfft`: ``[0, 1, ..., n//2] / (d * n)``."""
    vals = [v / (d * n) for v in range(n // 2 + 1)]
    return _creation.tensor(vals, dtype=dtype or dtypes.get_default_dtype(), device=device,
                            requires_grad=requires_grad)  # fmt: skip


def _shift_dims(x: Tensor, dim: int | Sequence[int] | None) -> list[int]:
    if dim is None:
        return list(range(x.ndim))
    one = index_int(dim)
    if one is not None:
        return [normalize_dim(one, x.ndim)]
    return [normalize_dim(int(d), x.ndim) for d in cast("Sequence[int]", dim)]


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:  # noqa: A002
    """The zero frequency moved to the middle: a roll by ``n // 2`` along each of ``dim`` (all
    dims by default)."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`fftshift`: a roll by ``-(n // 2)``."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input
    return roll(input, [-(input.shape[d] // 2) for d in dims], dims)


# torch's out= on the functions that take it (lucid.ops._util.with_out)
_OUT = """
    fftfreq rfftfreq
"""
_add_out(globals(), _OUT, factory=_OUT)
