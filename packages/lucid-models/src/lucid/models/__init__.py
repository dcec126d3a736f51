"""Lucid's model zoo: classic architectures from their papers, behind one registry.

>>> import lucid.models as models
>>> model = models.create_model("lenet5")
>>> models.list_models("resnet*")[:2]
['resnet101', 'resnet152']
"""

from __future__ import annotations

from lucid.models._registry import (
    ModelInfo,
    create_model,
    get_model_factory,
    list_models,
    model_info,
    register_model,
)
from lucid.models.alexnet import AlexNet, alexnet
from lucid.models.densenet import DenseNet, densenet121
from lucid.models.lenet import LeNet1, LeNet4, LeNet5, lenet1, lenet4, lenet5, lenet5_classic
from lucid.models.mobilenet import MobileNetV2, mobilenet_v2
from lucid.models.resnet import (
    ResNet,
    WideResNet,
    resnet18,
    resnet18_cifar,
    resnet34,
    resnet50,
    resnet101,
    resnet152,
    resnext50_32x4d,
    resnext101_32x8d,
    resnext101_64x4d,
    wide_resnet28_10,
    wide_resnet50_2,
    wide_resnet101_2,
)
from lucid.models.vgg import (
    VGG,
    vgg11,
    vgg11_bn,
    vgg13,
    vgg13_bn,
    vgg16,
    vgg16_bn,
    vgg19,
    vgg19_bn,
)
from lucid.models.vit import VisionTransformer, vit_tiny_patch4_32

__all__ = [
    "VGG", "AlexNet", "DenseNet", "LeNet1", "LeNet4", "LeNet5", "MobileNetV2", "ResNet",
    "VisionTransformer", "WideResNet", "alexnet", "create_model", "densenet121",
    "ModelInfo", "get_model_factory", "model_info", "resnext50_32x4d",
    "resnext101_32x8d",
    "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2", "lenet1", "lenet4", "lenet5", "lenet5_classic", "list_models",
    "mobilenet_v2", "register_model", "resnet18", "resnet18_cifar", "resnet34", "resnet50",
    "resnet101", "resnet152", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn",
    "vgg19", "vgg19_bn", "vit_tiny_patch4_32", "wide_resnet28_10",
]  # fmt: skip
