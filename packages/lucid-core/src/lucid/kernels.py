"""Fused-op contracts: what a backend kernel for conv, pool, norm, attention ... implements.

An op that a backend may replace with a fused kernel names its contract (``Function.kernel``).
A contract is a typed key of ``Backend.kernels``: ``kernels.CONV.register(backend, MyConv)`` is
checked by mypy against the contract's ``Protocol`` and at run time against its arity, and
``Function.apply`` runs the registered class instead of the op's own. Function-level kernels have
``forward(ctx, ...)``/``backward(ctx, ...)`` staticmethods of the Function they replace (``ctx``
is that Function's node). ``CONV_ARRAYS`` is one level lower: the array kernels that lucid.nn's
convolution Functions call (forward, input gradient, weight gradient), so a backend that only
speeds up the arithmetic keeps the double backward the Functions compose from them;
``MAX_POOL_ARRAYS`` is the same for max pooling (``MaxPoolArrays`` is its plain array code).

The geometry the convolution and pooling kernels share is here too (``ConvGeometry``,
``conv_geometry``, ``pool_geometry``), with the channels-last im2col layout helpers, so that
lucid.nn's reference implementations and every backend compute the same windows.

>>> g = conv_geometry((28, 28), (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1)
>>> g.out_size
(28, 28)
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from lucid.backends import Backend

__all__ = [
    "AVG_POOL",
    "BATCH_NORM",
    "CONTRACTS",
    "CONV",
    "CONV_ARRAYS",
    "CONV_TRANSPOSE",
    "ERF",
    "ERFC",
    "ERFINV",
    "GELU",
    "LAYER_NORM",
    "LOG_SOFTMAX",
    "MAX_POOL",
    "MAX_POOL_ARRAYS",
    "RELU_GRAD",
    "SDPA",
    "SOFTMAX",
    "ConvGeometry",
    "KernelContract",
    "MaxPoolArrays",
    "Pairs",
    "avg_pool_divisor",
    "channels_first",
    "channels_last",
    "conv_geometry",
    "im2col",
    "out_size",
    "pad_planes",
    "pad_spatial",
    "pool_geometry",
    "scatter_taps",
    "transpose_geometry",
    "weight_from_matrix",
    "weight_matrix",
    "windows",
]

Pairs = tuple[tuple[int, int], ...]
Ints = tuple[int, ...]
ImplT = TypeVar("ImplT")


# -- geometry -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConvGeometry:
    """Where each kernel tap reads: everything but the batch and channel counts.

    Convolution, its transpose (the geometry of the convolution it is the input gradient of),
    pooling (``groups == 1``) and unfold all describe their windows with it.
    """

    kernel: Ints
    stride: Ints
    dilation: Ints
    pad_lo: Ints
    pad_hi: Ints
    in_size: Ints
    out_size: Ints
    groups: int

    @property
    def nd(self) -> int:
        """The number of spatial dimensions."""
        return len(self.kernel)

    @property
    def padded(self) -> Ints:
        """The padded input size along each spatial dimension."""
        return tuple(i + lo + hi for i, lo, hi in zip(self.in_size, self.pad_lo, self.pad_hi))

    @property
    def window(self) -> Ints:
        """The dilated kernel's extent along each spatial dimension."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))

    @property
    def taps(self) -> int:
        """The number of kernel positions (the product of the kernel size)."""
        return math.prod(self.kernel)

    def tap_slices(self, tap: Ints) -> tuple[slice, ...]:
        """The padded-input positions kernel tap ``tap`` reads, one slice per spatial dim."""
        return tuple(
            slice(i * d, i * d + s * (o - 1) + 1, s)
            for i, d, s, o in zip(tap, self.dilation, self.stride, self.out_size)
        )

    def all_taps(self) -> Iterator[Ints]:
        """Every kernel position, as a tuple of indices."""
        return itertools.product(*(range(k) for k in self.kernel))

    def crop(self) -> tuple[slice, ...]:
        """The spatial slices that cut the unpadded input out of the padded one."""
        return tuple(slice(lo, lo + i) for lo, i in zip(self.pad_lo, self.in_size))


def out_size(in_size: Ints, window: Ints, stride: Ints, pad_lo: Ints, pad_hi: Ints) -> Ints:
    """The output size along each spatial dimension of a window sliding with ``stride`` over padded
    input."""
    return tuple(
        (i + lo + hi - w) // s + 1
        for i, w, s, lo, hi in zip(in_size, window, stride, pad_lo, pad_hi)
    )


def conv_geometry(
    in_size: Sequence[int], kernel: Sequence[int], stride: Ints, padding: Pairs, dilation: Ints,
    groups: int
) -> ConvGeometry:  # fmt: skip
    """The geometry of a convolution; ``padding`` holds one ``(before, after)`` pair per dim."""
    lo = tuple(p[0] for p in padding)
    hi = tuple(p[1] for p in padding)
    window = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    out = out_size(tuple(in_size), window, stride, lo, hi)
    return ConvGeometry(tuple(kernel), stride, dilation, lo, hi, tuple(in_size), out, groups)


def transpose_geometry(
    in_size: Sequence[int], kernel: Sequence[int], stride: Ints, padding: Pairs,
    output_padding: Ints, dilation: Ints, groups: int
) -> ConvGeometry:  # fmt: skip
    """The geometry of the convolution whose input gradient a transposed convolution is."""
    lo = tuple(p[0] for p in padding)
    hi = tuple(p[1] for p in padding)
    full = tuple(
        (i - 1) * s - a - b + d * (k - 1) + op + 1
        for i, s, a, b, d, k, op in zip(in_size, stride, lo, hi, dilation, kernel, output_padding)
    )
    return ConvGeometry(tuple(kernel), stride, dilation, lo, hi, full, tuple(in_size), groups)


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # PyTorch: the last window must start inside the input or its left padding
    return out


def pool_geometry(
    in_size: Sequence[int], kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
    ceil_mode: bool
) -> ConvGeometry:  # fmt: skip
    """Windows of a pooling op; ceil_mode's last windows may run past the padding (hi side)."""
    out = tuple(
        _pool_out(i, k, s, p, d, ceil_mode)
        for i, k, s, p, d in zip(in_size, kernel, stride, padding, dilation)
    )
    hi = tuple(
        max(p, (o - 1) * s + d * (k - 1) + 1 - i - p)
        for i, k, s, p, d, o in zip(in_size, kernel, stride, padding, dilation, out)
    )
    return ConvGeometry(kernel, stride, dilation, padding, hi, tuple(in_size), out, 1)


def avg_pool_divisor(xp: Any, g: ConvGeometry, count_include_pad: bool, dtype: Any) -> Any:
    """1 / (elements averaged) for each output position, PyTorch's rule (broadcastable)."""
    count: Any = None
    for a in range(g.nd):
        start = xp.arange(g.out_size[a]) * g.stride[a] - g.pad_lo[a]
        end = xp.minimum(start + g.kernel[a], g.in_size[a] + g.pad_lo[a])
        if count_include_pad:
            size = end - start
        else:
            size = xp.minimum(end, g.in_size[a]) - xp.maximum(start, 0)
        size = xp.reshape(size, (-1,) + (1,) * (g.nd - 1 - a))
        count = size if count is None else count * size
    return (1.0 / count).astype(dtype)


# -- the channels-last im2col layout ----------------------------------------------------------
def channels_last(arr: Any, xp: Any) -> Any:
    """``(N, C, *S)`` -> a ``(N, *S, C)`` view."""
    return xp.transpose(arr, (0, *range(2, arr.ndim), 1))


def channels_first(arr: Any, xp: Any) -> Any:
    """``(N, *S, C)`` -> a ``(N, C, *S)`` view."""
    return xp.transpose(arr, (0, arr.ndim - 1, *range(1, arr.ndim - 1)))


def pad_spatial(xl: Any, g: ConvGeometry, xp: Any, value: float = 0.0) -> Any:
    """Pad the spatial dims of a channels-last array (constant ``value``)."""
    if not any(g.pad_lo) and not any(g.pad_hi):
        return xl
    widths = ((0, 0), *zip(g.pad_lo, g.pad_hi), (0, 0))
    return xp.pad(xl, widths, constant_values=value)


def windows(backend: Any, xpad: Any, g: ConvGeometry) -> Any:
    """Every receptive field of a padded channels-last array: ``(N, *out, ..., *kernel)``.

    The dims between the spatial output dims and the kernel dims are the array's trailing dims
    (channels, or groups and channels). A view: nothing is copied.
    """
    nd = g.nd
    win = backend.sliding_windows(xpad, g.window, tuple(range(1, nd + 1)))
    extra = win.ndim - 1 - 2 * nd
    index = (
        slice(None),
        *(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, g.out_size)),
        *([slice(None)] * extra),
        *(slice(None, None, d) for d in g.dilation),
    )
    return win[index]


def im2col(backend: Any, xl: Any, g: ConvGeometry) -> Any:
    """Column matrix ``(rows, G, taps * C/G)`` of a channels-last batch, rows = N * prod(out).

    Columns are ordered (kernel taps, input channel of the group), copied once: a contiguous
    matrix, or for one input channel the transpose of one (each tap's column contiguous).
    """
    xp = backend.xp
    n, c = xl.shape[0], xl.shape[-1]
    groups = g.groups
    xpad = pad_spatial(xl, g, xp)
    xpad = xp.reshape(xpad, (n, *xpad.shape[1:-1], groups, c // groups))
    win = windows(backend, xpad, g)  # (n, *out, G, Cg, *kernel)
    nd = g.nd
    rows = n * math.prod(g.out_size)
    if c == 1:
        # One channel: a row-major copy would move runs of one value (a channels-last tap is
        # one number wide). Copy tap by tap instead, each moving whole output rows, into a
        # (taps, rows) matrix; its transpose is the same column matrix (BLAS takes either).
        taps_first = (*range(nd + 3, 2 * nd + 3), 0, *range(1, nd + 1), nd + 1, nd + 2)
        cols_t = xp.reshape(xp.transpose(win, taps_first), (g.taps, rows))
        return xp.reshape(xp.transpose(cols_t), (rows, 1, g.taps))
    perm = (0, *range(1, nd + 1), nd + 1, *range(nd + 3, 2 * nd + 3), nd + 2)
    return xp.reshape(xp.transpose(win, perm), (rows, groups, g.taps * (c // groups)))


def weight_matrix(w: Any, groups: int, xp: Any) -> Any:
    """``(C_out, C/G, *kernel)`` -> ``(G, taps * C/G, C_out/G)`` in im2col's column order."""
    cout, cg = w.shape[0], w.shape[1]
    kernel = w.shape[2:]
    nd = len(kernel)
    w = xp.reshape(w, (groups, cout // groups, cg, *kernel))
    w = xp.transpose(w, (0, *range(3, nd + 3), 2, 1))
    return xp.reshape(w, (groups, math.prod(kernel) * cg, cout // groups))


def weight_from_matrix(wm: Any, kernel: Ints, xp: Any) -> Any:
    """The inverse of ``weight_matrix``."""
    groups, kg, coutg = wm.shape
    nd = len(kernel)
    cg = kg // math.prod(kernel)
    w = xp.reshape(wm, (groups, *kernel, cg, coutg))
    w = xp.transpose(w, (0, nd + 2, nd + 1, *range(1, nd + 1)))
    return xp.reshape(w, (groups * coutg, cg, *kernel))


# -- max pooling in plain array code (lucid.nn's Functions and the backends' fallback) ---------
_ALL = (slice(None), slice(None))


def pad_planes(xp: Any, x: Any, g: ConvGeometry, value: float) -> Any:
    """A channels-first ``(N, C, *spatial)`` array padded by ``value`` to ``g.padded``."""
    if not any(g.pad_lo) and not any(g.pad_hi):
        return x
    return xp.pad(x, ((0, 0), (0, 0), *zip(g.pad_lo, g.pad_hi)), constant_values=value)


def lowest(dt: Any) -> float:
    """A padding value that never wins a window's max: -inf, or the integer dtype's minimum."""
    if dt.is_floating_point:
        return -math.inf
    return -(2 ** (8 * dt.itemsize - 1)) if dt.is_signed else 0


def scatter_taps(xp: Any, parts: Any, shape: tuple[int, ...], g: ConvGeometry, dtype: Any) -> Any:
    """Sum ``parts(tap_number)`` into a zero padded input at each tap's positions; crop.

    When windows do not overlap (stride >= window), each position gets at most one tap: the
    parts are written, not added.
    """
    # Channels-last, as convolution outputs are: the tap writes and the next op read it as is.
    out = channels_first(xp.zeros((shape[0], *g.padded, shape[1]), dtype=dtype), xp)
    disjoint = all(s >= w for s, w in zip(g.stride, g.window))
    for t, tap in enumerate(g.all_taps()):
        where = _ALL + g.tap_slices(tap)
        if disjoint:
            out[where] = parts(t)
        else:
            out[where] += parts(t)
    return out[_ALL + g.crop()]


def _winners(xp: Any, g: Any, idx: Any) -> Any:
    """``t -> g where tap t won, else 0``, computed channels-last (the layout of a pooled
    convolution output, so of ``idx``: mixed layouts make every elementwise op slow).

    A product with the mask is several times faster than ``where``; it differs only in the
    sign of the zeros it writes (``-1 * 0 = -0.0``) and where ``g`` is not finite (inf * 0 is
    nan), so such gradients take ``where``.
    """
    gl = channels_last(g, xp)
    gl = channels_first(xp.reshape(xp.reshape(gl, (-1,)), gl.shape), xp)  # copied if not yet
    if bool(xp.all(xp.isfinite(g))):
        return lambda t: gl * (idx == t)
    zero = xp.zeros((), dtype=g.dtype)
    return lambda t: xp.where(idx == t, gl, zero)


class MaxPoolArrays:
    """``MAX_POOL_ARRAYS`` in plain array code: a few whole-array ops per kernel tap."""

    @staticmethod
    def forward(backend: Any, x: Any, g: ConvGeometry, want_index: bool) -> tuple[Any, Any]:
        """The max over each window (NaN propagates) and, if wanted, the first tap holding it
        (``int8`` tap numbers, ``int32`` from 128 taps), else None."""
        xp = backend.xp
        xpad = pad_planes(xp, x, g, lowest(backend.dtype_of(x)))
        index_type = xp.int8 if g.taps < 128 else xp.int32
        best: Any = None
        idx: Any = None
        for t, tap in enumerate(g.all_taps()):
            v = xpad[_ALL + g.tap_slices(tap)]
            if best is None:
                best = v
                continue
            if want_index:  # the first index array keeps the input's memory order
                win = v > best
                tap_number = xp.asarray(t, dtype=index_type)
                idx = win.astype(index_type) if idx is None else xp.where(win, tap_number, idx)
            best = xp.maximum(best, v)
        if want_index and idx is None:
            idx = xp.zeros(best.shape, dtype=index_type)
        return (backend.copy(best) if g.taps == 1 else best), idx

    @staticmethod
    def scatter(backend: Any, grad: Any, idx: Any, shape: tuple[int, ...], g: ConvGeometry) -> Any:
        """The input gradient ``(N, C, *in)``: each output's ``grad`` at its window's winner."""
        xp = backend.xp
        return scatter_taps(xp, _winners(xp, grad, idx), shape, g, grad.dtype)


# -- the signatures kernels implement ---------------------------------------------------------
# Positional-only, so an implementation may name its parameters as it likes.
class UnaryKernel(Protocol):
    """erf, erfc, erfinv: ``forward(ctx, x)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, /) -> Any: ...
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class ReluGradKernel(Protocol):
    """ReLU's gradient ``g * (out > 0)`` (``out``: ReLU's output): ``forward(ctx, g, out)``;
    ``backward(ctx, h)`` returns ``(h * (out > 0), None)``."""

    @staticmethod
    def forward(ctx: Any, g: Any, out: Any, /) -> Any: ...
    @staticmethod
    def backward(ctx: Any, h: Any, /) -> Any: ...


class SoftmaxKernel(Protocol):
    """softmax, log_softmax: ``forward(ctx, x, dim)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, /) -> Any: ...
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class GeluKernel(Protocol):
    """``forward(ctx, x, approximate)`` with ``approximate`` "none" or "tanh"."""

    @staticmethod
    def forward(ctx: Any, x: Any, approximate: str, /) -> Any: ...
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class ConvKernel(Protocol):
    """conv1d/2d/3d (NC... layout; ``padding`` is one ``(before, after)`` pair per dim)."""

    @staticmethod
    def forward(
        ctx: Any, x: Any, w: Any, bias: Any, stride: Ints, padding: Pairs, dilation: Ints,
        groups: int, /
    ) -> Any: ...  # fmt: skip
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class ConvTransposeKernel(Protocol):
    """conv_transpose1d/2d/3d; ``w`` is ``(C_in, C_out / groups, *kernel)``."""

    @staticmethod
    def forward(
        ctx: Any, x: Any, w: Any, bias: Any, stride: Ints, padding: Pairs, output_padding: Ints,
        groups: int, dilation: Ints, /
    ) -> Any: ...  # fmt: skip
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class MaxPoolKernel(Protocol):
    """max_pool1d/2d/3d; with ``return_indices`` the forward returns ``(out, flat_indices)``."""

    @staticmethod
    def forward(
        ctx: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
        ceil_mode: bool, return_indices: bool, /
    ) -> Any: ...  # fmt: skip
    @staticmethod
    def backward(ctx: Any, g: Any, /, *rest: Any) -> Any: ...


class AvgPoolKernel(Protocol):
    """avg_pool1d/2d/3d."""

    @staticmethod
    def forward(
        ctx: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, ceil_mode: bool,
        count_include_pad: bool, divisor_override: Any, /
    ) -> Any: ...  # fmt: skip
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class BatchNormKernel(Protocol):
    """Training-mode batch norm: ``forward -> (y, batch_mean, batch_var)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, weight: Any, bias: Any, eps: float, /) -> Any: ...
    @staticmethod
    def backward(ctx: Any, g: Any, g_mean: Any, g_var: Any, /) -> Any: ...


class LayerNormKernel(Protocol):
    """Layer norm over the last ``nd`` dims."""

    @staticmethod
    def forward(ctx: Any, x: Any, weight: Any, bias: Any, nd: int, eps: float, /) -> Any: ...
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class SdpaKernel(Protocol):
    """Scaled dot-product attention (``torch.nn.functional.scaled_dot_product_attention``)."""

    @staticmethod
    def forward(
        ctx: Any, q: Any, k: Any, v: Any, attn_mask: Any, dropout_p: float, is_causal: bool,
        scale: Any, /
    ) -> Any: ...  # fmt: skip
    @staticmethod
    def backward(ctx: Any, g: Any, /) -> Any: ...


class ConvArraysKernel(Protocol):
    """Array-level convolution for a geometry; lucid.nn's conv Functions compose these.

    ``forward`` may store column matrices in ``keep`` (a dict, or None when the weight needs
    no gradient); the same dict comes back to ``weight_grad`` as ``kept``, used once.
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None, /
    ) -> Any: ...
    @staticmethod
    def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry, /) -> Any: ...
    @staticmethod
    def weight_grad(
        backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None, /
    ) -> Any: ...
    @staticmethod
    def channel_sum(backend: Any, dy: Any, /) -> Any: ...


class MaxPoolArraysKernel(Protocol):
    """Array-level max pooling for a geometry; lucid.nn's max-pool Functions compose these.

    ``forward`` returns ``(out, idx)``: ``idx`` holds each output's winning tap number (in
    ``g.all_taps()`` order), or is None when not wanted; ``scatter`` gets it back.
    """

    @staticmethod
    def forward(backend: Any, x: Any, g: ConvGeometry, want_index: bool, /) -> tuple[Any, Any]: ...
    @staticmethod
    def scatter(
        backend: Any, grad: Any, idx: Any, shape: tuple[int, ...], g: ConvGeometry, /
    ) -> Any: ...


# -- contracts: the typed keys of ``Backend.kernels`` -----------------------------------------
@dataclass(frozen=True, eq=False)
class KernelContract(Generic[ImplT]):
    """A fused op a backend may implement: its name and the ``Protocol`` its kernel follows."""

    name: str
    protocol: Any

    def register(self, backend: Backend, impl: ImplT) -> None:
        """Run ``impl`` on ``backend`` wherever an op names this contract."""
        self.check(impl)
        backend.kernels[self] = impl

    def get(self, backend: Backend, default: ImplT) -> ImplT:
        """The kernel ``backend`` registered for this contract, else ``default``."""
        found: ImplT = backend.kernels.get(self, default)
        return found

    def check(self, impl: Any) -> None:
        """Raise TypeError unless ``impl`` has each method of the protocol, taking its
        positional arguments."""
        for method, arity in _methods(self.protocol):
            fn = getattr(impl, method, None)
            if not callable(fn):
                raise TypeError(f"a {self.name!r} kernel needs a {method}() method; "
                                f"{impl!r} has none")  # fmt: skip
            try:
                inspect.signature(fn).bind(*range(arity))
            except TypeError:
                raise TypeError(
                    f"{impl!r}.{method} must take the {arity} positional arguments of "
                    f"{self.protocol.__name__}.{method}, got {inspect.signature(fn)}"
                ) from None

    def __repr__(self) -> str:
        return f"KernelContract({self.name!r}, {self.protocol.__name__})"


def _methods(protocol: Any) -> list[tuple[str, int]]:
    out = []
    for name, fn in vars(protocol).items():
        if isinstance(fn, staticmethod):
            params = inspect.signature(fn.__func__).parameters.values()
            out.append((name, sum(p.kind is p.POSITIONAL_ONLY for p in params)))
    return out


SOFTMAX: KernelContract[SoftmaxKernel] = KernelContract("softmax", SoftmaxKernel)
LOG_SOFTMAX: KernelContract[SoftmaxKernel] = KernelContract("log_softmax", SoftmaxKernel)
ERF: KernelContract[UnaryKernel] = KernelContract("erf", UnaryKernel)
ERFC: KernelContract[UnaryKernel] = KernelContract("erfc", UnaryKernel)
ERFINV: KernelContract[UnaryKernel] = KernelContract("erfinv", UnaryKernel)
GELU: KernelContract[GeluKernel] = KernelContract("gelu", GeluKernel)
RELU_GRAD: KernelContract[ReluGradKernel] = KernelContract("relu_grad", ReluGradKernel)
CONV: KernelContract[ConvKernel] = KernelContract("conv", ConvKernel)
CONV_TRANSPOSE: KernelContract[ConvTransposeKernel] = KernelContract(
    "conv_transpose", ConvTransposeKernel
)
MAX_POOL: KernelContract[MaxPoolKernel] = KernelContract("max_pool", MaxPoolKernel)
AVG_POOL: KernelContract[AvgPoolKernel] = KernelContract("avg_pool", AvgPoolKernel)
BATCH_NORM: KernelContract[BatchNormKernel] = KernelContract("batch_norm", BatchNormKernel)
LAYER_NORM: KernelContract[LayerNormKernel] = KernelContract("layer_norm", LayerNormKernel)
SDPA: KernelContract[SdpaKernel] = KernelContract("sdpa", SdpaKernel)
CONV_ARRAYS: KernelContract[ConvArraysKernel] = KernelContract("conv_arrays", ConvArraysKernel)
MAX_POOL_ARRAYS: KernelContract[MaxPoolArraysKernel] = KernelContract(
    "max_pool_arrays", MaxPoolArraysKernel
)

CONTRACTS: tuple[KernelContract[Any], ...] = (
    SOFTMAX, LOG_SOFTMAX, ERF, ERFC, ERFINV, GELU, RELU_GRAD, CONV, CONV_TRANSPOSE, MAX_POOL,
    AVG_POOL, BATCH_NORM, LAYER_NORM, SDPA, CONV_ARRAYS, MAX_POOL_ARRAYS,
)  # fmt: skip
