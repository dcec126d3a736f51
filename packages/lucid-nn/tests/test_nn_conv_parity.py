"""Convolution layers vs PyTorch: same weights -> same outputs and gradients (float32)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-5


def _copy_params(mine, theirs):
    for name, p in theirs.named_parameters():
        getattr(mine, name).data = lucid.from_numpy(p.detach().numpy().copy())


def _check(mine, theirs, x_shape, seed=0, **call):
    rng = np.random.default_rng(seed)
    _copy_params(mine, theirs)
    x = rng.standard_normal(x_shape).astype(np.float32)
    lx = lucid.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    ly, ty = mine(lx, **call), theirs(tx, **call)
    assert ly.shape == tuple(ty.shape)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
    g = rng.standard_normal(ly.shape).astype(np.float32)
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    for name, p in theirs.named_parameters():
        mine_grad, want = getattr(mine, name).grad.numpy(), p.grad.numpy()
        # A weight gradient sums batch * positions products: an entry near 0 among entries of
        # ~100 carries the float32 rounding of those (~1e-6 of the largest), whichever order
        # the sums take (lucid's threaded and inline paths differ, as BLAS's do).
        atol = max(ATOL * 10, 2e-6 * float(np.abs(want).max()))
        np.testing.assert_allclose(mine_grad, want, rtol=RTOL, atol=atol)


@pytest.mark.parametrize(
    "args,kwargs,x_shape",
    [
        ((1, 6, 5), dict(padding=2), (4, 1, 28, 28)),  # LeNet conv1
        ((6, 16, 5), {}, (4, 6, 14, 14)),  # LeNet conv2
        ((8, 8, 3), dict(padding=1, bias=False), (3, 8, 10, 10)),
        ((4, 6, (3, 5)), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2)), (2, 4, 9, 11)),
        ((4, 8, 3), dict(groups=4, padding="same"), (2, 4, 7, 7)),  # depthwise x2
        ((6, 4, 4), dict(groups=2, padding="same", padding_mode="reflect"), (2, 6, 8, 8)),
        ((3, 5, 3), dict(padding=1, padding_mode="circular"), (2, 3, 6, 6)),
        ((3, 5, 3), dict(padding=2, padding_mode="replicate", stride=2), (2, 3, 7, 6)),
        ((16, 24, 3), dict(padding=1), (12, 16, 20, 20)),  # big enough for the threaded path
        ((8, 8, 3), dict(groups=8, stride=2, padding=1), (2, 8, 9, 9)),  # depthwise
        ((32, 32, 3), dict(groups=32, padding=1), (8, 32, 24, 24)),  # depthwise, larger
    ],
)
def test_conv2d_parity(args, kwargs, x_shape):
    _check(nn.Conv2d(*args, **kwargs), torch.nn.Conv2d(*args, **kwargs), x_shape)


def test_conv1d_conv3d_parity():
    _check(nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=2),
           torch.nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=2), (2, 3, 12))  # fmt: skip
    _check(nn.Conv3d(2, 4, 3, padding=1, groups=2), torch.nn.Conv3d(2, 4, 3, padding=1, groups=2),
           (2, 2, 5, 4, 6))  # fmt: skip


@pytest.mark.parametrize(
    "args,kwargs,x_shape,call",
    [
        ((8, 4, 3), dict(stride=2, padding=1, output_padding=1), (2, 8, 5, 5), {}),
        ((4, 6, 4), dict(stride=2, padding=1, groups=2, bias=False), (2, 4, 4, 4), {}),
        ((3, 2, 3), dict(stride=3, dilation=2), (1, 3, 4, 5), {}),
        ((8, 4, 3), dict(stride=2, padding=1), (2, 8, 5, 5), dict(output_size=(10, 10))),
        ((4, 4, 3), dict(stride=2, groups=4), (2, 4, 5, 5), {}),  # depthwise
    ],
)
def test_conv_transpose2d_parity(args, kwargs, x_shape, call):
    mine, theirs = nn.ConvTranspose2d(*args, **kwargs), torch.nn.ConvTranspose2d(*args, **kwargs)
    _check(mine, theirs, x_shape, **call)


def test_conv_transpose1d_parity():
    _check(nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1),
           torch.nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1), (2, 4, 7))  # fmt: skip


def test_conv_default_init_statistics_match_pytorch():
    torch.manual_seed(0)
    mine = np.concatenate([nn.Conv2d(32, 16, 3).weight.detach().numpy().ravel() for _ in range(8)])
    theirs = np.concatenate([torch.nn.Conv2d(32, 16, 3).weight.detach().numpy().ravel()
                             for _ in range(8)])  # fmt: skip
    assert abs(mine.std() - theirs.std()) < 0.03 * theirs.std()
    assert abs(np.abs(mine).max() - np.abs(theirs).max()) < 0.01 * np.abs(theirs).max()
    mb = np.concatenate([nn.ConvTranspose2d(8, 16, 3).bias.detach().numpy() for _ in range(64)])
    tb = np.concatenate([torch.nn.ConvTranspose2d(8, 16, 3).bias.detach().numpy()
                         for _ in range(64)])  # fmt: skip
    assert abs(np.abs(mb).max() - np.abs(tb).max()) < 0.02 * np.abs(tb).max()
