"""Pooling, convolution and fold/unfold argument errors vs PyTorch: the same exception class
and the same words, raised in torch's order (ATen's checks of the kernel size, stride,
padding, dilation and output size come before or after the input's dims as torch's do)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = [
    pytest.mark.parity,
    pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths"),
]


def _both(shape: tuple[int, ...], dtype: str = "float32") -> tuple[lucid.Tensor, object]:
    x = np.random.default_rng(0).random(shape).astype(dtype)
    return lucid.tensor(x), torch.tensor(x)


def _outcome(fn: object, *args: object, **kwargs: object) -> tuple[str, str]:
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return type(exc).__name__, str(exc).splitlines()[0]
    return "returned", ""


T = "tensor"  # an argument that is a tensor of the shape that follows it

CASES = [
    # max_pool1d: its own checks (no indices), max_pool2d's on an H of 1 (with indices)
    ("max_pool1d", (), [], dict(kernel_size=1)),
    ("max_pool1d", (0,), [], dict(kernel_size=1)),
    ("max_pool1d", (3, 3, 3), [], dict(kernel_size=1, stride=0)),
    ("max_pool1d", (3, 3, 3), [], dict(kernel_size=1, dilation=0)),
    ("max_pool1d", (2, 2, 2), [], dict(kernel_size=5)),
    ("max_pool1d", (0, 1, 49), [], dict(kernel_size=0)),
    ("max_pool1d", (2, 2), [], dict(kernel_size=3, padding=2, dilation=2)),
    ("max_pool1d", (2, 2), [], dict(kernel_size=(2, 2))),
    ("max_pool1d", (0, 1, 49), [], dict(kernel_size=2, stride=50, padding=-1, return_indices=True)),
    ("max_pool1d", (), [], dict(kernel_size=1, return_indices=True)),
    ("max_pool1d", (3, 0, 3), [], dict(kernel_size=1, return_indices=True)),
    ("max_pool1d", (2, 2), [], dict(kernel_size=(2, 2), return_indices=True)),
    ("max_pool1d", (2, 2), [], dict(kernel_size=3, padding=2, dilation=2, return_indices=True)),
    # max_pool2d/3d
    ("max_pool2d", (0, 1, 49), [], dict(kernel_size=(3, 2), stride=50, padding=-1)),
    ("max_pool2d", (1, 1, 4), [], dict(kernel_size=2)),
    ("max_pool2d", (2, 2), [], dict(kernel_size=1)),
    ("max_pool2d", (0, 2, 2), [], dict(kernel_size=1)),
    ("max_pool2d", (2, 2, 2), [], dict(kernel_size=0)),
    ("max_pool2d", (2, 2, 2), [], dict(kernel_size=-1)),
    ("max_pool2d", (2, 3, 3), [], dict(kernel_size=(2, 2, 2))),
    ("max_pool2d", (2, 3, 3), [], dict(kernel_size=2, stride=(1, 1, 1))),
    ("max_pool2d", (1, 1, 9, 9), [], dict(kernel_size=3, padding=(2, 1), dilation=2)),
    ("max_pool2d", (1, 1, 9, 9), [], dict(kernel_size=2.5)),
    ("max_pool3d", (0, 1, 49, 50), [], dict(kernel_size=(3, 2, 2), stride=50, padding=-1)),
    ("max_pool3d", (1, 1, 1, 4, 4), [], dict(kernel_size=2)),
    ("max_pool3d", (2, 0, 2, 2), [], dict(kernel_size=1)),
    ("max_pool3d", (1, 1, 9, 9, 9), [], dict(kernel_size=3, padding=(2, 1, 1), dilation=2)),
    ("max_pool3d", (1, 1, 9, 9, 9), [], dict(kernel_size=2, dilation=(1, 1))),
    # avg_pool1d/2d/3d
    ("avg_pool1d", (0, 1, 49), [], dict(kernel_size=2, stride=50, padding=-1)),
    ("avg_pool1d", (2,), [], dict(kernel_size=1)),
    ("avg_pool1d", (1, 3, 3), [], dict(kernel_size=2, stride=(2, 2))),
    ("avg_pool2d", (0, 1, 49), [], dict(kernel_size=2, stride=50, padding=-1)),
    ("avg_pool2d", (2, 2), [], dict(kernel_size=1)),
    ("avg_pool2d", (2, 2, 2, 2, 2), [], dict(kernel_size=1)),
    ("avg_pool2d", (1, 1, 9, 9), [], dict(kernel_size=3, padding=-1, divisor_override=0)),
    ("avg_pool2d", (1, 1, 2, 2), [], dict(kernel_size=3)),
    ("avg_pool3d", (0, 1, 49), [], dict(kernel_size=2, stride=50, padding=0)),
    ("avg_pool3d", (0, 1, 49, 50), [], dict(kernel_size=2, stride=50, padding=-1)),
    ("avg_pool3d", (2, 2, 2, 2), [], dict(kernel_size=3)),
    ("avg_pool3d", (2, 0, 2, 2), [], dict(kernel_size=1)),
    ("avg_pool3d", (1, 1, 9, 9, 9), [], dict(kernel_size=3, padding=(2, 1, 1))),
    ("avg_pool3d", (1, 2, 2, 2, 2), [], dict(kernel_size=1, divisor_override=0)),
    # lp_pool: torch.nn.functional's unpacking, then avg_pool's checks
    ("lp_pool2d", (1, 3, 3), [2], dict(kernel_size=(2, 2, 2))),
    ("lp_pool3d", (1, 3, 3, 3), [2], dict(kernel_size=(2,))),
    ("lp_pool1d", (1, 3, 3), [2], dict(kernel_size=(2, 2))),
    # adaptive pools
    ("adaptive_avg_pool1d", (1, 2, 3), [], dict(output_size=())),
    ("adaptive_avg_pool1d", (1, 1, 1), [], dict(output_size=(-1,))),
    ("adaptive_avg_pool1d", (5, 1, 3), [], dict(output_size=None)),
    ("adaptive_avg_pool2d", (1, 2, 3, 4), [], dict(output_size=())),
    ("adaptive_avg_pool2d", (1, 1, 1, 1), [], dict(output_size=(-1, 0))),
    ("adaptive_avg_pool2d", (3, 3), [], dict(output_size=(2, 2))),
    ("adaptive_avg_pool2d", (3, 3), [], dict(output_size=2)),
    ("adaptive_avg_pool2d", (3, 0, 3), [], dict(output_size=2)),
    ("adaptive_avg_pool3d", (1, 2, 3, 4), [], dict(output_size=())),
    ("adaptive_avg_pool3d", (1, 1, 1, 1, 1), [], dict(output_size=(-1, 0, 2))),
    ("adaptive_avg_pool3d", (3, 0, 3, 3), [], dict(output_size=2)),
    ("adaptive_max_pool1d", (1, 2, 3), [], dict(output_size=())),
    ("adaptive_max_pool1d", (1, 1, 1), [], dict(output_size=(-1,))),
    ("adaptive_max_pool1d", (3, 0), [], dict(output_size=1)),
    ("adaptive_max_pool2d", (1, 2, 3, 4), [], dict(output_size=())),
    ("adaptive_max_pool2d", (1, 1, 1, 1), [], dict(output_size=(-1, 0))),
    ("adaptive_max_pool2d", (3, 3), [], dict(output_size=1)),
    ("adaptive_max_pool3d", (1, 2, 3, 4), [], dict(output_size=())),
    ("adaptive_max_pool3d", (1, 1, 1, 1, 1), [], dict(output_size=(-1, 0, 2))),
    # fractional max pool
    ("fractional_max_pool2d", (7,), [], dict(kernel_size=1)),
    ("fractional_max_pool2d", (2, 5, 5), [], dict(kernel_size=(0, 0, 1), output_size=1)),
    ("fractional_max_pool2d", (3, 7, 3, 7), [], dict(kernel_size=2, output_size=(0, -1, 2))),
    ("fractional_max_pool2d", (1, 1, 2), [], dict(kernel_size=2, output_size=3)),
    ("fractional_max_pool2d", (5, 2, 7, 3), [], dict(kernel_size=1, output_size=-1)),
    ("fractional_max_pool2d", (2, 0, 1), [], dict(kernel_size=(0, 2), output_size=3)),
    ("fractional_max_pool3d", (3, 2, 3, 2, 2), [], dict(kernel_size=3, output_size=1)),
    ("fractional_max_pool3d", (2, 2, 3, 5, 2), [], dict(kernel_size=3, output_size=-1)),
    ("fractional_max_pool3d", (7, 7, 7, 7), [], dict(kernel_size=2, output_size=(3,))),
    # convolutions
    ("conv1d", (1, 1, 4), [T, (1, 2, 2), T, (1,)], dict(stride=(-1,))),
    ("conv1d", (1, 1, 4), [T, (1, 2), T, (1,)], {}),
    ("conv1d", (2, 2, 4), [T, (2, 2, 2), T, (2,)], dict(padding="same", groups=3)),
    ("conv1d", (2, 2, 4), [T, (2, 2, 2), T, (2,)], dict(groups=3)),
    ("conv2d", (1, 1, 4, 4), [T, (1, 2, 2, 3), T, (1,)], dict(stride=(-1,))),
    ("conv2d", (1, 1, 4, 3), [T, (1, 2, 2), T, (1,)], dict(padding="same")),
    ("conv2d", (1, 3, 6, 3), [T, (4, 3, 3, 3)], dict(stride=2, groups=3)),
    ("conv2d", (2, 3, 3), [T, (3, 2, 1, 1)], dict(stride=(1, 2, 2))),
    ("conv2d", (1, 1, 5, 1), [T, (4, 3, 1), T, (4,)], dict(stride=(2,), dilation=2)),
    ("conv2d", (2, 2, 3, 3), [T, (1, 2, 3, 3), T, (2, 2)], {}),
    ("conv2d", (1, 4, 5, 6), [T, (4, 4, 7, 3), T, (4,)], dict(stride=3)),
    ("conv2d", (1, 2, 6), [T, (2, 2, 2, 2)], dict(padding="foo")),
    ("conv2d", (1, 4, 5, 5), [T, (4, 2, 2, 3), T, (4,)], dict(padding="same")),
    ("conv2d", (2, 2, 5, 5), [T, (3, 3, 2, 2)], dict(stride=(1, 2, 2), padding="same")),
    ("conv2d", (1, 2, 6, 0), [T, (2, 2, 1, 2)], dict(padding=2)),
    ("conv3d", (1, 1, 3, 4, 5), [T, (1, 1, 4, 3), T, (1,)], dict(padding="same")),
    ("conv3d", (2, 2, 3, 4, 5), [T, (2, 2, 4, 3, 3), T, (2,)], dict(groups=3)),
    ("conv_transpose1d", (1, 3, 3), [T, (3, 3, 2), T, (3,)], dict(output_padding=1)),
    ("conv_transpose2d", (2, 2, 6, 3), [T, (2, 1, 2, 1)], dict(output_padding=1)),
    ("conv_transpose2d", (1, 4, 6, 3), [T, (4, 3, 1, 2), T, (3,)], dict(dilation=0)),
    ("conv_transpose2d", (1, 3, 3, 3), [T, (2, 3, 3, 3)], {}),
    ("conv_transpose3d", (4, 5, 5, 5), [T, (4, 2, 2, 1, 2)], dict(output_padding=(1,))),
    # unfold / fold
    ("unfold", (3, 3, 2, 5), [], dict(kernel_size=3)),
    ("unfold", (2, 2), [], dict(kernel_size=1)),
    ("unfold", (1, 2, 3, 3), [], dict(kernel_size=(1, 1, 1))),
    ("unfold", (1, 2, 3, 3), [], dict(kernel_size=1, stride=0, padding=-1)),
    ("fold", (1, 9, 4), [3], dict(kernel_size=2)),
    ("fold", (1, 8, 5), [3], dict(kernel_size=2)),
    ("fold", (1, 4, 1), [0], dict(kernel_size=1, padding=1)),
]


def _args(args: list[object]) -> tuple[list[object], list[object]]:
    mine: list[object] = []
    theirs: list[object] = []
    it = iter(args)
    for a in it:
        if a is T:
            lx, tx = _both(next(it))
            mine.append(lx)
            theirs.append(tx)
        else:
            mine.append(a)
            theirs.append(a)
    return mine, theirs


@pytest.mark.parametrize("name,shape,args,kwargs", CASES)
def test_argument_errors_are_torchs(name, shape, args, kwargs):
    lx, tx = _both(shape)
    la, ta = _args(args)
    want = _outcome(getattr(TF, name), tx, *ta, **kwargs)
    assert want[0] != "returned"
    assert _outcome(getattr(F, name), lx, *la, **kwargs) == want


def test_max_pool3d_pad_check_names_each_dim():
    """pool3d_shape_check's words list kT, kW, kH (torch's order), not the arguments'."""
    lx, tx = _both((1, 1, 9, 9, 9))
    kw = dict(kernel_size=(3, 2, 5), padding=(1, 1, 3), dilation=2)
    assert _outcome(F.max_pool3d, lx, **kw) == _outcome(TF.max_pool3d, tx, **kw)


@pytest.mark.parametrize(
    "name,shape,output_size",
    [
        ("adaptive_avg_pool2d", (3, 3), 1),  # torch takes a mean: any rank
        ("adaptive_avg_pool2d", (2, 4, 5, 5), (1, 1)),
        ("adaptive_avg_pool3d", (2, 4, 3), 1),
        ("adaptive_avg_pool2d", (2, 3, 4), (0, 2)),  # an empty output
        ("adaptive_max_pool2d", (2, 3, 4), (2, 0)),
        ("adaptive_avg_pool1d", (0, 5, 2), 3),  # an empty batch
        ("adaptive_max_pool3d", (0, 5, 5, 1, 2), 2),
    ],
)
def test_adaptive_pool_edge_outputs_are_torchs(name, shape, output_size):
    lx, tx = _both(shape)
    mine, theirs = getattr(F, name)(lx, output_size), getattr(TF, name)(tx, output_size)
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("norm", [float("inf"), -float("inf")])
def test_lp_pool_infinite_norm_is_max_pooling(norm):
    lx, tx = _both((1, 2, 6, 6))
    mine, theirs = F.lp_pool2d(lx, norm, 2), TF.lp_pool2d(tx, norm, 2)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def test_fractional_max_pool_empty_output_is_torchs():
    lx, tx = _both((1, 7, 5, 5))
    mine, theirs = F.fractional_max_pool2d(lx, 1, 0), TF.fractional_max_pool2d(tx, 1, 0)
    assert tuple(mine.shape) == tuple(theirs.shape) == (1, 7, 0, 0)
