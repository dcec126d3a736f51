"""``unfold`` (im2col) and ``fold`` (col2im) over 4-D inputs, as ``torch.nn.functional``.

``unfold`` copies every sliding block of a padded ``(N, C, H, W)`` input into columns
``(N, C * kh * kw, L)`` from one strided window view; ``fold`` sums columns back with one
strided add per kernel tap. Each is the other's adjoint, so they are each other's backward.
"""

from __future__ import annotations

import math
from typing import Any

from lucid import Tensor
from lucid.autograd.function import Function
from lucid.kernels import ConvGeometry, out_size

__all__ = ["fold", "unfold"]

_ALL = (slice(None), slice(None))


def _geometry(in_size: tuple[int, ...], k: Any, d: Any, p: Any, s: Any) -> ConvGeometry:
    window = tuple(di * (ki - 1) + 1 for ki, di in zip(k, d))
    out = out_size(in_size, window, s, p, p)
    return ConvGeometry(k, s, d, p, p, in_size, out, 1)


class _Unfold(Function):
    _node_name = "Im2ColBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, g: ConvGeometry) -> Any:
        ctx.geom, ctx.size = g, x.shape[2:]
        xp = ctx.xp
        n, c = x.shape[:2]
        xpad = xp.pad(x, ((0, 0), (0, 0), *zip(g.pad_lo, g.pad_hi))) if any(g.pad_lo) else x
        win = ctx.backend.sliding_windows(xpad, g.window, (2, 3))
        win = win[
            (*_ALL, *(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, g.out_size)))
            + tuple(slice(None, None, d) for d in g.dilation)
        ]
        cols = xp.transpose(win, (0, 1, 4, 5, 2, 3))  # (N, C, kh, kw, oh, ow)
        return xp.reshape(cols, (n, c * g.taps, math.prod(g.out_size)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return _Fold.apply(g, ctx.geom), None


class _Fold(Function):
    @staticmethod
    def forward(ctx: Any, cols: Any, g: ConvGeometry) -> Any:
        ctx.geom = g
        xp = ctx.xp
        n = cols.shape[0]
        c = cols.shape[1] // g.taps
        blocks = xp.reshape(cols, (n, c, *g.kernel, *g.out_size))
        out = xp.zeros((n, c, *g.padded), dtype=cols.dtype)
        for tap in g.all_taps():
            out[_ALL + g.tap_slices(tap)] += blocks[_ALL + tap]
        crop = tuple(slice(lo, lo + i) for lo, i in zip(g.pad_lo, g.in_size))
        return out[_ALL + crop]

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        return _Unfold.apply(h, ctx.geom), None


def _pair(v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    t = tuple(int(a) for a in v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return (t[0], t[1])


def unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Sliding blocks of ``(N, C, H, W)`` as columns ``(N, C * prod(kernel_size), L)``.

    >>> unfold(lucid.randn(2, 3, 5, 5), kernel_size=3).shape
    (2, 27, 9)
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.ndim}D input of size {list(input.shape)})")  # fmt: skip
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    g = _geometry(x.shape[2:], k, d, p, s)
    if any(o <= 0 for o in g.out_size):
        raise RuntimeError(f"unfold: the kernel {list(k)} (dilation {list(d)}) does not fit in "
                           f"the padded input of size {list(x.shape)}")  # fmt: skip
    out: Tensor = _Unfold.apply(x, g)
    return out if batched else out.squeeze(0)


def fold(
    input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
    stride: Any = 1
) -> Tensor:  # fmt: skip
    """Sum columns ``(N, C * prod(kernel_size), L)`` back into ``(N, C, *output_size)``.

    >>> fold(lucid.ones(1, 4, 4), output_size=3, kernel_size=2).shape
    (1, 1, 3, 3)
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {input.ndim}D input of size "
                           f"{list(input.shape)})")  # fmt: skip
    batched = input.ndim == 3
    cols = input if batched else input.unsqueeze(0)
    size = _pair(output_size, "output_size")
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    g = _geometry(size, k, d, p, s)
    taps = g.taps
    if cols.shape[1] % taps:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={cols.shape[1]} and "
                           f"kernel_size={k}")  # fmt: skip
    if cols.shape[2] != math.prod(g.out_size):
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks "
                           f"{' * '.join(map(str, g.out_size))} = {math.prod(g.out_size)}, but "
                           f"got input.size(2)={cols.shape[2]}.")  # fmt: skip
    out: Tensor = _Fold.apply(cols, g)
    return out if batched else out.squeeze(0)
