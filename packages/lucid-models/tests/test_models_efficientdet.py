"""EfficientDet: parameter counts (effdet's ``tf_efficientdet_d0`` .. ``d7``, and the paper's
Table 2 to its digits), the BiFPN graph, the output shapes and a backward pass of D0; the
detector: anchors against effdet's formulas and hand-computed values, the box coder against the
TensorFlow Object Detection API's test values, the anchor labelling, the loss against a NumPy
transcription of effdet's and by finite differences in float64, the decoding, and a two-image
overfit of a tiny configuration; in the parity env, the loss gradients against torch autograd
of effdet's loss formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn, optim
from lucid.autograd import gradcheck
from lucid.data.ops import box_iou
from lucid.models.detection.efficientdet import (
    EfficientDet,
    EfficientNetFeatures,
    anchor_boxes,
    bifpn_config,
    decode_boxes,
    efficientdet_d0,
    encode_boxes,
    label_anchors,
)

# EfficientDet paper, Table 2 (millions, as printed)
PAPER = {"d0": "3.9", "d1": "6.6", "d2": "8.1", "d3": "12", "d4": "21", "d5": "34", "d6": "52",
         "d7": "52"}  # fmt: skip


@pytest.mark.parametrize("variant", sorted(PAPER))
def test_counts(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    name = f"efficientdet_{variant}"
    info = models.model_info(name)
    assert (info.task, info.family, info.reference) == ("object-detection", "efficientdet",
                                                        "paper")  # fmt: skip
    assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == info.num_params
    stated = PAPER[variant]
    digits = len(stated.partition(".")[2])
    assert f"{info.num_params / 1e6:.{digits}f}" == stated


def test_bifpn_graph() -> None:
    nodes = bifpn_config(3, 7)
    assert [n["reduction"] for n in nodes] == [64, 32, 16, 8, 16, 32, 64, 128]
    assert [n["inputs_offsets"] for n in nodes] == [
        [3, 4], [2, 5], [1, 6], [0, 7], [1, 7, 8], [2, 6, 9], [3, 5, 10], [4, 11]]  # fmt: skip


def test_d0_outputs_and_backward() -> None:
    lucid.manual_seed(0)
    model = efficientdet_d0(num_classes=3)
    x = lucid.randn(2, 3, 72, 72)  # odd sizes on the way down: 36, 18, 9, 5, 3, 2, 1
    cls, box = model.forward_raw(x)
    sizes = [9, 5, 3, 2, 1]
    assert [tuple(c.shape) for c in cls] == [(2, 27, s, s) for s in sizes]
    assert [tuple(b.shape) for b in box] == [(2, 36, s, s) for s in sizes]
    (sum(c.square().mean() for c in cls) + sum(b.square().mean() for b in box)).backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    model.eval()
    with lucid.no_grad():
        cls, _ = model.forward_raw(x)
    assert all(bool(lucid.isfinite(c).all()) for c in cls)


def test_d0_without_redundant_biases_is_effdets_pytorch_d0(monkeypatch: pytest.MonkeyPatch) -> None:
    # effdet's README: "BiFPN/Head layers without any redundant conv/BN bias layers (slightly
    # fewer params 3877763 vs 3880067)"
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = efficientdet_d0(redundant_bias=False)
    assert sum(p.numel() for p in model.parameters()) == 3_877_763


# ----------------------------------------------------------------------------- the detector


def _tiny(num_classes: int = 2) -> EfficientDet:
    return EfficientDet(EfficientNetFeatures(0.25, 0.34), 16, 1, 1, num_classes=num_classes)


def _effdet_anchors(image_size: int) -> np.ndarray:
    """effdet's ``_generate_anchor_boxes`` (square images divisible by 128), yxyx."""
    out = []
    for level in range(3, 8):
        stride = 2**level
        per = []
        for octave in range(3):
            for aspect in [(1.0, 1.0), (1.4, 0.7), (0.7, 1.4)]:
                base = 4.0 * stride * 2 ** (octave / 3.0)
                ax2, ay2 = base * aspect[0] / 2.0, base * aspect[1] / 2.0
                x = np.arange(stride / 2, image_size, stride)
                xg, yg = np.meshgrid(x, x)
                xv, yv = xg.reshape(-1), yg.reshape(-1)
                boxes = np.vstack((yv - ay2, xv - ax2, yv + ay2, xv + ax2)).swapaxes(0, 1)
                per.append(boxes[:, None])
        out.append(np.concatenate(per, axis=1).reshape(-1, 4))
    return np.vstack(out)


def test_anchors() -> None:
    sizes = [(32, 32), (16, 16), (8, 8), (4, 4), (2, 2)]
    a = anchor_boxes((256, 256), sizes)
    assert a.shape == (9 * (1024 + 256 + 64 + 16 + 4), 4)
    np.testing.assert_allclose(a, _effdet_anchors(256)[:, [1, 0, 3, 2]], rtol=1e-12, atol=1e-9)
    # by hand: P3's first cell, centre (4, 4), 4 x 8 = 32 pixels; then the 1.4 x 0.7 aspect
    np.testing.assert_allclose(a[0], [-12, -12, 20, 20], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a[1], [4 - 22.4, 4 - 11.2, 4 + 22.4, 4 + 11.2], rtol=0, atol=1e-12)
    half = 16 * 2 ** (1 / 3)  # second octave
    np.testing.assert_allclose(a[3], [4 - half, 4 - half, 4 + half, 4 + half], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a[9], [-4, -12, 28, 20], rtol=0, atol=1e-12)  # next cell: x 12
    # P7's last cell, centre (192, 192), 512 2^(2/3) pixels at aspect (0.7, 1.4)
    base = 512 * 2 ** (2 / 3)
    np.testing.assert_allclose(a[-1], [192 - 0.35 * base, 192 - 0.7 * base, 192 + 0.35 * base,
                                       192 + 0.7 * base], rtol=1e-12, atol=1e-9)  # fmt: skip
    # sizes not divisible by 128: the stride is image size / feature size (72 -> 9: stride 8)
    b = anchor_boxes((72, 96), [(9, 12), (5, 6), (3, 3), (2, 2), (1, 1)])
    np.testing.assert_allclose(b[9 * 108], [8 - 32, 7.2 - 28.8, 8 + 32, 7.2 + 28.8],
                               rtol=0, atol=1e-9)  # fmt: skip


def test_box_coder() -> None:
    # the TensorFlow Object Detection API's faster_rcnn_box_coder_test, converted to xyxy
    boxes = np.array([[10.0, 10.0, 15.0, 20.0], [0.1, 0.2, 0.4, 0.5]])
    anchors = np.array([[12.0, 15.0, 18.0, 30.0], [0.0, 0.1, 0.9, 0.7]])
    codes = encode_boxes(boxes, anchors)
    np.testing.assert_allclose(codes, [[-0.5, -0.416666, -0.405465, -0.182321],
                                       [-0.083333, -0.222222, -0.693147, -1.098612]],
                               rtol=1e-4, atol=1e-4)  # fmt: skip
    np.testing.assert_allclose(decode_boxes(codes, anchors), boxes, rtol=1e-6, atol=1e-6)


def test_label_anchors() -> None:
    anchors = np.array([[0, 0, 10, 10], [0, 0, 20, 20], [30, 30, 40, 40], [50, 50, 90, 90.0]])
    boxes = np.array([[0, 0, 18, 18], [31, 31, 80, 80], [0, 0, 19, 19.0]])
    cls_t, box_t, n = label_anchors(anchors, boxes, np.array([4, 1, 2]))
    # anchor 1: IoU 0.81 with box 0 and 0.9025 with box 2 -> box 2 by IoU; box 0's best anchor
    # is anchor 1 too, and the forced match of the first truth wins; anchor 3: IoU 0.53 with
    # box 1 -> matched; box 1's best anchor is 3; anchors 0 (0.31) and 2 (0.04): background
    assert cls_t.tolist() == [-1, 4, -1, 1] and n == 2
    np.testing.assert_allclose(box_t[1], encode_boxes(boxes[:1], anchors[1:2])[0], rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    assert not box_t[[0, 2]].any()
    # a truth overlapping every anchor under the threshold still takes its best anchor
    cls_t, _, n = label_anchors(anchors, np.array([[30, 30, 34, 34.0]]), np.array([0]))
    assert cls_t.tolist() == [-1, -1, 0, -1] and n == 1
    cls_t, box_t, n = label_anchors(anchors, np.zeros((0, 4)), np.zeros(0, dtype=np.int64))
    assert (cls_t == -1).all() and not box_t.any() and n == 0


def _effdet_loss_np(cls: np.ndarray, box: np.ndarray, cls_t: np.ndarray, box_t: np.ndarray,
                    num_pos: int, num_classes: int) -> tuple[float, float]:  # fmt: skip
    """effdet's focal_loss (the modulator form) and _box_loss, flattened over levels."""
    norm = num_pos + 1.0
    oh = np.zeros_like(cls)
    b, a = np.nonzero(cls_t >= 0)
    oh[b, a, cls_t[b, a]] = 1.0
    ce = np.maximum(cls, 0) - cls * oh + np.log1p(np.exp(-np.abs(cls)))
    modulator = np.exp(1.5 * oh * -cls - 1.5 * np.log1p(np.exp(-cls)))
    loss = modulator * ce
    cls_loss = np.where(oh == 1.0, 0.25 * loss, 0.75 * loss).sum() / norm
    err = np.abs(box - box_t)
    q = np.minimum(err, 0.1)
    box_loss = ((0.5 * q**2 + 0.1 * (err - q)) * (box_t != 0)).sum() / (norm * 4)
    return float(cls_loss), float(box_loss)


def _outputs(
    rng: np.random.Generator, n: int, c: int, sizes: list[int], dtype: type = np.float64
) -> tuple[list[lucid.Tensor], list[lucid.Tensor]]:
    cls = [lucid.tensor(rng.normal(size=(n, 9 * c, s, s)).astype(dtype), requires_grad=True)
           for s in sizes]  # fmt: skip
    box = [lucid.tensor(rng.normal(scale=0.2, size=(n, 36, s, s)).astype(dtype),
                        requires_grad=True) for s in sizes]  # fmt: skip
    return cls, box


TARGETS = [
    (np.array([[4.0, 6.0, 20.0, 26.0]]), np.array([1])),
    (np.array([[2.0, 2.0, 30.0, 14.0], [16.0, 16.0, 30.0, 30.0]]), np.array([0, 1])),
]


def test_loss_against_effdets_formulas_and_finite_differences() -> None:
    model = _tiny()
    rng = np.random.default_rng(0)
    sizes = [4, 2, 1, 1, 1]
    cls, box = _outputs(rng, 2, 2, sizes)
    losses = model.compute_loss((cls, box), TARGETS, (32, 32))
    anchors = model.anchors((32, 32), [(s, s) for s in sizes])
    lab = [label_anchors(anchors, b, lab) for b, lab in TARGETS]
    cls_np = np.concatenate(
        [c.detach().numpy().transpose(0, 2, 3, 1).reshape(2, -1, 2) for c in cls], 1
    )
    box_np = np.concatenate(
        [b.detach().numpy().transpose(0, 2, 3, 1).reshape(2, -1, 4) for b in box], 1
    )
    ref_cls, ref_box = _effdet_loss_np(cls_np, box_np, np.stack([t[0] for t in lab]),
                                       np.stack([t[1] for t in lab]),
                                       sum(t[2] for t in lab), 2)  # fmt: skip
    assert sum(t[2] for t in lab) >= 3
    np.testing.assert_allclose(losses["loss_cls"].item(), ref_cls, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(losses["loss_box"].item(), 50 * ref_box, rtol=1e-10, atol=1e-12)

    # by finite differences on a smaller pyramid (16 x 16 images: P3 2 x 2), as to P3's maps
    cls, box = _outputs(rng, 2, 2, [2, 1, 1, 1, 1])
    half = [(b / 2, lab) for b, lab in TARGETS]
    rest = [t.detach() for t in cls[1:] + box[1:]]

    def total(c3: lucid.Tensor, b3: lucid.Tensor) -> lucid.Tensor:
        out = model.compute_loss(([c3, *rest[:4]], [b3, *rest[4:]]), half, (16, 16))
        return out["loss_cls"] + out["loss_box"]

    assert sum(label_anchors(model.anchors((16, 16), [(2, 2)] + [(1, 1)] * 4), b, lab)[2]
               for b, lab in half) >= 2  # fmt: skip
    assert gradcheck(total, (cls[0], box[0]), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_decoding() -> None:
    model = _tiny().eval()
    sizes = [4, 2, 1, 1, 1]
    cls = [lucid.full((1, 18, s, s), -10.0) for s in sizes]
    box = [lucid.zeros(1, 36, s, s) for s in sizes]
    cls[0][0, 2 * 1 + 1, 1, 2] = 3.0  # P3, cell (1, 2), anchor 1 (aspect 1.4 x 0.7), class 1
    box[1][0, 4 * 3 : 4 * 3 + 4, 0, 1] = lucid.tensor([0.1, -0.2, 0.0, math.log(0.5)])  # P4 (0, 1)
    cls[1][0, 2 * 3 + 0, 0, 1] = 1.0  # anchor 3 (second octave, square), class 0
    (det,) = model.postprocess((cls, box), (32, 32))
    assert set(det) == {"boxes", "scores", "labels"}
    assert det["boxes"].dtype == lucid.float32 and det["labels"].dtype == lucid.int64
    k = det["boxes"].shape[0]  # the others overlap their neighbours: NMS leaves a few
    assert 2 <= k <= 100 and det["boxes"].shape == (k, 4) and det["scores"].shape == (k,)
    scores = det["scores"].numpy()
    assert (np.diff(scores) <= 0).all()
    np.testing.assert_allclose(scores[:2], [1 / (1 + math.exp(-3)), 1 / (1 + math.exp(-1))],
                               rtol=1e-6, atol=1e-7)  # fmt: skip
    assert det["labels"].numpy()[:2].tolist() == [2, 1]
    # P3 cell (1, 2): centre (20, 12), 32 x 1.4 by 32 x 0.7, clipped to the 32 x 32 image
    np.testing.assert_allclose(det["boxes"].numpy()[0], [0, 12 - 11.2, 32, 12 + 11.2],
                               rtol=1e-6, atol=1e-5)  # fmt: skip
    # P4 cell (0, 1): centre (24, 8), side 64 2^(1/3); moved and the width halved
    side = 64 * 2 ** (1 / 3)
    yc, xc, w = 8 + 0.1 * side, 24 - 0.2 * side, side / 2
    expected = np.clip([xc - w / 2, yc - side / 2, xc + w / 2, yc + side / 2], 0, 32)
    np.testing.assert_allclose(det["boxes"].numpy()[1], expected, rtol=1e-6, atol=1e-4)
    assert 0 < expected[2] < 32
    assert (det["boxes"].numpy() >= 0).all() and (det["boxes"].numpy() <= 32).all()
    model.score_thresh = 0.5
    (det,) = model.postprocess((cls, box), (32, 32))
    assert det["labels"].numpy().tolist() == [2, 1]


def test_bad_input() -> None:
    model = _tiny()
    x = lucid.rand(1, 3, 32, 32)
    with pytest.raises(ValueError, match="targets should not be None"):
        model(x)
    with pytest.raises(ValueError, match=r"labels must lie in 1..2"):
        model(x, [{"boxes": lucid.tensor([[1.0, 1.0, 9.0, 9.0]]), "labels": lucid.tensor([3])}])
    with pytest.raises(ValueError, match=r"expected images of shape \(N, 3, H, W\)"):
        model(lucid.rand(1, 1, 32, 32), [])


def test_two_image_overfit() -> None:
    lucid.manual_seed(0)
    model = _tiny()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = 1.0  # the running statistics are the last batch's: eval sees them
    x = lucid.rand(2, 3, 64, 64)
    targets = [{"boxes": lucid.tensor([[8.0, 10.0, 40.0, 34.0]]), "labels": lucid.tensor([1])},
               {"boxes": lucid.tensor([[20.0, 16.0, 52.0, 60.0], [2.0, 4.0, 32.0, 30.0]]),
                "labels": lucid.tensor([2, 1])}]  # fmt: skip
    opt = optim.Adam(model.parameters(), lr=1e-2)
    first = last = 0.0
    for step in range(40):
        losses = model(x, targets)
        loss = losses["loss_cls"] + losses["loss_box"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = loss.item() if step == 0 else first
        last = loss.item()
    assert last < 0.2 * first
    preds = model.predict(x)
    assert model.training
    for p, t in zip(preds, targets):
        # each truth is found among the best 2 M detections: its label, IoU over 0.5
        k = 2 * t["boxes"].shape[0]
        iou = box_iou(p["boxes"][:k], t["boxes"]).numpy()
        same = p["labels"].numpy()[:k, None] == t["labels"].numpy()[None, :]
        assert ((iou > 0.5) & same).any(0).all(), (iou, same)


@pytest.mark.parity
def test_loss_gradients_match_torch() -> None:
    # effdet's focal_loss (its modulator form) and _box_loss in torch, on the same targets
    torch = pytest.importorskip("torch")
    model = _tiny()
    rng = np.random.default_rng(2)
    sizes = [4, 2, 1, 1, 1]
    cls, box = _outputs(rng, 2, 2, sizes)
    losses = model.compute_loss((cls, box), TARGETS, (32, 32))
    (losses["loss_cls"] + losses["loss_box"]).backward()
    anchors = model.anchors((32, 32), [(s, s) for s in sizes])
    lab = [label_anchors(anchors, b, lab) for b, lab in TARGETS]
    tc = [torch.tensor(c.detach().numpy(), requires_grad=True) for c in cls]
    tb = [torch.tensor(b.detach().numpy(), requires_grad=True) for b in box]
    cls_all = torch.cat([c.permute(0, 2, 3, 1).reshape(2, -1, 2) for c in tc], 1)
    box_all = torch.cat([b.permute(0, 2, 3, 1).reshape(2, -1, 4) for b in tb], 1)
    cls_t = torch.from_numpy(np.stack([t[0] for t in lab]))
    box_t = torch.from_numpy(np.stack([t[1] for t in lab]))
    norm = sum(t[2] for t in lab) + 1.0
    oh = torch.nn.functional.one_hot(cls_t.clamp(min=0), 2).double() * (cls_t >= 0)[..., None]
    ce = torch.nn.functional.binary_cross_entropy_with_logits(cls_all, oh, reduction="none")
    modulator = torch.exp(1.5 * oh * -cls_all - 1.5 * torch.log1p(torch.exp(-cls_all)))
    focal = torch.where(oh == 1.0, 0.25 * modulator * ce, 0.75 * modulator * ce).sum() / norm
    err = (box_all - box_t).abs()
    q = err.clamp(max=0.1)
    huber = ((0.5 * q**2 + 0.1 * (err - q)) * (box_t != 0)).sum() / (norm * 4)
    (focal + 50 * huber).backward()
    for ours, ref in zip(cls + box, tc + tb):
        assert ours.grad is not None and ref.grad is not None
        np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-9, atol=1e-12)
