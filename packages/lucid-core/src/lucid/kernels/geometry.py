"""Window geometry shared by convolution, pooling and unfold: output sizes, padding, strides.

Plain Python on shapes (no arrays), so lucid.nn's Functions, the reference code and every
backend compute the same windows.

>>> g = conv_geometry((28, 28), (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1)
>>> g.out_size
(28, 28)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "ConvGeometry",
    "Ints",
    "Pairs",
    "conv_geometry",
    "out_size",
    "pool_geometry",
    "transpose_geometry",
]

Pairs = tuple[tuple[int, int], ...]
Ints = tuple[int, ...]


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
