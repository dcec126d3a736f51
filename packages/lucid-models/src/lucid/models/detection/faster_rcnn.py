"""Faster R-CNN (Ren et al., "Faster R-CNN: Towards Real-Time Object Detection with Region
Proposal Networks", NeurIPS 2015) with a ResNet-50 + FPN backbone (Lin et al., "Feature
Pyramid Networks for Object Detection", CVPR 2017), as torchvision's
``fasterrcnn_resnet50_fpn`` builds it: the same modules and keys (``backbone.body``,
``backbone.fpn``, ``rpn.head``, ``roi_heads.box_head``, ``roi_heads.box_predictor``), so its
state dicts load unchanged, and its inference path (``model.eval()``; ``model(images)`` with a
list of ``(3, H, W)`` images in [0, 1] gives one dict of ``boxes`` (xyxy, in the image's
pixels), ``labels`` and ``scores`` per image) and its training mode (``model.train()``;
``model(images, targets)`` gives torchvision's loss dict: ``loss_objectness``,
``loss_rpn_box_reg``, ``loss_classifier``, ``loss_box_reg``)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.detection._utils import (
    BackboneWithFPN,
    _freeze_batch_norms,
    check_targets,
    resnet50_fpn_backbone,
    resnet_fpn_backbone,
)
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.detection.roi_heads import (
    FastRCNNConvFCHead,
    FastRCNNPredictor,
    RoIHeads,
    TwoMLPHead,
)
from lucid.models.detection.rpn import RegionProposalNetwork, RPNHead
from lucid.models.detection.transform import GeneralizedRCNNTransform
from lucid.models.mobilenetv3 import MobileNetV3, _conf
from lucid.models.ops import MultiScaleRoIAlign

_PAPER = (
    'Ren et al., "Faster R-CNN: Towards Real-Time Object Detection with Region Proposal '
    'Networks", NeurIPS 2015'
)


class FasterRCNN(nn.Module):
    """torchvision's ``FasterRCNN`` (its defaults: 800-1333 resizing, 2000 / 1000 proposals
    per image in training / at test time, 0.05 score threshold, 100 detections per image).

    ``forward(images)``: a list of ``(3, H, W)`` images to a list of ``{"boxes", "labels",
    "scores"}`` dicts, in eval mode. ``forward(images, targets)`` in training mode: one
    ``{"boxes": (N, 4) float xyxy pixels, "labels": (N,) int64}`` dict per image to the dict
    of losses (``loss_objectness``, ``loss_rpn_box_reg``, ``loss_classifier``,
    ``loss_box_reg``), whose sum is what torchvision's reference scripts minimise.
    """

    def __init__(self, backbone: nn.Module, num_classes: int = 91, min_size: int = 800,
                 max_size: int = 1333, rpn_pre_nms_top_n_test: int = 1000,
                 rpn_post_nms_top_n_test: int = 1000, rpn_nms_thresh: float = 0.7,
                 rpn_score_thresh: float = 0.0, box_score_thresh: float = 0.05,
                 box_nms_thresh: float = 0.5, box_detections_per_img: int = 100,
                 image_mean: list[float] | None = None,
                 image_std: list[float] | None = None,
                 rpn_pre_nms_top_n_train: int = 2000, rpn_post_nms_top_n_train: int = 2000,
                 rpn_fg_iou_thresh: float = 0.7, rpn_bg_iou_thresh: float = 0.3,
                 rpn_batch_size_per_image: int = 256, rpn_positive_fraction: float = 0.5,
                 box_fg_iou_thresh: float = 0.5, box_bg_iou_thresh: float = 0.5,
                 box_batch_size_per_image: int = 512, box_positive_fraction: float = 0.25,
                 bbox_reg_weights: tuple[float, float, float, float] | None = None,
                 anchor_generator: AnchorGenerator | None = None,
                 rpn_head: nn.Module | None = None,
                 box_roi_pool: MultiScaleRoIAlign | None = None,
                 box_head: nn.Module | None = None,
                 box_predictor: nn.Module | None = None) -> None:  # fmt: skip
        super().__init__()
        out = int(getattr(backbone, "out_channels"))
        anchors = anchor_generator or AnchorGenerator(((32,), (64,), (128,), (256,), (512,)),
                                                      ((0.5, 1.0, 2.0),) * 5)  # fmt: skip
        self.transform = GeneralizedRCNNTransform(
            min_size, max_size, image_mean or [0.485, 0.456, 0.406],
            image_std or [0.229, 0.224, 0.225])  # fmt: skip
        self.backbone = backbone
        self.rpn = RegionProposalNetwork(
            anchors,
            rpn_head or RPNHead(out, anchors.num_anchors_per_location()[0]),
            {"training": rpn_pre_nms_top_n_train, "testing": rpn_pre_nms_top_n_test},
            {"training": rpn_post_nms_top_n_train, "testing": rpn_post_nms_top_n_test},
            rpn_nms_thresh,
            rpn_score_thresh,
            rpn_fg_iou_thresh,
            rpn_bg_iou_thresh,
            rpn_batch_size_per_image,
            rpn_positive_fraction,
        )
        pool = box_roi_pool or MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)
        resolution = pool.output_size[0]
        self.roi_heads = RoIHeads(
            pool, box_head or TwoMLPHead(out * resolution**2, 1024),
            box_predictor or FastRCNNPredictor(1024, num_classes), box_score_thresh,
            box_nms_thresh, box_detections_per_img, box_fg_iou_thresh, box_bg_iou_thresh,
            box_batch_size_per_image, box_positive_fraction, bbox_reg_weights)  # fmt: skip

    def _check_inputs(self, images: Any, targets: Any, masks: bool = False) -> None:
        name = type(self).__name__
        if not isinstance(images, (list, tuple)) or not images:
            raise ValueError(f"{name} expects a non-empty list of (3, H, W) image tensors, "
                             f"got {type(images).__name__}")  # fmt: skip
        if self.training:
            check_targets(name, targets, len(images), masks)

    def forward(self, images: list[Tensor], targets: list[dict[str, Tensor]] | None = None
                ) -> Any:  # fmt: skip
        self._check_inputs(images, targets)
        original = [(int(img.shape[-2]), int(img.shape[-1])) for img in images]
        features, sizes, detections, losses = self.detect(list(images), targets)
        if self.training:
            return losses
        for det, new, orig in zip(detections, sizes, original):
            det["boxes"] = GeneralizedRCNNTransform.resize_boxes(det["boxes"], new, orig)
        return detections

    def detect(self, images: list[Tensor], targets: list[dict[str, Tensor]] | None = None
               ) -> tuple[Any, list[tuple[int, int]], Any, dict[str, Tensor]]:  # fmt: skip
        """The FPN maps, the resized images' sizes, the detections in their coordinates (eval
        mode) and the losses (training mode, from ``targets`` in the original pixels)."""
        original = [(int(img.shape[-2]), int(img.shape[-1])) for img in images]
        batch, sizes = self.transform(images)
        if targets is not None and self.training:
            targets = self.transform.resize_targets(list(targets), original, sizes)
        features = self.backbone(batch)
        proposals, proposal_losses = self.rpn(batch, sizes, features, targets)
        detections, detector_losses = self.roi_heads(features, proposals, sizes, targets)
        return features, sizes, detections, {**detector_losses, **proposal_losses}


def _backbone(trainable_layers: int | None, frozen_batch_norm: bool) -> nn.Module:
    # torchvision: 3 trainable stages with (pretrained) frozen batch norms, all 5 without
    layers = trainable_layers if trainable_layers is not None else (3 if frozen_batch_norm else 5)
    return resnet50_fpn_backbone(layers, frozen_batch_norm)


@register_model(task="object-detection", paper=_PAPER, num_params=41_808_406,
                input_size=(3, 800, 800), reference="torchvision")  # fmt: skip
def fasterrcnn_resnet50_fpn(
    num_classes: int = 91,
    trainable_backbone_layers: int | None = None,
    frozen_batch_norm: bool = False,
    **kwargs: Any,
) -> FasterRCNN:
    """Faster R-CNN with a ResNet-50 + FPN backbone (COCO's 91 classes); 41,808,406
    parameters, as torchvision's builder with ``weights=None`` (trainable batch norms).
    ``frozen_batch_norm=True`` gives the layout of its COCO checkpoints (``FrozenBatchNorm2d``
    buffers, 41,755,286 parameters, the stem and ``layer1`` frozen), to load them."""
    backbone = _backbone(trainable_backbone_layers, frozen_batch_norm)
    return FasterRCNN(backbone, num_classes, **kwargs)


_PAPER_MOBILENET = f'{_PAPER}; Howard et al., "Searching for MobileNetV3", ICCV 2019 (the backbone)'
_PAPER_V2 = (
    'Li et al., "Benchmarking Detection Transfer Learning with Vision Transformers", 2021 '
    "(the improved recipe of torchvision's v2 weights)"
)


@register_model(task="object-detection", paper=f"{_PAPER}; {_PAPER_V2}", num_params=43_712_278,
                input_size=(3, 800, 800), reference="torchvision")  # fmt: skip
def fasterrcnn_resnet50_fpn_v2(num_classes: int = 91, **kwargs: Any) -> FasterRCNN:
    """torchvision's ``fasterrcnn_resnet50_fpn_v2``: batch norms in the FPN, a two-conv RPN
    head and a four-conv + one-fc box head (``FastRCNNConvFCHead``, batch-normed); all of the
    ResNet-50 trains. 43,712,278 parameters, as torchvision's builder with ``weights=None``."""
    backbone = resnet_fpn_backbone("resnet50", 5, norm_layer=nn.BatchNorm2d)
    anchors = AnchorGenerator(((32,), (64,), (128,), (256,), (512,)), ((0.5, 1.0, 2.0),) * 5)
    rpn_head = RPNHead(256, anchors.num_anchors_per_location()[0], conv_depth=2)
    box_head = FastRCNNConvFCHead((256, 7, 7), [256, 256, 256, 256], [1024], nn.BatchNorm2d)
    return FasterRCNN(backbone, num_classes, anchor_generator=anchors, rpn_head=rpn_head,
                      box_head=box_head, **kwargs)  # fmt: skip


class _SequentialBody(nn.Module):
    """torchvision's ``IntermediateLayerGetter`` over a ``Sequential``: its children under
    their own names (``"0"`` ..), the maps after those in ``return_layers`` returned."""

    def __init__(self, features: nn.Sequential, return_layers: dict[str, str]) -> None:
        super().__init__()
        last = max(int(k) for k in return_layers)
        for name, child in list(features.named_children())[: last + 1]:
            setattr(self, name, child)
        self.return_layers = return_layers

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        out: dict[str, Tensor] = OrderedDict()
        for name, child in self.named_children():
            x = child(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


def _mobilenet_v3_fpn_backbone(
    trainable_layers: int, frozen_batch_norm: bool = False
) -> BackboneWithFPN:
    """torchvision's ``_mobilenet_extractor(mobilenet_v3_large(norm_layer=BatchNorm2d), True,
    trainable_layers)``: the FPN on the last two stages (``features.13``, ``features.16``)."""
    setting, last_channel = _conf("large")
    features = MobileNetV3(setting, last_channel).features
    for m in features.modules():  # torchvision passes plain BatchNorm2d for detection
        if isinstance(m, nn.BatchNorm2d):
            m.eps, m.momentum = 1e-5, 0.1
    if frozen_batch_norm:  # torchvision's builder with weights: FrozenBatchNorm2d
        _freeze_batch_norms(features)
    stages = [0] + [i + 1 for i, c in enumerate(setting) if c.stride > 1] + [len(features) - 1]
    if not 0 <= trainable_layers <= len(stages):
        raise ValueError(f"trainable_layers must be in [0, {len(stages)}], got "
                         f"{trainable_layers}")  # fmt: skip
    for block in list(features.children())[: stages[len(stages) - trainable_layers]]:
        for p in block.parameters():
            p.requires_grad_(False)
    returned = [len(stages) - 2, len(stages) - 1]
    in_channels = [setting[stages[returned[0]] - 1].out_channels, 6 * setting[-1].out_channels]
    body = _SequentialBody(features, {str(stages[k]): str(v) for v, k in enumerate(returned)})
    return BackboneWithFPN(body, in_channels, 256)


def _mobilenet_fpn(num_classes: int, trainable_backbone_layers: int | None,
                   defaults: dict[str, Any], kwargs: dict[str, Any]) -> FasterRCNN:  # fmt: skip
    frozen = bool(kwargs.pop("frozen_batch_norm", False))  # set where weights are given
    default_layers = 3 if frozen else 6  # torchvision's defaults with and without weights
    backbone = _mobilenet_v3_fpn_backbone(
        default_layers if trainable_backbone_layers is None else trainable_backbone_layers,
        frozen,
    )
    anchors = AnchorGenerator(((32, 64, 128, 256, 512),) * 3, ((0.5, 1.0, 2.0),) * 3)
    return FasterRCNN(backbone, num_classes, anchor_generator=anchors,
                      **{**defaults, **kwargs})  # fmt: skip


@register_model(task="object-detection", paper=_PAPER_MOBILENET, num_params=19_410_754,
                input_size=(3, 800, 800), reference="torchvision")  # fmt: skip
def fasterrcnn_mobilenet_v3_large_fpn(num_classes: int = 91,
                                      trainable_backbone_layers: int | None = None,
                                      **kwargs: Any) -> FasterRCNN:  # fmt: skip
    """torchvision's ``fasterrcnn_mobilenet_v3_large_fpn``: MobileNetV3-Large with an FPN on
    its last two stages, 15 anchors (5 sizes x 3 ratios) per location on each of the three
    levels, an RPN score threshold of 0.05. 19,410,754 parameters, as torchvision's builder
    with ``weights=None``."""
    return _mobilenet_fpn(num_classes, trainable_backbone_layers,
                          {"rpn_score_thresh": 0.05}, kwargs)  # fmt: skip


@register_model(task="object-detection", paper=_PAPER_MOBILENET, num_params=19_410_754,
                input_size=(3, 320, 320), reference="torchvision")  # fmt: skip
def fasterrcnn_mobilenet_v3_large_320_fpn(num_classes: int = 91,
                                          trainable_backbone_layers: int | None = None,
                                          **kwargs: Any) -> FasterRCNN:  # fmt: skip
    """torchvision's ``fasterrcnn_mobilenet_v3_large_320_fpn``: the same model for 320-640
    pixel images, 150 RPN proposals before and after NMS at test time; 19,410,754
    parameters, as torchvision's builder with ``weights=None``."""
    defaults = {"min_size": 320, "max_size": 640, "rpn_pre_nms_top_n_test": 150,
                "rpn_post_nms_top_n_test": 150, "rpn_score_thresh": 0.05}  # fmt: skip
    return _mobilenet_fpn(num_classes, trainable_backbone_layers, defaults, kwargs)
