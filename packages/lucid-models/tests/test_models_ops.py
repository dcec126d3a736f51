"""``lucid.models.ops`` (torchvision.ops' layers, also reached as ``lucid.data.ops.<name>``).

The parity tests load torchvision 0.28's own modules from its source (the ``tvm`` fixture,
conftest.py), copy their state dicts in and compare the outputs.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.data.ops as data_ops
from lucid.models import ops


def test_data_ops_reaches_the_layers() -> None:
    assert data_ops.FeaturePyramidNetwork is ops.FeaturePyramidNetwork
    assert data_ops.MultiScaleRoIAlign is ops.MultiScaleRoIAlign
    assert data_ops.StochasticDepth is ops.StochasticDepth
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = data_ops.Nope


def test_fpn_shapes_and_backward() -> None:
    lucid.manual_seed(0)
    fpn = ops.FeaturePyramidNetwork([4, 8], 3, extra_blocks=ops.LastLevelP6P7(3, 3))
    x = OrderedDict(a=lucid.rand(2, 4, 8, 8, requires_grad=True), b=lucid.rand(2, 8, 4, 4))
    out = fpn(x)
    assert list(out) == ["a", "b", "p6", "p7"]
    assert [tuple(v.shape) for v in out.values()] == [
        (2, 3, 8, 8),
        (2, 3, 4, 4),
        (2, 3, 2, 2),
        (2, 3, 1, 1),
    ]
    sum(v.sum() for v in out.values()).backward()
    assert x["a"].grad is not None and tuple(x["a"].grad.shape) == (2, 4, 8, 8)
    with pytest.raises(ValueError, match="in_channels=0"):
        ops.FeaturePyramidNetwork([0], 3)
    with pytest.raises(TypeError, match="ExtraFPNBlock"):
        ops.FeaturePyramidNetwork([4], 3, extra_blocks=lucid.nn.ReLU())  # type: ignore[arg-type]


def test_multiscale_roi_align_levels_and_grads() -> None:
    rng = np.random.default_rng(0)
    feats = OrderedDict(
        f1=lucid.tensor(rng.normal(size=(1, 2, 32, 32)), requires_grad=True),
        f2=lucid.tensor(rng.normal(size=(1, 2, 16, 16)), requires_grad=True),
    )
    # a small box (level 0 of the two) and a large one (clamped to the last level)
    boxes = [lucid.tensor([[2.0, 3.0, 30.0, 40.0], [0.0, 0.0, 120.0, 127.0]], dtype=lucid.float64)]
    pool = ops.MultiScaleRoIAlign(["f1", "f2"], 2, 2, canonical_scale=64, canonical_level=3)
    out = pool(feats, boxes, [(128, 128)])
    assert pool.scales == [0.25, 0.125]
    ref0 = data_ops.roi_align(feats["f1"], [boxes[0][:1]], 2, 0.25, 2)
    ref1 = data_ops.roi_align(feats["f2"], [boxes[0][1:]], 2, 0.125, 2)
    np.testing.assert_allclose(out.detach().numpy()[:1], ref0.detach().numpy(), rtol=1e-12, atol=0)
    np.testing.assert_allclose(out.detach().numpy()[1:], ref1.detach().numpy(), rtol=1e-12, atol=0)
    out.sum().backward()
    assert feats["f1"].grad is not None and feats["f2"].grad is not None
    assert float(feats["f2"].grad.abs().sum()) > 0


@pytest.mark.parity
def test_fpn_and_poolers_match_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    tvops = importlib.import_module("torchvision.ops")
    poolers = importlib.import_module("torchvision.ops.poolers")
    from torchvision.ops.roi_align import _roi_align  # noqa: PLC0415

    torch.manual_seed(0)
    ref = tvops.FeaturePyramidNetwork(
        [4, 6, 8], 5, extra_blocks=tvops.feature_pyramid_network.LastLevelMaxPool()
    )
    ours = ops.FeaturePyramidNetwork([4, 6, 8], 5, extra_blocks=ops.LastLevelMaxPool())
    state = {k: lucid.tensor(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    assert sorted(state) == sorted(ours.state_dict())
    ours.load_state_dict(state, strict=True)
    rng = np.random.default_rng(1)
    xs = {
        n: rng.normal(size=(2, c, s, s)).astype(np.float32)
        for n, c, s in (("a", 4, 16), ("b", 6, 8), ("c", 8, 5))
    }
    r = ref(OrderedDict((k, torch.from_numpy(v)) for k, v in xs.items()))
    o = ours(OrderedDict((k, lucid.tensor(v)) for k, v in xs.items()))
    assert list(r) == list(o)
    for k in r:
        np.testing.assert_allclose(
            o[k].detach().numpy(), r[k].detach().numpy(), rtol=1e-5, atol=1e-5
        )

    # MultiScaleRoIAlign, with torchvision's Python roi_align (its compiled one does not load)
    ref_fn = getattr(_roi_align, "__wrapped__", _roi_align)
    pool_ref = tvops.MultiScaleRoIAlign(["a", "c"], (3, 2), 2)
    pool = ops.MultiScaleRoIAlign(["a", "c"], (3, 2), 2)
    feats = {n: rng.normal(size=(2, 3, s, s)) for n, s in (("a", 32), ("b", 16), ("c", 8))}
    xy = rng.random((7, 2)) * 100
    bx = np.concatenate([xy, xy + rng.random((7, 2)) * 150 + 2], axis=1)
    per_image = [bx[:4], bx[4:]]
    orig = poolers.roi_align
    poolers.roi_align = lambda inp, rois, output_size, spatial_scale, sampling_ratio: ref_fn(
        inp, rois, spatial_scale, output_size[0], output_size[1], sampling_ratio, False
    )
    try:
        r_out = pool_ref(
            OrderedDict((k, torch.from_numpy(v)) for k, v in feats.items()),
            [torch.from_numpy(b) for b in per_image],
            [(256, 256), (250, 240)],
        )
    finally:
        poolers.roi_align = orig
    o_out = pool(
        OrderedDict((k, lucid.tensor(v)) for k, v in feats.items()),
        [lucid.tensor(b) for b in per_image],
        [(256, 256), (250, 240)],
    )
    np.testing.assert_allclose(o_out.detach().numpy(), r_out.numpy(), rtol=1e-10, atol=1e-12)
