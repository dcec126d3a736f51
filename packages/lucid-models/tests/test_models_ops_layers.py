"""``lucid.models.ops``' DeformConv2d, PSRoIAlign/PSRoIPool, DropBlock2d/3d, FrozenBatchNorm2d
and Conv3dNormActivation: the module forms of ``lucid.data.ops``' functions, and torchvision's
state-dict layout (the parity test builds torchvision 0.28's own modules from its source)."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.data.ops as data_ops
from lucid.models import ops

NEW = (
    "Conv3dNormActivation",
    "DeformConv2d",
    "DropBlock2d",
    "DropBlock3d",
    "FrozenBatchNorm2d",
    "PSRoIAlign",
    "PSRoIPool",
)


def test_reached_from_lucid_data_ops() -> None:
    for name in NEW:
        assert getattr(data_ops, name) is getattr(ops, name)


def test_torchvision_ops_misc_is_a_module_of_its_names() -> None:
    """``from torchvision.ops.misc import FrozenBatchNorm2d`` (timm's norm_act.py) ported:
    torchvision 0.28's ``ops.misc`` names, the same objects as ``lucid.data.ops``'."""
    from lucid.data.ops.misc import Conv2dNormActivation, FrozenBatchNorm2d, interpolate

    misc = importlib.import_module("lucid.data.ops.misc")
    assert data_ops.misc is misc
    assert FrozenBatchNorm2d is ops.FrozenBatchNorm2d
    assert Conv2dNormActivation is ops.Conv2dNormActivation
    assert interpolate is lucid.nn.functional.interpolate
    for name in ("Conv3dNormActivation", "MLP", "Permute", "SqueezeExcitation"):
        assert getattr(misc, name) is getattr(ops, name)
    with pytest.raises(AttributeError, match="has no attribute 'roi_align'"):
        misc.roi_align  # noqa: B018  (torchvision's misc has no functional ops)


def test_modules_call_their_functions() -> None:
    lucid.manual_seed(0)
    m = ops.DeformConv2d(4, 6, 3, padding=1, groups=2)
    assert tuple(m.weight.shape) == (6, 2, 3, 3) and m.bias is not None
    x, off = lucid.randn(2, 4, 5, 5), lucid.randn(2, 18, 5, 5)
    expected = data_ops.deform_conv2d(x, off, m.weight, m.bias, padding=(1, 1))
    np.testing.assert_allclose(
        m(x, off).detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=0
    )
    assert ops.DeformConv2d(2, 2, 1, bias=False).bias is None
    with pytest.raises(ValueError, match="divisible by groups"):
        ops.DeformConv2d(3, 4, 3, groups=2)

    feats = lucid.randn(1, 8, 6, 6)
    rois = lucid.tensor([[0.0, 0.5, 1.0, 4.5, 5.0]])
    np.testing.assert_allclose(
        ops.PSRoIAlign(2, 1.0, 2)(feats, rois).numpy(),
        data_ops.ps_roi_align(feats, rois, 2, 1.0, 2).numpy(),
        rtol=1e-7,
        atol=0,
    )
    np.testing.assert_allclose(
        ops.PSRoIPool(2, 1.0)(feats, rois).numpy(),
        data_ops.ps_roi_pool(feats, rois, 2).numpy(),
        rtol=1e-7,
        atol=0,
    )

    drop = ops.DropBlock2d(0.5, 3)
    drop.eval()
    assert drop(feats) is feats
    drop.train()
    assert float((drop(feats) == 0).float().mean()) > 0
    assert tuple(ops.DropBlock3d(0.2, 3)(lucid.randn(1, 2, 5, 5, 5)).shape) == (1, 2, 5, 5, 5)


def test_frozen_batch_norm_and_conv3d_block() -> None:
    bn = ops.FrozenBatchNorm2d(3)
    assert list(bn.parameters()) == []
    assert sorted(bn.state_dict()) == ["bias", "running_mean", "running_var", "weight"]
    bn.running_mean.copy_(lucid.tensor([1.0, 2.0, 3.0]))
    bn.running_var.copy_(lucid.tensor([4.0, 1.0, 0.25]))
    x = lucid.randn(2, 3, 4, 4)
    ref = (x.numpy() - np.array([1, 2, 3])[:, None, None]) / np.sqrt(
        np.array([4, 1, 0.25])[:, None, None] + 1e-5
    )
    np.testing.assert_allclose(bn(x).numpy(), ref, rtol=1e-5, atol=1e-6)

    block = ops.Conv3dNormActivation(2, 5, kernel_size=(3, 1, 3), stride=2)
    conv = block[0]
    assert conv.padding == (1, 0, 1) and conv.bias is None
    assert isinstance(block[1], lucid.nn.BatchNorm3d) and isinstance(block[2], lucid.nn.ReLU)
    assert tuple(block(lucid.randn(1, 2, 6, 6, 6)).shape) == (1, 5, 3, 3, 3)
    plain = ops.Conv3dNormActivation(2, 5, norm_layer=None, activation_layer=None)
    assert len(plain) == 1 and plain[0].bias is not None


@pytest.mark.parity
def test_layouts_match_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    tvops = importlib.import_module("torchvision.ops")
    torch.manual_seed(0)
    pairs = [
        (
            tvops.DeformConv2d(4, 6, 3, padding=1, groups=2),
            ops.DeformConv2d(4, 6, 3, padding=1, groups=2),
        ),
        (tvops.FrozenBatchNorm2d(3), ops.FrozenBatchNorm2d(3)),
        (tvops.Conv3dNormActivation(2, 4, 3), ops.Conv3dNormActivation(2, 4, 3)),
    ]
    for ref, ours in pairs:
        ref_state = ref.state_dict()
        assert sorted(ref_state) == sorted(ours.state_dict())
        for k, v in ref_state.items():
            assert tuple(v.shape) == tuple(ours.state_dict()[k].shape), k
    assert repr(pairs[0][0]) == repr(pairs[0][1])
    # FrozenBatchNorm2d and Conv3dNormActivation run in torch: same state, same outputs.
    rng = np.random.default_rng(0)
    for ref, ours in pairs[1:]:
        ref.eval()
        ours.eval()
        state = {}
        for k, v in ref.state_dict().items():
            if v.is_floating_point():
                v = torch.from_numpy(rng.uniform(0.5, 1.5, tuple(v.shape)).astype(np.float32))
            state[k] = v
        ref.load_state_dict(state)
        ours.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in state.items()})
        shape = (2, 3, 5, 5) if isinstance(ours, ops.FrozenBatchNorm2d) else (1, 2, 4, 4, 4)
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(
            ours(lucid.tensor(x)).detach().numpy(),
            ref(torch.from_numpy(x)).detach().numpy(),
            rtol=1e-5,
            atol=1e-5,
        )
    # DropBlock2d in eval mode is the identity in both; in training both drop whole blocks.
    drop = tvops.DropBlock2d(0.3, 3)
    drop.eval()
    t = torch.ones(1, 1, 6, 6)
    assert drop(t) is t
