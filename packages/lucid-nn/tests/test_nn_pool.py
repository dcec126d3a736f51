"""Pooling: forward vs loop references, float64 gradchecks, indices, errors, layers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(1)


def _t(shape: tuple[int, ...]) -> lucid.Tensor:
    # distinct values: finite differences across a max's tie are meaningless
    n = math.prod(shape)
    vals = RNG.permutation(n).astype(np.float64) / n + RNG.standard_normal(n) * 1e-3
    return lucid.tensor(vals.reshape(shape), dtype=lucid.float64, requires_grad=True)


def _out(size, k, s, p, d, ceil):
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def ref_max_pool2d(x, k, s, p, d, ceil):
    n, c, h, w = x.shape
    oh, ow = _out(h, k, s, p, d, ceil), _out(w, k, s, p, d, ceil)
    out = np.zeros((n, c, oh, ow))
    idx = np.zeros((n, c, oh, ow), dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            cells = [
                (a, b)
                for a in (i * s - p + t * d for t in range(k))
                for b in (j * s - p + t * d for t in range(k))
                if 0 <= a < h and 0 <= b < w
            ]
            vals = np.stack([x[:, :, a, b] for a, b in cells], axis=-1)
            best = vals.argmax(-1)
            out[:, :, i, j] = vals.max(-1)
            idx[:, :, i, j] = np.array([a * w + b for a, b in cells])[best]
    return out, idx


def ref_avg_pool2d(x, k, s, p, ceil, include_pad, divisor=None):
    n, c, h, w = x.shape
    oh, ow = _out(h, k, s, p, 1, ceil), _out(w, k, s, p, 1, ceil)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s - p, j * s - p
            he, we = min(hs + k, h + p), min(ws + k, w + p)
            size = (he - hs) * (we - ws)
            hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
            total = x[:, :, hs:he, ws:we].sum(axis=(2, 3))
            div = divisor or (size if include_pad else (he - hs) * (we - ws))
            out[:, :, i, j] = total / div
    return out


# (kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [(2, 2, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 0, 1, True), (2, 1, 1, 2, True),
             (3, 3, 1, 1, True), (1, 1, 0, 1, False)]  # fmt: skip


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_matches_reference(case):
    k, s, p, d, ceil = case
    x = RNG.standard_normal((2, 3, 7, 8))
    x[0, 0] = 0.0  # ties (as after a ReLU): the first maximum wins, as in PyTorch
    out, idx = F.max_pool2d(lucid.tensor(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    ref, ref_idx = ref_max_pool2d(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(idx.numpy(), ref_idx)
    assert idx.dtype is lucid.int64


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_gradcheck(case):
    k, s, p, d, ceil = case
    x = _t((1, 2, 6, 5))
    assert gradcheck(lambda x: F.max_pool2d(x, k, s, p, d, ceil_mode=ceil), (x,))


@pytest.mark.parametrize("nd", [1, 3])
def test_max_pool_1d_3d_gradcheck(nd):
    x = _t((1, 2) + (5,) * nd)
    pool = F.max_pool1d if nd == 1 else F.max_pool3d
    assert gradcheck(lambda x: pool(x, 3, 2, 1, ceil_mode=True), (x,))


def test_max_pool_propagates_nan_and_gradient_goes_to_first_max():
    x = lucid.tensor([[[1.0, float("nan"), 0.5, 2.0]]], requires_grad=True)
    y = F.max_pool1d(x, 2)
    assert math.isnan(y.array[0, 0, 0]) and y.array[0, 0, 1] == 2.0
    z = lucid.tensor([[[3.0, 3.0, 1.0, 1.0]]], requires_grad=True)
    F.max_pool1d(z, 2).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [[[1.0, 0.0, 1.0, 0.0]]])


def test_max_pool_double_backward():
    x = _t((1, 1, 4, 4))
    assert gradgradcheck(lambda x: F.max_pool2d(x, 2, 1), (x,))


# (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [(2, 2, 0, False, True, None), (3, 2, 1, False, True, None),
             (3, 2, 1, False, False, None), (3, 2, 0, True, True, None),
             (3, 2, 1, True, False, None), (3, 2, 1, True, True, None),
             (2, 1, 1, False, True, 3)]  # fmt: skip


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool2d_matches_reference(case):
    k, s, p, ceil, incl, div = case
    x = RNG.standard_normal((2, 3, 7, 8))
    out = F.avg_pool2d(lucid.tensor(x), k, s, p, ceil, incl, div)
    np.testing.assert_allclose(
        out.numpy(), ref_avg_pool2d(x, k, s, p, ceil, incl, div), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool2d_gradcheck(case):
    k, s, p, ceil, incl, div = case
    x = _t((1, 2, 5, 6))
    assert gradcheck(lambda x: F.avg_pool2d(x, k, s, p, ceil, incl, div), (x,))


@pytest.mark.parametrize("nd", [1, 3])
def test_avg_pool_1d_3d_gradcheck(nd):
    x = _t((1, 2) + (5,) * nd)
    pool = F.avg_pool1d if nd == 1 else F.avg_pool3d
    assert gradcheck(lambda x: pool(x, 3, 2, 1, True, False), (x,))


def test_avg_pool_double_backward():
    x = _t((1, 1, 4, 4))
    assert gradgradcheck(lambda x: F.avg_pool2d(x, 2, 1, 1), (x,))


@pytest.mark.parametrize("out", [1, 3, (2, 4), (None, 3), 7])
def test_adaptive_avg_pool2d_windows(out):
    x = RNG.standard_normal((2, 3, 7, 9))
    y = F.adaptive_avg_pool2d(lucid.tensor(x), out)
    oh, ow = (out, out) if isinstance(out, int) else (out[0] or 7, out[1])
    assert y.shape == (2, 3, oh, ow)
    for i in range(oh):
        for j in range(ow):
            hs, he = i * 7 // oh, -(-(i + 1) * 7 // oh)
            ws, we = j * 9 // ow, -(-(j + 1) * 9 // ow)
            np.testing.assert_allclose(
                y.array[:, :, i, j], x[:, :, hs:he, ws:we].mean(axis=(2, 3)), rtol=1e-10, atol=1e-12
            )


@pytest.mark.parametrize("out", [1, 3, (2, 4)])
def test_adaptive_pools_gradcheck(out):
    x = _t((1, 2, 5, 7))
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, out), (x,))
    assert gradcheck(lambda x: F.adaptive_max_pool2d(x, out), (x,))


def test_adaptive_max_pool2d_indices():
    x = RNG.standard_normal((1, 2, 5, 7))
    y, idx = F.adaptive_max_pool2d(lucid.tensor(x), (2, 3), return_indices=True)
    flat = x.reshape(1, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(1, 2, -1), -1),
                                  y.numpy().reshape(1, 2, -1))  # fmt: skip


def test_lp_pool2d_is_p_norm_of_windows():
    x = RNG.standard_normal((1, 2, 4, 4))
    y = F.lp_pool2d(lucid.tensor(x), 2, 2)
    ref = np.sqrt((x**2).reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5)))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: F.max_pool2d(lucid.randn(1, 1, 4, 4), 3, padding=2), "at most half"),
        (lambda: F.max_pool2d(lucid.randn(4, 4), 2), "3D or 4D .batch mode. tensor expected"),
        (lambda: F.avg_pool2d(lucid.randn(1, 1, 2, 2), 3), "too small"),
        (lambda: F.max_pool2d(lucid.randn(1, 1, 4, 4), 0), "stride should not be zero"),
        (lambda: F.max_pool2d(lucid.randn(1, 1, 4, 4), 0, 1), "kernel size should be greater"),
        (lambda: F.avg_pool2d(lucid.randn(1, 1, 4, 4), 2, divisor_override=0), "not zero"),
    ],
)
def test_pool_errors(call, message):
    with pytest.raises((RuntimeError, ValueError), match=message):
        call()


def test_pool_layers():
    x = lucid.randn(2, 3, 8, 8)
    assert nn.MaxPool2d(2)(x).shape == (2, 3, 4, 4)
    y, idx = nn.MaxPool2d(3, 2, 1, return_indices=True)(x)
    assert y.shape == idx.shape == (2, 3, 4, 4)
    assert nn.AvgPool2d(3, 2, 1)(x).shape == (2, 3, 4, 4)
    assert nn.AdaptiveAvgPool2d((1, 1))(x).shape == (2, 3, 1, 1)
    assert nn.AdaptiveMaxPool2d(3)(x).shape == (2, 3, 3, 3)
    assert nn.MaxPool1d(2)(lucid.randn(2, 3, 8)).shape == (2, 3, 4)
    assert nn.AvgPool3d(2)(lucid.randn(1, 1, 4, 4, 4)).shape == (1, 1, 2, 2, 2)
    assert nn.LPPool2d(2, 2)(x).shape == (2, 3, 4, 4)
    assert repr(nn.MaxPool2d(2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(nn.AvgPool2d(3, 2, 1)) == "AvgPool2d(kernel_size=3, stride=2, padding=1)"
    with pytest.raises(ValueError, match=r"MaxPool2d expected 3D \(unbatched\) or 4D"):
        nn.MaxPool2d(2)(lucid.randn(8, 8))


# -- max pooling of integers ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [lucid.int64, lucid.int32, lucid.int8, lucid.uint8])
def test_max_pool_integer_input_keeps_dtype_and_pads_below_every_value(dtype):
    low = 0 if dtype == lucid.uint8 else -100
    x = lucid.tensor(RNG.integers(low, low + 100, (2, 3, 5, 5)), dtype=dtype)
    y, idx = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    ref, ref_idx = F.max_pool2d(x.double(), 3, stride=2, padding=1, return_indices=True)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=0, atol=0)
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())


def test_max_pool_bool_input_is_not_implemented():
    with pytest.raises(NotImplementedError, match="\"max_pool1d_impl\" not implemented for 'Bool'"):
        F.max_pool1d(lucid.ones(1, 1, 4, dtype=lucid.bool), 2)


# -- max unpooling ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "nd,shape,kw",
    [
        (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
        (2, (2, 2, 5, 6), dict(kernel_size=2)),
        (2, (1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
        (3, (1, 2, 4, 5, 4), dict(kernel_size=2)),
    ],
)
def test_max_unpool_puts_values_back_at_their_argmax(nd, shape, kw):
    x = _t(shape)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
    y, idx = pool(x, return_indices=True, **kw)
    u = unpool(y, idx, output_size=shape[2:], **kw)
    assert u.shape == shape
    flat_u = u.detach().numpy().reshape(*shape[:2], -1)
    flat_x = x.detach().numpy().reshape(*shape[:2], -1)
    where = idx.numpy().reshape(*shape[:2], -1)
    ref = np.zeros_like(flat_x)
    np.put_along_axis(ref, where, np.take_along_axis(flat_x, where, -1), -1)
    np.testing.assert_allclose(flat_u, ref, rtol=0, atol=0)


@pytest.mark.parametrize("nd,shape", [(1, (2, 3, 9)), (2, (2, 2, 5, 6)), (3, (1, 2, 4, 5, 4))])
def test_max_unpool_gradcheck(nd, shape):
    """Windows that do not overlap: no two outputs share an argmax."""
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
    y, idx = pool(_t(shape), 2, return_indices=True)
    y = y.detach().requires_grad_()
    assert gradcheck(lambda a: unpool(a, idx, 2, output_size=shape[2:]), (y,))


def test_max_unpool_default_size_unbatched_and_module():
    x = _t((2, 4, 4))
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    assert F.max_unpool2d(y, idx, 2).shape == (2, 4, 4)
    out = nn.MaxUnpool2d(2)(y.unsqueeze(0), idx.unsqueeze(0), output_size=(1, 2, 5, 5))
    assert out.shape == (1, 2, 5, 5)
    assert repr(nn.MaxUnpool1d(3, 2, 1)) == "MaxUnpool1d(kernel_size=3, stride=2, padding=1)"


def test_max_unpool_double_backward():
    y, idx = F.max_pool2d(_t((1, 2, 4, 4)), 2, return_indices=True)
    assert gradgradcheck(lambda a: F.max_unpool2d(a, idx, 2) ** 2, (y.detach().requires_grad_(),))


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda y, i: F.max_unpool2d(y, i, 2, output_size=(7, 7)), ValueError,
         r'invalid output_size "\(7, 7\)" \(dim 0 must be between 2 and 6\)'),
        (lambda y, i: F.max_unpool2d(y, i, 2, output_size=(4,)), ValueError,
         "2 or 4 elements, but it has a length of '1'"),
        (lambda y, i: F.max_unpool2d(y, i.double(), 2), RuntimeError,
         "type int64 but got: float64"),
        (lambda y, i: F.max_unpool2d(y, i[..., :1], 2), RuntimeError, "same as that of the input"),
        (lambda y, i: F.max_unpool2d(y, i * 9, 2), RuntimeError,
         r"invalid max index: \d+ \(output volumes are of size 4x4\)"),
        (lambda y, i: F.max_unpool2d(y[0, 0], i[0, 0], 2), RuntimeError, "Expected 3D or 4D"),
    ],
)  # fmt: skip
def test_max_unpool_errors(call, error, message):
    y, idx = F.max_pool2d(_t((1, 2, 4, 4)), 2, return_indices=True)
    with pytest.raises(error, match=message):
        call(y.detach(), idx)
