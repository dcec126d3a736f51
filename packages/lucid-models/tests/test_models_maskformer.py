"""MaskFormer (ResNet backbone): registry and counts, output shapes and a backward pass of a tiny
configuration; in the parity env, against transformers' ``MaskFormerForInstanceSegmentation``
built from a config: the counts, the same state-dict keys (less its loss module's
``criterion.empty_weight`` buffer) and the same outputs in eval and train mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.detection.detr import DetrResNetBackbone
from lucid.models.detection.maskformer import MaskFormerForInstanceSegmentation

BACKBONE: dict[str, Any] = {"depths": [1, 2, 1, 1], "hidden_sizes": [32, 64, 128, 256],
                            "embedding_size": 16, "layer_type": "bottleneck"}  # fmt: skip
HEAD: dict[str, Any] = {"fpn_feature_size": 32, "mask_feature_size": 32, "d_model": 32,
                        "num_queries": 5, "decoder_layers": 2, "decoder_ffn_dim": 64,
                        "decoder_attention_heads": 4}  # fmt: skip


def _tiny(**kwargs: Any) -> MaskFormerForInstanceSegmentation:
    backbone = DetrResNetBackbone(**BACKBONE, frozen_batch_norm=False)
    return MaskFormerForInstanceSegmentation(backbone, 3, **{**HEAD, **kwargs})


def test_registry_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    for name in ("maskformer_resnet50", "maskformer_resnet101"):
        info = models.model_info(name)
        assert (info.task, info.family, info.reference) == ("image-segmentation", "maskformer",
                                                            "transformers")  # fmt: skip
        assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
        model = models.create_model(name)
        assert sum(p.numel() for p in model.parameters()) == info.num_params
        assert f"{info.num_params / 1e6:.0f}" == {"maskformer_resnet50": "41",
                                                  "maskformer_resnet101": "60"}[name]  # fmt: skip


def test_forward_and_backward() -> None:
    lucid.manual_seed(0)
    model = _tiny()
    out = model(lucid.randn(2, 3, 64, 64))
    assert out["class_queries_logits"].shape == (2, 5, 4)
    assert out["masks_queries_logits"].shape == (2, 5, 16, 16)
    (out["class_queries_logits"].square().mean()
     + out["masks_queries_logits"].square().mean()).backward()  # fmt: skip
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip


@pytest.mark.parity
@pytest.mark.parametrize("train", [False, True])
def test_outputs_match_transformers(train: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    tr = pytest.importorskip("transformers")
    mm = pytest.importorskip("transformers.models.maskformer.modeling_maskformer")
    # its loss module asks for SciPy at construction; the forward does not use it
    monkeypatch.setattr(mm, "requires_backends", lambda *a, **k: None)
    torch.manual_seed(0)
    cfg = tr.MaskFormerConfig(
        backbone_config=tr.ResNetConfig(**BACKBONE, out_features=["stage1", "stage2", "stage3",
                                                                  "stage4"]),
        fpn_feature_size=32, mask_feature_size=32, num_labels=3,
        decoder_config={"model_type": "detr", "d_model": 32, "decoder_layers": 2,
                        "decoder_ffn_dim": 64, "decoder_attention_heads": 4, "num_queries": 5,
                        "dropout": 0.0})  # fmt: skip
    ref = tr.MaskFormerForInstanceSegmentation(cfg)
    model = _tiny(dropout=0.0)
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
    mm = pytest.importorskip("transformers.models.maskformer.modeling_maskformer")
    monkeypatch.setattr(mm, "requires_backends", lambda *a, **k: None)
    for name, depths in (("maskformer_resnet50", [3, 4, 6, 3]),
                         ("maskformer_resnet101", [3, 4, 23, 3])):  # fmt: skip
        cfg = tr.MaskFormerConfig(
            backbone_config=tr.ResNetConfig(
                depths=depths, out_features=["stage1", "stage2", "stage3", "stage4"]
            ),
            num_labels=150,
        )
        ref = tr.MaskFormerForInstanceSegmentation(cfg)
        assert sum(p.numel() for p in ref.parameters()) == models.model_info(name).num_params
