"""Mask2Former (ResNet backbone): registry and counts, output shapes and a backward pass of a tiny
configuration; in the parity env, against transformers: the multi-scale deformable attention
(``multi_scale_deformable_attention``, sampling points inside and outside the maps) and
``Mask2FormerForUniversalSegmentation`` built from a config: counts, the same state-dict keys
(less its loss module's ``criterion.empty_weight`` buffer), the same outputs in eval and train
mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.detection.detr import DetrResNetBackbone
from lucid.models.detection.mask2former import (
    Mask2FormerForUniversalSegmentation,
    multi_scale_deformable_attention,
)

BACKBONE: dict[str, Any] = {"depths": [1, 1, 1, 1], "hidden_sizes": [16, 32, 64, 128],
                            "embedding_size": 16, "layer_type": "basic"}  # fmt: skip
HEAD: dict[str, Any] = {"feature_size": 32, "mask_feature_size": 32, "hidden_dim": 32,
                        "num_queries": 5, "encoder_layers": 2, "decoder_layers": 4,
                        "num_attention_heads": 4, "encoder_feedforward_dim": 64,
                        "dim_feedforward": 64}  # fmt: skip
STAGES = ["stage1", "stage2", "stage3", "stage4"]


def _tiny() -> Mask2FormerForUniversalSegmentation:
    backbone = DetrResNetBackbone(**BACKBONE, frozen_batch_norm=False)
    return Mask2FormerForUniversalSegmentation(backbone, 3, **HEAD)


def test_registry_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    for name, paper in (("mask2former_resnet50", "44"), ("mask2former_resnet101", "63")):
        info = models.model_info(name)
        assert (info.task, info.family, info.reference) == ("image-segmentation", "mask2former",
                                                            "transformers")  # fmt: skip
        assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
        model = models.create_model(name)
        assert sum(p.numel() for p in model.parameters()) == info.num_params
        assert f"{info.num_params / 1e6:.0f}" == paper


def test_forward_and_backward() -> None:
    lucid.manual_seed(0)
    model = _tiny()
    out = model(lucid.randn(2, 3, 64, 64))
    assert out["class_queries_logits"].shape == (2, 5, 4)
    assert out["masks_queries_logits"].shape == (2, 5, 16, 16)
    (out["class_queries_logits"].square().mean()
     + out["masks_queries_logits"].square().mean()).backward()  # fmt: skip
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None and bool(lucid.isfinite(g).all()) for g in grads)


@pytest.mark.parity
def test_deformable_attention_matches_transformers() -> None:
    torch = pytest.importorskip("torch")
    mm = pytest.importorskip("transformers.models.mask2former.modeling_mask2former")
    rng = np.random.default_rng(0)
    shapes = [(4, 6), (2, 3), (1, 2)]
    s = sum(h * w for h, w in shapes)
    value = rng.standard_normal((2, s, 4, 8)).astype(np.float32)
    locations = rng.uniform(-0.2, 1.2, (2, 7, 4, 3, 4, 2)).astype(np.float32)  # some outside
    weights = rng.uniform(0, 1, (2, 7, 4, 3, 4)).astype(np.float32)
    want = mm.multi_scale_deformable_attention(torch.from_numpy(value), shapes,
                                               torch.from_numpy(locations),
                                               torch.from_numpy(weights))  # fmt: skip
    got = multi_scale_deformable_attention(lucid.tensor(value), shapes, lucid.tensor(locations),
                                           lucid.tensor(weights))  # fmt: skip
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parity
@pytest.mark.parametrize("train", [False, True])
def test_outputs_match_transformers(train: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    tr = pytest.importorskip("transformers")
    mm = pytest.importorskip("transformers.models.mask2former.modeling_mask2former")
    # its loss module asks for SciPy at construction; the forward does not use it
    monkeypatch.setattr(mm, "requires_backends", lambda *a, **k: None)
    torch.manual_seed(0)
    cfg = tr.Mask2FormerConfig(backbone_config=tr.ResNetConfig(**BACKBONE, out_features=STAGES),
                               num_labels=3, common_stride=4, **HEAD)  # fmt: skip
    ref = tr.Mask2FormerForUniversalSegmentation(cfg)
    with torch.no_grad():  # masks large enough that the masked attention bars some positions
        ref.model.pixel_level_module.decoder.mask_projection.weight.mul_(20.0)
    model = _tiny()
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in ref.parameters())
    state = {k: v for k, v in ref.state_dict().items() if not k.startswith("criterion.")}
    assert list(model.state_dict()) == list(state)
    model.load_state_dict({k: lucid.tensor(v.numpy().copy()) for k, v in state.items()})
    ref.train(train)
    model.train(train)
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 96)).astype(np.float32)
    with torch.no_grad():
        want = ref(torch.from_numpy(x))
    with lucid.no_grad():
        got = model(lucid.tensor(x))
    for key in ("class_queries_logits", "masks_queries_logits"):
        np.testing.assert_allclose(got[key].numpy(), getattr(want, key).numpy(),
                                   rtol=1e-4, atol=1e-4)  # fmt: skip


@pytest.mark.parity
def test_counts_match_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    tr = pytest.importorskip("transformers")
    mm = pytest.importorskip("transformers.models.mask2former.modeling_mask2former")
    monkeypatch.setattr(mm, "requires_backends", lambda *a, **k: None)
    for name, depths in (("mask2former_resnet50", [3, 4, 6, 3]),
                         ("mask2former_resnet101", [3, 4, 23, 3])):  # fmt: skip
        cfg = tr.Mask2FormerConfig(backbone_config=tr.ResNetConfig(depths=depths,
                                                                   out_features=STAGES),
                                   num_labels=150)  # fmt: skip
        ref = tr.Mask2FormerForUniversalSegmentation(cfg)
        assert sum(p.numel() for p in ref.parameters()) == models.model_info(name).num_params
