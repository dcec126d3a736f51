"""torchvision's detection models: Faster/Mask R-CNN, RetinaNet (ResNet-50 FPN, v2, MobileNetV3).

Registry, parameter counts, the output format on a small image, the anchors; in the parity
environment, counts and state-dict keys against torchvision 0.28's builder, and the whole
inference path (transform, backbone + FPN, RPN, RoI heads, postprocessing) against
torchvision's with its state dict loaded. torchvision's compiled NMS and RoI Align do not load
here: the test gives it a pure-torch greedy NMS and its own pure-torch RoI Align, with the
compiled kernel's rule for samples outside the map. Training mode: the loss dicts and
gradients in the default environment, and against torchvision's with its samplers taking the
first candidates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.detection import (
    AnchorGenerator,
    fasterrcnn_resnet50_fpn,
    maskrcnn_resnet50_fpn,
    retinanet_resnet50_fpn,
)

SMALL: dict[str, Any] = {"num_classes": 3, "min_size": 64, "max_size": 96,
                         "rpn_pre_nms_top_n_test": 100, "rpn_post_nms_top_n_test": 50}  # fmt: skip


def _skip_init(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)


def test_registry_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info("fasterrcnn_resnet50_fpn")
    assert (info.task, info.reference, info.family) == ("object-detection", "torchvision",
                                                        "faster_rcnn")  # fmt: skip
    assert f"{info.num_params:,}" in (models.get_model_factory(info.name).__doc__ or "")
    _skip_init(monkeypatch)
    model = models.create_model("fasterrcnn_resnet50_fpn")
    assert sum(p.numel() for p in model.parameters()) == info.num_params
    frozen = fasterrcnn_resnet50_fpn(frozen_batch_norm=True)  # the COCO checkpoints' layout
    assert sum(p.numel() for p in frozen.parameters()) == 41_755_286
    trainable = {n.split(".")[2] for n, p in frozen.named_parameters()
                 if n.startswith("backbone.body") and p.requires_grad}  # fmt: skip
    assert trainable == {"layer2", "layer3", "layer4"}


def test_anchors_are_torchvisions() -> None:
    gen = AnchorGenerator(((32,),), ((0.5, 1.0, 2.0),))
    np.testing.assert_array_equal(
        gen.cell_anchors[0].numpy(), [[-23, -11, 23, 11], [-16, -16, 16, 16], [-11, -23, 11, 23]]
    )
    anchors = gen((64, 64), [(2, 2)]).numpy()  # stride 32: shifts (0, 0), (32, 0), (0, 32) ...
    assert anchors.shape == (12, 4)
    np.testing.assert_array_equal(anchors[3], [32 - 23, -11, 32 + 23, 11])
    np.testing.assert_array_equal(anchors[6], [-23, 32 - 11, 23, 32 + 11])


def test_inference_output_format() -> None:
    lucid.manual_seed(0)
    model = fasterrcnn_resnet50_fpn(**SMALL).eval()
    images = [lucid.rand(3, 70, 50), lucid.rand(3, 40, 60)]
    with lucid.no_grad():
        out = model(images)
    assert len(out) == 2
    for det, img in zip(out, images):
        assert set(det) == {"boxes", "labels", "scores"}
        k = det["boxes"].shape[0]
        assert det["boxes"].shape == (k, 4) and det["labels"].shape == det["scores"].shape == (k,)
        assert det["labels"].dtype == lucid.int64 and k <= 100
        boxes = det["boxes"].numpy()  # in the original image's pixels
        assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= img.shape[2] + 1e-3).all()
        assert (boxes[:, 3] <= img.shape[1] + 1e-3).all()
        scores, labels = det["scores"].numpy(), det["labels"].numpy()
        assert ((scores > 0.05) & (scores <= 1)).all() and ((labels >= 1) & (labels < 3)).all()
    model.train()
    with pytest.raises(ValueError, match="targets should not be none"):
        model(images)


def _patched_torchvision(tvm: Any) -> Any:
    torch = pytest.importorskip("torch")
    import torchvision.ops.boxes as tvb

    def greedy_nms(boxes: Any, scores: Any, thresh: float) -> Any:
        iou = tvb.box_iou(boxes, boxes)
        suppressed = torch.zeros(len(boxes), dtype=torch.bool)
        keep = []
        for i in scores.argsort(descending=True, stable=True).tolist():
            if not suppressed[i]:
                keep.append(i)
                suppressed |= iou[i] > thresh
        return torch.tensor(keep, dtype=torch.int64)

    tvb.nms = greedy_nms  # batched_nms calls the module's nms
    import sys

    import torchvision.ops.poolers as pool

    ra = sys.modules["torchvision.ops.roi_align"]  # (the package's name is the function)

    # torchvision's pure-torch RoI Align (its fallback without the compiled ops) lacks its
    # kernel's rule that samples over a pixel outside the map count 0, and is torch.compile'd
    # on first use (minutes): the test calls it uncompiled, with the kernel's rule added.
    interpolate = getattr(ra._bilinear_interpolate, "__wrapped__", ra._bilinear_interpolate)

    def kernel_interpolate(input: Any, ind: Any, y: Any, x: Any, ymask: Any, xmask: Any) -> Any:
        h, w = input.shape[-2:]
        inside_y = ((y >= -1.0) & (y <= h))[:, None, :, None, :, None]
        inside_x = ((x >= -1.0) & (x <= w))[:, None, None, :, None, :]
        return interpolate(input, ind, y, x, ymask, xmask) * (inside_y & inside_x)

    ra._bilinear_interpolate = kernel_interpolate
    uncompiled = getattr(ra._roi_align, "__wrapped__", ra._roi_align)

    def roi_align(input: Any, rois: Any, output_size: Any, spatial_scale: float = 1.0,
                  sampling_ratio: int = -1, aligned: bool = False) -> Any:  # fmt: skip
        return uncompiled(input, rois, spatial_scale, output_size[0], output_size[1],
                          sampling_ratio, aligned)  # fmt: skip

    pool.roi_align = roi_align
    return tvm.detection


@pytest.mark.parity
def test_count_and_keys_match_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    det = _patched_torchvision(tvm)
    with torch.device("meta"):
        ref = det.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None)
    assert (
        sum(p.numel() for p in ref.parameters())
        == models.model_info("fasterrcnn_resnet50_fpn").num_params
    )
    ours = fasterrcnn_resnet50_fpn()
    assert {k: tuple(v.shape) for k, v in ref.state_dict().items()} == {
        k: tuple(v.shape) for k, v in ours.state_dict().items()
    }


@pytest.mark.parity
def test_inference_matches_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    det = _patched_torchvision(tvm)
    torch.manual_seed(0)
    tv_kwargs = {k: v for k, v in SMALL.items()}
    ref = det.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, **tv_kwargs).eval()
    with torch.no_grad():  # batch-norm statistics that are not the defaults
        for name, b in ref.named_buffers():
            if name.endswith("running_var"):
                b.uniform_(0.5, 1.5)
            elif name.endswith("running_mean"):
                b.uniform_(-0.1, 0.1)
    model = fasterrcnn_resnet50_fpn(**SMALL).eval()
    model.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    img = np.random.default_rng(0).random((3, 90, 72)).astype(np.float32)
    with torch.no_grad():
        batch, _ = ref.transform([torch.tensor(img)])
        feats = ref.backbone(batch.tensors)
        objectness, deltas = ref.rpn.head(list(feats.values()))
        proposals, _ = ref.rpn(batch, feats)
        pooled = ref.roi_heads.box_roi_pool(feats, proposals, batch.image_sizes)
        logits, regression = ref.roi_heads.box_predictor(ref.roi_heads.box_head(pooled))
        expected = ref([torch.tensor(img)])[0]
    with lucid.no_grad():
        ours, sizes = model.transform([lucid.tensor(img)])
        assert sizes == batch.image_sizes
        ours_feats = model.backbone(ours)
        for key, value in feats.items():  # backbone + FPN
            np.testing.assert_allclose(
                ours_feats[key].numpy(), value.numpy(), rtol=1e-4, atol=1e-3
            )  # fmt: skip  (maps of magnitude ~100)
        ours_obj, ours_deltas = model.rpn.head(list(ours_feats.values()))
        for a, b in [*zip(ours_obj, objectness), *zip(ours_deltas, deltas)]:  # RPN head
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)
        # the box branch on torchvision's proposals
        props = [lucid.tensor(p.numpy()) for p in proposals]
        ours_pooled = model.roi_heads.box_roi_pool(ours_feats, props, sizes)
        np.testing.assert_allclose(ours_pooled.numpy(), pooled.numpy(), rtol=1e-4, atol=1e-3)
        ours_logits, ours_reg = model.roi_heads.box_predictor(model.roi_heads.box_head(ours_pooled))
        np.testing.assert_allclose(ours_logits.numpy(), logits.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(ours_reg.numpy(), regression.numpy(), rtol=1e-4, atol=1e-4)
        got = model([lucid.tensor(img)])[0]
    # end to end: float32 rounding of the proposals (1e-4 px) can flip a box across an NMS or
    # score threshold, so most, not all, detections must match one of ours
    assert expected["boxes"].shape[0] > 10
    assert _matched(expected, got) >= 0.9 * expected["boxes"].shape[0]


def _matched(expected: Any, got: Any) -> int:
    """How many of torchvision's detections have one of ours with the same label, a score
    within 1e-3 and an IoU over 0.99."""
    from lucid.data.ops import box_iou

    iou = box_iou(lucid.tensor(expected["boxes"].numpy()), got["boxes"]).numpy()
    labels_ok = expected["labels"].numpy()[:, None] == got["labels"].numpy()[None, :]
    scores_ok = np.abs(expected["scores"].numpy()[:, None] - got["scores"].numpy()[None, :]) < 1e-3
    return int(((iou > 0.99) & labels_ok & scores_ok).any(axis=1).sum())


def test_mask_rcnn_count_and_output_format(monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info("maskrcnn_resnet50_fpn")
    assert (info.task, info.reference) == ("instance-segmentation", "torchvision")
    with monkeypatch.context() as patch:
        _skip_init(patch)
        model = models.create_model("maskrcnn_resnet50_fpn")
        assert sum(p.numel() for p in model.parameters()) == info.num_params
        frozen = maskrcnn_resnet50_fpn(frozen_batch_norm=True)
        assert sum(p.numel() for p in frozen.parameters()) == 44_401_393  # the COCO layout
    lucid.manual_seed(0)
    model = maskrcnn_resnet50_fpn(**SMALL).eval()
    with lucid.no_grad():
        det = model([lucid.rand(3, 70, 50)])[0]
    k = det["boxes"].shape[0]
    assert k > 0 and det["masks"].shape == (k, 1, 70, 50)
    masks = det["masks"].numpy()
    assert ((masks >= 0) & (masks <= 1)).all()
    # outside each (widened) box the pasted mask is 0
    x2 = int(np.ceil(det["boxes"].numpy()[0, 2])) + 3
    assert x2 >= 50 or not masks[0, 0, :, x2:].any()


@pytest.mark.parity
def test_mask_rcnn_matches_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    det = _patched_torchvision(tvm)
    with torch.device("meta"):
        full = det.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None)
    assert (
        sum(p.numel() for p in full.parameters())
        == models.model_info("maskrcnn_resnet50_fpn").num_params
    )
    torch.manual_seed(0)
    ref = det.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, **SMALL).eval()
    model = maskrcnn_resnet50_fpn(**SMALL).eval()
    state = {k: lucid.tensor(v.numpy()) for k, v in ref.state_dict().items()}
    assert sorted(state) == sorted(model.state_dict())
    model.load_state_dict(state)
    img = np.random.default_rng(0).random((3, 90, 72)).astype(np.float32)
    with torch.no_grad():
        expected = ref([torch.tensor(img)])[0]
    with lucid.no_grad():
        got = model([lucid.tensor(img)])[0]
    assert expected["boxes"].shape[0] > 10
    assert _matched(expected, got) >= 0.9 * expected["boxes"].shape[0]
    n = min(expected["boxes"].shape[0], got["boxes"].shape[0])
    same = [i for i in range(n) if np.abs(expected["boxes"][i].numpy()
                                          - got["boxes"][i].numpy()).max() < 0.05]  # fmt: skip
    assert len(same) >= 0.9 * n
    np.testing.assert_allclose(got["masks"].numpy()[same], expected["masks"].numpy()[same],
                               rtol=1e-3, atol=1e-3)  # fmt: skip


def test_retinanet_count_and_output_format(monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info("retinanet_resnet50_fpn")
    assert (info.task, info.reference) == ("object-detection", "torchvision")
    with monkeypatch.context() as patch:
        _skip_init(patch)
        model = models.create_model("retinanet_resnet50_fpn")
        assert sum(p.numel() for p in model.parameters()) == info.num_params
        frozen = retinanet_resnet50_fpn(frozen_batch_norm=True)
        assert sum(p.numel() for p in frozen.parameters()) == 34_014_999  # the COCO layout
    lucid.manual_seed(0)
    model = retinanet_resnet50_fpn(num_classes=3, min_size=64, max_size=96).eval()
    nn.init.normal_(model.head.classification_head.cls_logits.bias, 0.0, 1.0)  # detections
    with lucid.no_grad():
        det = model([lucid.rand(3, 70, 50)])[0]
    k = det["boxes"].shape[0]
    assert 0 < k <= 300 and det["scores"].shape == det["labels"].shape == (k,)
    assert (det["scores"].numpy() > 0.05).all() and (det["labels"].numpy() < 3).all()


@pytest.mark.parity
def test_retinanet_matches_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    det = _patched_torchvision(tvm)
    with torch.device("meta"):
        full = det.retinanet_resnet50_fpn(weights=None, weights_backbone=None)
    assert (
        sum(p.numel() for p in full.parameters())
        == models.model_info("retinanet_resnet50_fpn").num_params
    )
    torch.manual_seed(0)
    kwargs = {"num_classes": 3, "min_size": 64, "max_size": 96}
    ref = det.retinanet_resnet50_fpn(weights=None, weights_backbone=None, **kwargs).eval()
    torch.nn.init.normal_(ref.head.classification_head.cls_logits.bias, 0, 1)  # detections
    model = retinanet_resnet50_fpn(**kwargs).eval()
    state = {k: lucid.tensor(v.numpy()) for k, v in ref.state_dict().items()}
    assert sorted(state) == sorted(model.state_dict())
    model.load_state_dict(state)
    img = np.random.default_rng(0).random((3, 90, 72)).astype(np.float32)
    with torch.no_grad():
        expected = ref([torch.tensor(img)])[0]
    with lucid.no_grad():
        got = model([lucid.tensor(img)])[0]
    assert expected["boxes"].shape[0] > 10
    assert _matched(expected, got) >= 0.9 * expected["boxes"].shape[0]


# --- training mode (torchvision's loss dicts) -------------------------------------------------

TRAIN_SMALL: dict[str, Any] = {"num_classes": 3, "min_size": 64, "max_size": 96,
                               "rpn_pre_nms_top_n_train": 100, "rpn_post_nms_top_n_train": 50,
                               "rpn_batch_size_per_image": 64,
                               "box_batch_size_per_image": 32}  # fmt: skip


def _train_batch() -> tuple[list[np.ndarray], list[dict[str, np.ndarray]]]:
    """Two images of different sizes, one and two boxes, with masks inside the boxes."""
    rng = np.random.default_rng(1)
    images = [
        rng.random((3, 70, 50)).astype(np.float32),
        rng.random((3, 40, 60)).astype(np.float32),
    ]
    boxes = [np.array([[5.0, 10.0, 30.0, 40.0]], np.float32),
             np.array([[5.0, 5.0, 25.0, 20.0], [30.0, 18.0, 58.0, 38.0]], np.float32)]  # fmt: skip
    targets = []
    for img, b, lab in zip(images, boxes, [[1], [2, 1]]):
        masks = np.zeros((len(b), *img.shape[1:]), np.uint8)
        for m, (x0, y0, x1, y1) in zip(masks, b.astype(int)):
            m[y0 + 2 : y1 - 1, x0 + 1 : x1 - 3] = 1
        targets.append({"boxes": b, "labels": np.array(lab, np.int64), "masks": masks})
    return images, targets


def _lucid_batch(masks: bool = True) -> tuple[list[Any], list[dict[str, Any]]]:
    images, targets = _train_batch()
    return [lucid.tensor(i) for i in images], [
        {k: lucid.tensor(v) for k, v in t.items() if masks or k != "masks"} for t in targets
    ]


@pytest.mark.parametrize(
    "builder,keys",
    [(fasterrcnn_resnet50_fpn, {"loss_objectness", "loss_rpn_box_reg", "loss_classifier",
                                "loss_box_reg"}),
     (maskrcnn_resnet50_fpn, {"loss_objectness", "loss_rpn_box_reg", "loss_classifier",
                              "loss_box_reg", "loss_mask"})],
)  # fmt: skip
def test_rcnn_training_losses_and_gradients(builder: Any, keys: set[str]) -> None:
    lucid.manual_seed(0)
    model = builder(**TRAIN_SMALL, frozen_batch_norm=True).train()  # stem and layer1 frozen
    images, targets = _lucid_batch()
    losses = model(images, targets)
    assert set(losses) == keys
    for value in losses.values():
        assert value.shape == () and np.isfinite(value.item()) and value.item() >= 0
    sum(losses.values()).backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    for name in ["backbone.body.layer2.0.conv1.weight", "backbone.fpn.layer_blocks.0.0.weight",
                 "rpn.head.cls_logits.weight", "rpn.head.bbox_pred.weight",
                 "roi_heads.box_head.fc6.weight", "roi_heads.box_predictor.bbox_pred.weight",
                 *(["roi_heads.mask_predictor.mask_fcn_logits.weight"]
                   if "loss_mask" in keys else [])]:  # fmt: skip
        g = grads[name]
        assert g is not None and np.abs(g.numpy()).sum() > 0, name
    assert grads["backbone.body.layer1.0.conv1.weight"] is None  # frozen
    with pytest.raises(ValueError, match="positive height and width"):
        model(images, [targets[0], {**targets[1], "boxes": lucid.tensor([[5.0, 5, 5, 9]])}])
    # an image without boxes is all background
    empty = {"boxes": lucid.zeros((0, 4)), "labels": lucid.zeros((0,), dtype=lucid.int64),
             "masks": lucid.zeros((0, 40, 60), dtype=lucid.uint8)}  # fmt: skip
    losses = model(images, [targets[0], empty])
    assert all(np.isfinite(v.item()) for v in losses.values())


def test_retinanet_training_losses_and_gradients() -> None:
    lucid.manual_seed(0)
    model = retinanet_resnet50_fpn(num_classes=3, min_size=64, max_size=96).train()
    images, targets = _lucid_batch(masks=False)
    losses = model(images, targets)
    assert set(losses) == {"classification", "bbox_regression"}
    sum(losses.values()).backward()
    for name in ["backbone.body.conv1.weight", "backbone.fpn.extra_blocks.p6.weight",
                 "head.classification_head.cls_logits.weight",
                 "head.regression_head.bbox_reg.weight"]:  # fmt: skip
        g = dict(model.named_parameters())[name].grad
        assert g is not None and np.abs(g.numpy()).sum() > 0, name


def test_fastrcnn_loss_gradients_by_finite_differences() -> None:
    from lucid.models.detection.roi_heads import fastrcnn_loss

    rng = np.random.default_rng(0)
    logits = lucid.tensor(rng.normal(size=(6, 3)), dtype=lucid.float64, requires_grad=True)
    reg = lucid.tensor(rng.normal(size=(6, 12)) * 0.05, dtype=lucid.float64, requires_grad=True)
    labels = [lucid.tensor([1, 0, 2]), lucid.tensor([0, 2, 1])]
    targets = [lucid.tensor(rng.normal(size=(3, 4)), dtype=lucid.float64) for _ in range(2)]

    def f(a: Any, b: Any) -> Any:
        cls, box = fastrcnn_loss(a, b, labels, targets)
        return cls + 3 * box

    assert lucid.autograd.gradcheck(f, (logits, reg), eps=1e-6, atol=1e-6, rtol=1e-4)


def _tv_training(tvm: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """torchvision's detection package with pure-torch ops (as for inference), its mask
    projection's RoI Align too, and samplers that take the first candidates (``randperm`` is
    ``arange``, here and in lucid), so both pick the same anchors and proposals."""
    torch = pytest.importorskip("torch")
    det = _patched_torchvision(tvm)
    import torchvision.ops.poolers as pool

    monkeypatch.setattr(det.roi_heads, "roi_align", pool.roi_align)
    monkeypatch.setattr(torch, "randperm", lambda n, **kw: torch.arange(n))
    monkeypatch.setattr(lucid, "randperm", lambda n, *a, **kw: lucid.arange(n))
    return det


def _compare_training(ref: Any, model: Any, keys: list[str], masks: bool = True) -> None:
    torch = pytest.importorskip("torch")
    state = {k: lucid.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    model.load_state_dict(state)
    ref.train()
    model.train()
    # batch norm on running statistics: with batch statistics over a batch of 2 and maps of
    # 2 x 3 pixels, float32 rounding in the forward is amplified ~1e4 in the backbone's
    # gradients (1e-2 relative apart, the losses still within 1e-4); the loss computation,
    # the matching and sampling, and the gradient paths are what is compared here
    for m in ref.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
    images, targets = _train_batch()
    tv_targets = [{k: torch.tensor(v) for k, v in t.items() if masks or k != "masks"}
                  for t in targets]  # fmt: skip
    expected = ref([torch.tensor(i) for i in images], tv_targets)
    got = model(*_lucid_batch(masks))
    assert set(got) == set(expected)
    for key, value in expected.items():  # float32 sums over up to ~10^4 terms
        np.testing.assert_allclose(got[key].item(), value.item(), rtol=2e-4, atol=1e-6,
                                   err_msg=key)  # fmt: skip
    sum(expected.values()).backward()
    sum(got.values()).backward()
    ours = dict(model.named_parameters())
    for name in keys:  # observed: within 2e-5 of the largest entry
        g_ref = dict(ref.named_parameters())[name].grad.numpy()
        g = ours[name].grad.numpy()
        scale = np.abs(g_ref).max()
        assert scale > 0, name
        np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-4 * scale, err_msg=name)


@pytest.mark.parity
def test_faster_and_mask_rcnn_training_match_torchvision(
    tvm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    det = _tv_training(tvm, monkeypatch)
    keys = ["backbone.body.layer3.0.conv1.weight", "backbone.fpn.inner_blocks.1.0.weight",
            "rpn.head.conv.0.0.weight", "rpn.head.cls_logits.bias", "rpn.head.bbox_pred.weight",
            "roi_heads.box_head.fc6.weight", "roi_heads.box_predictor.cls_score.weight",
            "roi_heads.box_predictor.bbox_pred.bias"]  # fmt: skip
    torch.manual_seed(0)
    ref = det.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, **TRAIN_SMALL)
    _compare_training(ref, fasterrcnn_resnet50_fpn(**TRAIN_SMALL), keys)
    torch.manual_seed(1)
    ref = det.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, **TRAIN_SMALL)
    _compare_training(ref, maskrcnn_resnet50_fpn(**TRAIN_SMALL),
                      [*keys, "roi_heads.mask_head.0.0.weight",
                       "roi_heads.mask_predictor.mask_fcn_logits.weight"])  # fmt: skip


@pytest.mark.parity
@pytest.mark.parametrize("name", ["retinanet_resnet50_fpn", "retinanet_resnet50_fpn_v2"])
def test_retinanet_training_matches_torchvision(
    tvm: Any, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """v1: focal + L1 losses; v2: GroupNorm subnets and the GIoU box loss."""
    torch = pytest.importorskip("torch")
    det = _tv_training(tvm, monkeypatch)
    torch.manual_seed(0)
    kwargs = {"num_classes": 3, "min_size": 64, "max_size": 96}
    ref = getattr(det, name)(weights=None, weights_backbone=None, **kwargs)
    keys = ["backbone.body.layer2.0.conv1.weight", "backbone.fpn.extra_blocks.p6.weight",
            "head.classification_head.conv.0.0.weight", "head.classification_head.cls_logits.bias",
            "head.regression_head.bbox_reg.weight"]  # fmt: skip
    _compare_training(ref, models.create_model(name, **kwargs), keys, masks=False)


# --- torchvision's other detection builders ---------------------------------------------------

V2_BUILDERS = [
    "fasterrcnn_resnet50_fpn_v2",
    "maskrcnn_resnet50_fpn_v2",
    "retinanet_resnet50_fpn_v2",
    "fasterrcnn_mobilenet_v3_large_fpn",
    "fasterrcnn_mobilenet_v3_large_320_fpn",
]


@pytest.mark.parametrize("name", V2_BUILDERS)
def test_v2_builder_counts(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info(name)
    assert info.reference == "torchvision" and f"{info.num_params:,}" in (
        models.get_model_factory(name).__doc__ or ""
    )
    _skip_init(monkeypatch)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == info.num_params


@pytest.mark.parity
@pytest.mark.parametrize("name", V2_BUILDERS)
def test_v2_builder_keys_match_torchvision(tvm: Any, name: str) -> None:
    torch = pytest.importorskip("torch")
    det = _patched_torchvision(tvm)
    with torch.device("meta"):
        ref = getattr(det, name)(weights=None, weights_backbone=None)
    assert sum(p.numel() for p in ref.parameters()) == models.model_info(name).num_params
    ours = models.create_model(name)
    assert {k: tuple(v.shape) for k, v in ref.state_dict().items()} == {
        k: tuple(v.shape) for k, v in ours.state_dict().items()
    }


def test_small_resnet_fpn_faster_rcnn_trains() -> None:
    """The builder pieces of tools/experiments/rcnn_shapes.py: a ResNet-18 FPN Faster R-CNN
    takes a few Adam steps on the drawn shapes and its loss falls."""
    from lucid import optim
    from lucid.models.detection._utils import resnet_fpn_backbone
    from lucid.models.detection.faster_rcnn import FasterRCNN
    from lucid.models.detection.roi_heads import FastRCNNPredictor, TwoMLPHead
    from lucid.models.detection.shapes import SyntheticShapes

    lucid.manual_seed(0)
    model = FasterRCNN(
        resnet_fpn_backbone("resnet18", out_channels=32), num_classes=4, min_size=64,
        max_size=64, anchor_generator=AnchorGenerator(((8,), (16,), (24,), (32,), (48,)),
                                                      ((0.5, 1.0, 2.0),) * 5),
        box_head=TwoMLPHead(32 * 49, 64), box_predictor=FastRCNNPredictor(64, 4),
        rpn_pre_nms_top_n_train=50, rpn_post_nms_top_n_train=20,
        rpn_batch_size_per_image=32, box_batch_size_per_image=16,
    ).train()  # fmt: skip
    items = [SyntheticShapes(2, seed=0)[i] for i in range(2)]
    opt = optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    totals = []
    for _ in range(4):  # the same batch: the loss must fall
        losses = model([im for im, _ in items], [t for _, t in items])
        total = sum(losses.values())
        opt.zero_grad()
        total.backward()
        opt.step()
        totals.append(total.item())
    assert totals[-1] < totals[0]


def test_mobilenet_faster_rcnn_trains_and_detects() -> None:
    from lucid.models.detection.faster_rcnn import fasterrcnn_mobilenet_v3_large_320_fpn

    lucid.manual_seed(0)
    model = fasterrcnn_mobilenet_v3_large_320_fpn(**TRAIN_SMALL).train()
    images, targets = _lucid_batch(masks=False)
    losses = model(images, targets)
    assert set(losses) == {"loss_objectness", "loss_rpn_box_reg", "loss_classifier",
                           "loss_box_reg"}  # fmt: skip
    sum(losses.values()).backward()
    g = dict(model.named_parameters())["backbone.body.13.block.0.0.weight"].grad
    assert g is not None and np.abs(g.numpy()).sum() > 0
    model.eval()
    with lucid.no_grad():
        out = model(images)
    assert len(out) == 2 and set(out[0]) == {"boxes", "labels", "scores"}


@pytest.mark.parity
@pytest.mark.parametrize(
    "name", ["fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_320_fpn"]
)
def test_more_faster_rcnn_training_matches_torchvision(
    tvm: Any, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """torchvision's weights loaded: the v2 heads and the MobileNetV3 FPN extractor give its
    losses and gradients."""
    torch = pytest.importorskip("torch")
    det = _tv_training(tvm, monkeypatch)
    torch.manual_seed(0)
    ref = getattr(det, name)(weights=None, weights_backbone=None, **TRAIN_SMALL)
    keys = ["rpn.head.conv.0.0.weight", "rpn.head.bbox_pred.weight",
            "roi_heads.box_predictor.cls_score.weight",
            "backbone.fpn.layer_blocks.0.0.weight"]  # fmt: skip
    _compare_training(ref, models.create_model(name, **TRAIN_SMALL), keys)


def _small_mask_rcnn(**kwargs: Any) -> Any:
    """A ResNet-18 FPN (32 channels) Mask R-CNN on 64x64 images: the full eval path, cheap."""
    from lucid.models.detection._utils import resnet_fpn_backbone
    from lucid.models.detection.mask_rcnn import MaskRCNN, MaskRCNNHeads
    from lucid.models.detection.roi_heads import FastRCNNPredictor, TwoMLPHead

    return MaskRCNN(
        resnet_fpn_backbone("resnet18", out_channels=32), num_classes=4, min_size=64,
        max_size=64, box_head=TwoMLPHead(32 * 49, 64), box_predictor=FastRCNNPredictor(64, 4),
        mask_head=MaskRCNNHeads(32, (256,)), rpn_pre_nms_top_n_test=50,
        rpn_post_nms_top_n_test=20, **kwargs,
    ).eval()  # fmt: skip


@pytest.mark.parametrize("where", ["rpn_score_thresh", "box_score_thresh"])
def test_rcnn_eval_with_nothing_surviving_gives_empty_detections(where: str) -> None:
    # no proposal survives the RPN's score threshold (the box decoding once raised on
    # ``reshape(0, -1)``; torchvision reshapes only when ``box_sum > 0``), or proposals
    # survive but no detection does: per image empty boxes, labels, scores and masks
    lucid.manual_seed(0)
    model = _small_mask_rcnn(**{where: 1.1})  # sigmoid and softmax scores are all below 1.1
    images = [lucid.rand(3, 64, 64), lucid.rand(3, 48, 56)]
    with lucid.set_grad_enabled(where == "rpn_score_thresh"):  # with and without a graph
        out = model(images)
    assert len(out) == 2
    for det, (h, w) in zip(out, [(64, 64), (48, 56)]):
        assert {k: tuple(v.shape) for k, v in det.items()} == {
            "boxes": (0, 4), "labels": (0,), "scores": (0,), "masks": (0, 1, h, w)
        }  # fmt: skip
        assert det["labels"].dtype == lucid.int64 and det["boxes"].dtype == lucid.float32
    if where == "rpn_score_thresh":
        lucid.manual_seed(0)
        with lucid.no_grad():
            dets = _small_mask_rcnn()(images)  # the same model, default thresholds: detections
        assert all(d["boxes"].shape[0] > 0 for d in dets)


def test_box_coder_decodes_no_boxes_and_mixed_empty_images() -> None:
    from lucid.models.detection._utils import BoxCoder

    coder = BoxCoder((10.0, 10.0, 5.0, 5.0))
    assert coder.decode(lucid.zeros(0, 12), [lucid.zeros(0, 4)]).shape == (0, 3, 4)
    assert coder.decode(lucid.zeros(0, 12), [lucid.zeros(0, 4)] * 2).shape == (0, 3, 4)
    boxes = lucid.tensor([[0.0, 0.0, 4.0, 6.0], [1.0, 2.0, 5.0, 3.0]])
    lucid.manual_seed(0)
    codes = lucid.randn(2, 8) * 0.1
    got = coder.decode(codes, [lucid.zeros(0, 4), boxes])  # an image without boxes first
    np.testing.assert_allclose(got.numpy(), coder.decode(codes, [boxes]).numpy(), rtol=0, atol=0)
    # box 0, class 0: (dx, dy, dw, dh) / weights against the box's centre and size
    dx, dy, dw, dh = (codes.numpy()[0, :4] / np.array([10.0, 10.0, 5.0, 5.0])).tolist()
    cx, cy, w, h = 2.0 + dx * 4.0, 3.0 + dy * 6.0, 4.0 * np.exp(dw), 6.0 * np.exp(dh)
    np.testing.assert_allclose(got.numpy()[0, 0], [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2],
                               rtol=1e-5, atol=1e-5)  # fmt: skip
