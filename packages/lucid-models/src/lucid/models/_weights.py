"""The weight initialisation that torchvision's VGG and MobileNetV2 share."""

from __future__ import annotations

from lucid import nn


def init_conv_bn_linear(model: nn.Module) -> None:
    """He-normal convolutions (fan-out, ReLU gain), BatchNorm at weight 1, linear weights from
    N(0, 0.01), every bias zero."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)
