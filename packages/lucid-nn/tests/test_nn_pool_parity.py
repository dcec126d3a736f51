"""Pooling layers vs PyTorch: outputs, indices and input gradients (float32)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-6


def _check(mine, theirs, x_shape, relu=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    if relu:
        x = np.maximum(x, 0)  # many ties, as in a real network
    lx = lucid.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    ly, ty = mine(lx), theirs(tx)
    if isinstance(ty, tuple):
        (ly, li), (ty, ti) = ly, ty
        np.testing.assert_array_equal(li.numpy(), ti.numpy())
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
    g = rng.standard_normal(ly.shape).astype(np.float32)
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    "layer,args,kwargs,x_shape",
    [
        ("MaxPool2d", (2,), {}, (2, 3, 8, 8)),
        ("MaxPool2d", (3, 2, 1), dict(return_indices=True), (2, 3, 9, 7)),
        ("MaxPool2d", (3, 2), dict(ceil_mode=True, return_indices=True), (2, 3, 8, 8)),
        ("MaxPool2d", (2, 1, 1, 2), dict(ceil_mode=True), (2, 3, 6, 7)),
        ("MaxPool1d", (3, 2, 1), dict(return_indices=True), (2, 3, 11)),
        ("MaxPool3d", (2,), dict(return_indices=True), (1, 2, 4, 6, 4)),
        ("AvgPool2d", (2,), {}, (2, 3, 8, 8)),
        ("AvgPool2d", (3, 2, 1), dict(count_include_pad=False, ceil_mode=True), (2, 3, 8, 7)),
        ("AvgPool2d", (3, 1, 1), dict(divisor_override=4), (1, 2, 5, 5)),
        ("AvgPool1d", (3, 2, 1), dict(ceil_mode=True), (2, 3, 10)),
        ("AvgPool3d", (2, 2, 1), {}, (1, 2, 4, 5, 4)),
        ("AdaptiveAvgPool2d", ((3, 5),), {}, (2, 3, 7, 9)),
        ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 7)),
        ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
        ("AdaptiveMaxPool2d", ((3, 4),), dict(return_indices=True), (2, 3, 7, 9)),
        ("AdaptiveMaxPool2d", (2,), {}, (2, 3, 8, 8)),
        ("LPPool2d", (2, 3, 2), {}, (2, 3, 7, 7)),
    ],
)
def test_pool_parity(layer, args, kwargs, x_shape):
    _check(getattr(nn, layer)(*args, **kwargs), getattr(torch.nn, layer)(*args, **kwargs),
           x_shape, relu=layer.startswith(("Max", "AdaptiveMax")))  # fmt: skip


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_integer_max_pool_parity(dtype):
    x = np.random.default_rng(0).integers(0, 120, (2, 3, 6, 7)).astype(dtype)
    mine, mi = nn.functional.max_pool2d(lucid.tensor(x), 3, 2, 1, return_indices=True)
    theirs, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    assert mine.numpy().dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    np.testing.assert_array_equal(mi.numpy(), ti.numpy())


@pytest.mark.parametrize(
    "nd,shape,kw",
    [
        (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
        (2, (2, 3, 7, 6), dict(kernel_size=2)),
        (2, (1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
        (3, (1, 2, 5, 4, 4), dict(kernel_size=2, stride=2)),
    ],
)
def test_max_unpool_parity(nd, shape, kw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    pool, unpool = f"MaxPool{nd}d", f"MaxUnpool{nd}d"
    ly, li = getattr(nn, pool)(return_indices=True, **kw)(lucid.tensor(x))
    ty, ti = getattr(torch.nn, pool)(return_indices=True, **kw)(torch.tensor(x))
    np.testing.assert_array_equal(li.numpy(), ti.numpy())
    ly, ty = ly.detach().requires_grad_(), ty.detach().requires_grad_()
    lu = getattr(nn, unpool)(**kw)(ly, li, output_size=shape)
    tu = getattr(torch.nn, unpool)(**kw)(ty, ti, output_size=shape)
    np.testing.assert_allclose(lu.detach().numpy(), tu.detach().numpy(), rtol=RTOL, atol=ATOL)
    g = rng.standard_normal(shape).astype(np.float32)
    lu.backward(lucid.tensor(g))
    tu.backward(torch.tensor(g))
    np.testing.assert_allclose(ly.grad.numpy(), ty.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_max_unpool_errors_match_torch():
    x = torch.randn(1, 2, 4, 4)
    ty, ti = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    ly, li = lucid.tensor(ty.numpy()), lucid.tensor(ti.numpy())
    with pytest.raises(ValueError) as want:
        torch.nn.functional.max_unpool2d(ty, ti, 2, output_size=(7, 7))
    with pytest.raises(ValueError, match=str(want.value).replace("(", r"\(").replace(")", r"\)")):
        nn.functional.max_unpool2d(ly, li, 2, output_size=(7, 7))
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.max_unpool2d(ty, ti * 9, 2)
    with pytest.raises(RuntimeError, match=str(want.value).split(":")[0]):
        nn.functional.max_unpool2d(ly, li * 9, 2)
