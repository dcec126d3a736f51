"""``unfold`` (im2col) and ``fold`` (col2im) over 4-D inputs, as ``torch.nn.functional``.

``unfold`` copies every sliding block of a padded ``(N, C, H, W)`` input into columns
``(N, C * kh * kw, L)`` from one strided window view; ``fold`` sums columns back with one
strided add per kernel tap. Each is the other's adjoint, so they are each other's backward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lucid import Tensor
from lucid.autograd.function import Function
from lucid.kernels import ConvGeometry, out_size
from lucid.nn.functional._util import check_tensor, int_list, size_at

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


def _pair(v: Any, name: str, fn: str) -> list[int]:
    """torch.nn.functional's ``_pair`` (a sequence as it is, else two of it), read as ints."""
    return int_list(fn, v, name, 2)


def _check_sizes(**args: list[int]) -> None:
    """ATen's im2col/col2im: each int list has two values."""
    for name, values in args.items():
        if len(values) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")


def _check_params(k: list[int], d: list[int], p: list[int], s: list[int], im2col: bool) -> None:
    """ATen's ``im2col_shape_check``/``col2im_shape_check`` on the kernel's parameters (the
    stride's check comes first in col2im's)."""
    checks = [  # (values, words, whether 0 is allowed)
        (k, "kernel size should be greater than zero, but got kernel_height: {} "
            "kernel_width: {}", False),
        (s, "stride should be greater than zero, but got stride_height: {} stride_width: {}",
         False),
        (d, "dilation should be greater than zero, but got dilation_height: {} "
            "dilation_width: {}", False),
        (p, "padding should be non-negative, but got pad_height: {} pad_width: {}", True),
    ]  # fmt: skip
    if im2col:
        checks = [checks[0], checks[2], checks[3], checks[1]]
    for values, message, zero_ok in checks:
        if any(v < 0 or (v == 0 and not zero_ok) for v in values):
            raise RuntimeError(message.format(*values))


def _blocks(size: Sequence[int], k: Sequence[int], d: Sequence[int], p: Sequence[int],
            s: Sequence[int]) -> tuple[int, int]:  # fmt: skip
    """The number of sliding blocks along H and W (ATen's ``div_rtn`` arithmetic)."""
    h, w = ((size[a] + 2 * p[a] - (d[a] * (k[a] - 1) + 1)) // s[a] + 1 for a in range(2))
    return h, w


def unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Sliding blocks of ``(N, C, H, W)`` as columns ``(N, C * prod(kernel_size), L)``.

    >>> unfold(lucid.randn(2, 3, 5, 5), kernel_size=3).shape
    (2, 27, 9)
    """
    fn = "im2col"
    k, d = _pair(kernel_size, "kernel_size", fn), _pair(dilation, "dilation", fn)
    p, s = _pair(padding, "padding", fn), _pair(stride, "stride", fn)
    check_tensor(fn, input)
    _check_sizes(kernel_size=k, dilation=d, padding=p, stride=s)
    _check_params(k, d, p, s, im2col=True)
    shape = input.shape
    ndim = len(shape)
    valid = size_at(shape, 1) != 0 and size_at(shape, 2) != 0
    if not ((ndim == 3 and shape[0] and valid) or (ndim == 4 and valid and shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           "other non-zero dimensions for input, but got: "
                           f"{list(shape)}")  # fmt: skip
    in_h, in_w = shape[-2:]
    out_h, out_w = _blocks((in_h, in_w), k, d, p, s)
    if out_h < 1 or out_w < 1:
        raise RuntimeError(f"Given input with spatial size ({in_h}, {in_w}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"calculated shape of the array of sliding blocks as ({out_h}, "
                           f"{out_w}), but its components must be at least one.")  # fmt: skip
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    g = _geometry(x.shape[2:], tuple(k), tuple(d), tuple(p), tuple(s))
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
    fn = "col2im"
    size = _pair(output_size, "output_size", fn)
    k, d = _pair(kernel_size, "kernel_size", fn), _pair(dilation, "dilation", fn)
    p, s = _pair(padding, "padding", fn), _pair(stride, "stride", fn)
    check_tensor(fn, input)
    _check_sizes(output_size=size, kernel_size=k, dilation=d, padding=p, stride=s)
    _check_params(k, d, p, s, im2col=False)
    shape = input.shape
    ndim = len(shape)
    if not (
        (ndim == 2 and shape[0] != 0 and shape[1] != 0)
        or (ndim == 3 and shape[1] != 0 and shape[2] != 0)
    ):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           "size and non-zero dimensions for input, but got: "
                           f"{list(shape)}")  # fmt: skip
    planes, length = shape[-2:]
    if planes % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and "
                           f"kernel_size=({k[0]}, {k[1]}).")  # fmt: skip
    bh, bw = _blocks(size, k, d, p, s)
    given = (
        f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
        f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
    )
    if length != bh * bw:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={length}.")  # fmt: skip
    if bh < 1 or bw < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as ({bh}, "
                           f"{bw}), which is too small (non-positive)")  # fmt: skip
    if size[0] < 1 or size[1] < 1:
        raise RuntimeError("Expected output spatial size to be positive, but got: "
                           f"output_size=({size[0]}, {size[1]}).")  # fmt: skip
    batched = input.ndim == 3
    cols = input if batched else input.unsqueeze(0)
    g = _geometry(tuple(size), tuple(k), tuple(d), tuple(p), tuple(s))
    out: Tensor = _Fold.apply(cols, g)
    return out if batched else out.squeeze(0)
