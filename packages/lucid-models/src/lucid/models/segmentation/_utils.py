"""What torchvision's segmentation models share: ``IntermediateLayerGetter`` (a backbone's
children up to the last map returned) and ``_SimpleSegmentationModel`` (backbone, head,
optional auxiliary head, logits upsampled to the input)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from lucid import Tensor, nn
from lucid.nn import functional as F


class IntermediateLayerGetter(nn.ModuleDict):
    """A model's children, in order, up to the last of ``return_layers``; its forward returns
    the maps of ``return_layers`` (``{child name: output name}``) as an ordered dict
    (``torchvision.models._utils.IntermediateLayerGetter``: the same state-dict keys)."""

    def __init__(self, model: nn.Module, return_layers: dict[str, str]) -> None:
        names = [name for name, _ in model.named_children()]
        if not set(return_layers).issubset(names):
            raise ValueError(
                f"return_layers are not present in model: {sorted(set(return_layers) - set(names))}"
            )
        remaining = dict(return_layers)
        layers: OrderedDict[str, nn.Module] = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            remaining.pop(name, None)
            if not remaining:
                break
        super().__init__(layers)
        self.return_layers = dict(return_layers)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        out: dict[str, Tensor] = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class _SimpleSegmentationModel(nn.Module):
    """``backbone`` (an :class:`IntermediateLayerGetter` returning ``"out"`` and, with an
    auxiliary head, ``"aux"``), ``classifier`` on ``"out"``, ``aux_classifier`` on ``"aux"``;
    both logits bilinearly upsampled to the input's size, returned as ``{"out", "aux"}``."""

    __constants__ = ["aux_classifier"]

    def __init__(self, backbone: nn.Module, classifier: nn.Module,
                 aux_classifier: nn.Module | None = None) -> None:  # fmt: skip
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        size = tuple(x.shape[-2:])
        features = self.backbone(x)
        result: dict[str, Any] = OrderedDict()
        out = self.classifier(features["out"])
        result["out"] = F.interpolate(out, size=size, mode="bilinear", align_corners=False)
        if self.aux_classifier is not None:
            aux = self.aux_classifier(features["aux"])
            result["aux"] = F.interpolate(aux, size=size, mode="bilinear", align_corners=False)
        return result


def stage_indices(features: nn.Module) -> list[int]:
    """The positions of a MobileNetV3's stages in its ``features``: the stem, every block that
    strides (``_is_cn``) and the last conv (torchvision's segmentation builders pick from these)."""
    blocks = list(features.children())
    cn = [i for i, b in enumerate(blocks) if getattr(b, "_is_cn", False)]
    return [0, *cn, len(blocks) - 1]
