"""Mask2Former (ResNet backbone): registry and counts, output shapes and a backward pass of a tiny
configuration; in the parity env, against transformers: the multi-scale deformable attention
(``multi_scale_deformable_attention``, sampling points inside and outside the maps) and
``Mask2FormerForUniversalSegmentation`` built from a config: counts, the same state-dict keys
(less its loss module's ``criterion.empty_weight`` buffer), the same outputs in eval and train
mode; ``Mask2FormerLoss``: its weighted parts and a backward pass through the model, finite
differences in float64, and against transformers' ``Mask2FormerLoss`` (values and gradients)
with the same random points drawn for both."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.autograd import gradcheck
from lucid.models.detection.detr import DetrResNetBackbone
from lucid.models.detection.mask2former import (
    Mask2FormerForUniversalSegmentation,
    Mask2FormerLoss,
    multi_scale_deformable_attention,
)
from lucid.models.detection.matcher import linear_sum_assignment

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
@pytest.mark.parametrize("heads", [4, 8])  # 8: the full models' heads, unlike the 4 points
def test_deformable_attention_matches_transformers(heads: int) -> None:
    torch = pytest.importorskip("torch")
    mm = pytest.importorskip("transformers.models.mask2former.modeling_mask2former")
    rng = np.random.default_rng(0)
    shapes = [(4, 6), (2, 3), (1, 2)]
    s = sum(h * w for h, w in shapes)
    value = rng.standard_normal((2, s, heads, 8)).astype(np.float32)
    locations = rng.uniform(-0.2, 1.2, (2, 7, heads, 3, 4, 2)).astype(np.float32)  # some outside
    weights = rng.uniform(0, 1, (2, 7, heads, 3, 4)).astype(np.float32)
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


# ----------------------------------------------------------------------------- the loss


def _mask_targets(size: tuple[int, int] = (64, 64)) -> tuple[list[lucid.Tensor],
                                                             list[lucid.Tensor]]:  # fmt: skip
    rng = np.random.default_rng(3)
    masks, labels = [], []
    for n, (h, w) in ((2, size), (1, (size[0] - 8, size[1]))):  # the second smaller: padded
        m = np.zeros((n, h, w), np.float32)
        for k in range(n):
            y, x = rng.integers(0, h // 2, 2)
            m[k, y : y + h // 3, x : x + w // 3] = 1.0
        masks.append(lucid.tensor(m))
        labels.append(lucid.tensor(rng.integers(0, 3, n)))
    return masks, labels


def _rand(seed: int) -> Any:
    """Uniform draws from a NumPy generator, as lucid tensors of the asked shape."""
    rng = np.random.default_rng(seed)
    return lambda shape: lucid.tensor(rng.random(shape))


def test_loss_and_backward() -> None:
    lucid.manual_seed(0)
    model = _tiny()
    out = model(lucid.randn(2, 3, 64, 64))
    masks, labels = _mask_targets()
    loss = Mask2FormerLoss(3, num_points=256)
    total, parts = loss(out, masks, labels)
    assert set(parts) == {"loss_cross_entropy", "loss_mask", "loss_dice"}
    expected = 2 * parts["loss_cross_entropy"].item() + 5 * parts["loss_mask"].item() + 5 * parts[
        "loss_dice"].item()  # fmt: skip
    np.testing.assert_allclose(total.item(), expected, rtol=1e-5, atol=1e-6)
    total.backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    # the same points, the same loss
    a, _ = loss(out, masks, labels, rand=_rand(1))
    b, _ = loss(out, masks, labels, rand=_rand(1))
    assert a.item() == b.item()
    with pytest.raises(ValueError, match="one mask_labels"):
        loss(out, masks[:1], labels[:1])


def test_loss_finite_differences() -> None:
    rng = np.random.default_rng(0)
    masks, labels = _mask_targets((16, 16))
    m = lucid.tensor(rng.normal(size=(2, 3, 4, 4)) * 2, requires_grad=True)
    c = lucid.tensor(rng.normal(size=(2, 3, 4)), requires_grad=True)
    loss = Mask2FormerLoss(3, num_points=24)

    def f(m: lucid.Tensor, c: lucid.Tensor) -> lucid.Tensor:
        total, _ = loss({"masks_queries_logits": m, "class_queries_logits": c}, masks, labels,
                        rand=_rand(5))  # fmt: skip
        return total

    assert gradcheck(f, (m, c), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parity
def test_loss_matches_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    tr = pytest.importorskip("transformers")
    mm = pytest.importorskip("transformers.models.mask2former.modeling_mask2former")
    # transformers' matcher calls SciPy's solver; SciPy is not installed: it gets lucid's
    monkeypatch.setattr(mm, "requires_backends", lambda *a, **k: None)
    monkeypatch.setattr(mm, "linear_sum_assignment",
                        lambda c: linear_sum_assignment(c.numpy()), raising=False)  # fmt: skip
    # the same uniform points for both: torch.rand replaced by the same NumPy stream
    rng = np.random.default_rng(7)
    monkeypatch.setattr(torch, "rand", lambda *shape, **kw: torch.from_numpy(
        rng.random(tuple(shape)).astype(np.float32)))  # fmt: skip
    cfg = tr.Mask2FormerConfig(num_labels=3, train_num_points=64)
    weights = {"loss_cross_entropy": cfg.class_weight, "loss_mask": cfg.mask_weight,
               "loss_dice": cfg.dice_weight}  # fmt: skip
    ref = mm.Mask2FormerLoss(cfg, weights)
    x = np.random.default_rng(1)
    m = (x.normal(size=(2, 5, 16, 16)) * 3).astype(np.float32)
    c = x.normal(size=(2, 5, 4)).astype(np.float32)
    masks, labels = _mask_targets((64, 64))
    tm = torch.tensor(m, requires_grad=True)
    tc = torch.tensor(c, requires_grad=True)
    want = ref(tm, tc, [torch.from_numpy(v.numpy()) for v in masks],
               [torch.from_numpy(v.numpy()) for v in labels])  # fmt: skip
    want_total = sum(ref.weight_dict[k] * v for k, v in want.items())
    want_total.backward()
    lm = lucid.tensor(m, requires_grad=True)
    lc = lucid.tensor(c, requires_grad=True)
    ours = np.random.default_rng(7)
    total, parts = Mask2FormerLoss(3, num_points=64)(
        {"masks_queries_logits": lm, "class_queries_logits": lc}, masks, labels,
        rand=lambda shape: lucid.tensor(ours.random(shape).astype(np.float32)))  # fmt: skip
    total.backward()
    for k, v in parts.items():
        np.testing.assert_allclose(v.item(), want[k].item(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(total.item(), want_total.item(), rtol=1e-4, atol=1e-5)
    assert lm.grad is not None and lc.grad is not None
    np.testing.assert_allclose(lm.grad.numpy(), tm.grad.numpy(), rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(lc.grad.numpy(), tc.grad.numpy(), rtol=1e-3, atol=1e-6)
