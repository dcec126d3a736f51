"""MaskFormer (ResNet backbone): registry and counts, output shapes, the mask classification
loss and a backward pass of a tiny configuration; in the parity env, against transformers'
``MaskFormerForInstanceSegmentation`` built from a config: the counts, the same state-dict keys
(less its loss module's ``criterion.empty_weight`` buffer), the same outputs in eval and train
mode and the same loss (transformers' matcher given lucid's solver, SciPy not being
installed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.detection.detr import DetrResNetBackbone
from lucid.models.detection.maskformer import MaskFormerForInstanceSegmentation, MaskFormerLoss
from lucid.models.detection.matcher import linear_sum_assignment

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


def _mask_targets() -> tuple[list[lucid.Tensor], list[lucid.Tensor]]:
    rng = np.random.default_rng(3)
    masks, labels = [], []
    for n in (2, 1):
        m = np.zeros((n, 64, 64), np.float32)
        for k in range(n):
            y, x = rng.integers(0, 40, 2)
            m[k, y : y + 24, x : x + 20] = 1.0
        masks.append(lucid.tensor(m))
        labels.append(lucid.tensor(rng.integers(0, 3, n)))
    return masks, labels


def test_mask_classification_loss_and_backward() -> None:
    lucid.manual_seed(0)
    model = _tiny()
    out = model(lucid.randn(2, 3, 64, 64))
    masks, labels = _mask_targets()
    total, parts = MaskFormerLoss(3)(out, masks, labels)
    assert set(parts) == {"loss_cross_entropy", "loss_mask", "loss_dice"}
    expected = parts["loss_cross_entropy"].item() + 20 * parts["loss_mask"].item() + parts[
        "loss_dice"].item()  # fmt: skip
    np.testing.assert_allclose(total.item(), expected, rtol=1e-5, atol=1e-6)
    total.backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    with pytest.raises(ValueError, match="one mask_labels"):
        MaskFormerLoss(3)(out, masks[:1], labels[:1])


@pytest.mark.parity
def test_loss_matches_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    mm = pytest.importorskip("transformers.models.maskformer.modeling_maskformer")
    # transformers' matcher calls SciPy's solver; SciPy is not installed: it gets lucid's
    monkeypatch.setattr(mm, "requires_backends", lambda *a, **k: None)
    monkeypatch.setattr(mm, "linear_sum_assignment",
                        lambda c: linear_sum_assignment(c.numpy()), raising=False)  # fmt: skip
    torch.manual_seed(0)
    ref, model = _pair(dropout=0.0)
    ref.eval()
    model.eval()
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64)).astype(np.float32)
    masks, labels = _mask_targets()
    tmasks = [torch.from_numpy(m.numpy()) for m in masks]
    tlabels = [torch.from_numpy(c.numpy()) for c in labels]
    with torch.no_grad():
        want = ref(torch.from_numpy(x), mask_labels=tmasks, class_labels=tlabels)
        # the unweighted parts (the model's loss weights them in place)
        want_parts = ref.criterion(want.masks_queries_logits, want.class_queries_logits, tmasks,
                                   tlabels)  # fmt: skip
    total, parts = MaskFormerLoss(3)(model(lucid.tensor(x)), masks, labels)
    np.testing.assert_allclose(total.item(), want.loss.item(), rtol=1e-4, atol=1e-5)
    for k, v in parts.items():
        np.testing.assert_allclose(v.item(), want_parts[k].item(), rtol=1e-4, atol=1e-5)


def _pair(**kwargs: Any) -> tuple[Any, MaskFormerForInstanceSegmentation]:
    tr = pytest.importorskip("transformers")
    cfg = tr.MaskFormerConfig(
        backbone_config=tr.ResNetConfig(**BACKBONE, out_features=["stage1", "stage2", "stage3",
                                                                  "stage4"]),
        fpn_feature_size=32, mask_feature_size=32, num_labels=3,
        decoder_config={"model_type": "detr", "d_model": 32, "decoder_layers": 2,
                        "decoder_ffn_dim": 64, "decoder_attention_heads": 4, "num_queries": 5,
                        "dropout": 0.0})  # fmt: skip
    ref = tr.MaskFormerForInstanceSegmentation(cfg)
    model = _tiny(**kwargs)
    state = {k: v for k, v in ref.state_dict().items() if not k.startswith("criterion.")}
    assert list(model.state_dict()) == list(state)
    model.load_state_dict({k: lucid.tensor(v.numpy().copy()) for k, v in state.items()})
    return ref, model


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
