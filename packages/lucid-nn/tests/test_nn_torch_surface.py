"""Layers and functions added to match torch.nn's surface: finite-difference gradients in
float64, torch's errors for bad input, reprs and state_dict keys."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck

RNG = np.random.default_rng(7)


def t64(*shape: int, grad: bool = True) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=grad)


# ---- padding ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode: str) -> None:
    x = t64(2, 3, 4, 5)
    assert gradcheck(lambda a: F.pad(a, (2, 1, -1, 2), mode), (x,))


def test_pad_values_against_numpy() -> None:
    a = RNG.standard_normal((2, 3, 4))
    x = lucid.tensor(a)
    np.testing.assert_allclose(
        F.pad(x, (2, 1), "reflect").numpy(), np.pad(a, ((0, 0), (0, 0), (2, 1)), "reflect")
    )
    np.testing.assert_allclose(
        F.pad(x, (2, 1, 1, 0), "replicate").numpy(), np.pad(a, ((0, 0), (1, 0), (2, 1)), "edge")
    )
    np.testing.assert_allclose(
        F.pad(x, (2, 1), "circular").numpy(), np.pad(a, ((0, 0), (0, 0), (2, 1)), "wrap")
    )
    np.testing.assert_allclose(
        F.pad(x, (1, 1), value=2.5).numpy(),
        np.pad(a, ((0, 0), (0, 0), (1, 1)), constant_values=2.5),
    )


def test_pad_torch_rules() -> None:
    # non-constant modes pad 1-3 trailing dims of a 2-5D input only
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D"):
        F.pad(lucid.randn(4), (1, 1), "reflect")
    with pytest.raises(RuntimeError, match="other non-zero dimensions"):
        F.pad(lucid.randn(2, 3, 0), (1, 1), "reflect")
    with pytest.raises(RuntimeError, match="other non-zero dimensions"):
        F.pad(lucid.randn(2, 0, 4), (1, 1), "replicate")
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(lucid.randn(2, 3, 4), (4, 0), "reflect")
    with pytest.raises(RuntimeError, match="narrow"):
        F.pad(lucid.randn(2, 3, 4), (-5, 1))
    with pytest.raises(RuntimeError, match="doesn't take in value"):
        F.pad(lucid.randn(2, 3, 4), (1, 1), "reflect", 1.0)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode"):
        F.pad(lucid.randn(2, 3, 4), (1, 1), "mirror")
    # an empty batch pads like any other
    assert F.pad(lucid.randn(0, 3, 4), (1, 2), "reflect").shape == (0, 3, 7)
    assert F.pad(lucid.randn(2, 3, 4), (-4, 0)).shape == (2, 3, 0)


def test_padding_modules() -> None:
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d((1, 2, 3, 4))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert repr(nn.ReflectionPad3d(1)) == "ReflectionPad3d((1, 1, 1, 1, 1, 1))"
    assert nn.ZeroPad3d(1).value == 0.0
    x = lucid.randn(1, 2, 3, 4)
    assert nn.ReplicationPad2d((1, 0, 2, 1))(x).shape == (1, 2, 6, 5)
    assert nn.CircularPad1d(2)(lucid.randn(2, 5)).shape == (2, 9)
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(lucid.randn(4, 4))
    assert nn.ZeroPad1d(1).state_dict() == {}


# ---- normalisation -----------------------------------------------------------------------


def test_rms_norm_values_and_gradcheck() -> None:
    x, w = t64(2, 3, 4), t64(3, 4)
    a = x.detach().numpy()
    want = a / np.sqrt((a * a).mean((1, 2), keepdims=True) + 1e-6) * w.detach().numpy()
    np.testing.assert_allclose(F.rms_norm(x, (3, 4), w, 1e-6).detach().numpy(), want, rtol=1e-12)
    assert gradcheck(lambda a, b: F.rms_norm(a, [4], b[0]), (x, w))
    # eps=None: the dtype's machine epsilon
    z = lucid.zeros(2, 3)
    assert F.rms_norm(z, [3]).numpy().tolist() == [[0.0] * 3] * 2


def test_rms_norm_errors_and_module() -> None:
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*4\]"):
        F.rms_norm(lucid.randn(2, 3), [4])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        F.rms_norm(lucid.randn(2, 3), [3], lucid.ones(4))
    with pytest.raises(NotImplementedError, match="rms_norm"):
        F.rms_norm(lucid.arange(3), [3])
    m = nn.RMSNorm([2, 3], eps=1e-3)
    assert repr(m) == "RMSNorm((2, 3), eps=0.001, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"]
    assert nn.RMSNorm(3, elementwise_affine=False).weight is None


def test_norms_without_bias_and_empty_batches() -> None:
    bn = nn.BatchNorm1d(4, bias=False)
    assert bn.bias is None and list(bn.state_dict()) == [
        "weight", "running_mean", "running_var", "num_batches_tracked",
    ]  # fmt: skip
    assert repr(bn) == (
        "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    )
    gn = nn.GroupNorm(2, 4, bias=False)
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=False)"
    assert nn.InstanceNorm2d(3, affine=True, bias=False).bias is None
    # a batch of 0 passes through; the running stats stay, the counter moves (torch's)
    m = nn.BatchNorm2d(3)
    x = lucid.randn(0, 3, 2, 2, requires_grad=True)
    y = m(x)
    y.sum().backward()
    assert y.shape == (0, 3, 2, 2) and m.num_batches_tracked.item() == 1
    assert m.running_var.numpy().tolist() == [1.0, 1.0, 1.0]
    assert m.weight.grad.numpy().tolist() == [0.0, 0.0, 0.0]
    assert gn(lucid.randn(0, 4, 3)).shape == (0, 4, 3)
    assert F.instance_norm(lucid.randn(0, 4, 3)).shape == (0, 4, 3)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(4)(lucid.randn(1, 4))
