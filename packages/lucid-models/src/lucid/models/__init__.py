"""Lucid's model zoo: classic architectures from their papers, behind one registry.

Every builder is registered with its task, paper, parameter count and default input size
(``model_info``); the families torchvision has are laid out as torchvision lays them out, so
its state dicts load unchanged.

>>> import lucid.models as models
>>> model = models.create_model("lenet5")
>>> models.list_models("resnet*")[:2]
['resnet101', 'resnet152']
>>> models.model_info("resnet50").num_params
25557032
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
from lucid.models.convnext import (
    ConvNeXt,
    convnext_base,
    convnext_large,
    convnext_small,
    convnext_tiny,
)
from lucid.models.densenet import DenseNet, densenet121
from lucid.models.efficientnet import (
    EfficientNet,
    efficientnet_b0,
    efficientnet_b1,
    efficientnet_b2,
    efficientnet_b3,
    efficientnet_b4,
    efficientnet_b5,
    efficientnet_b6,
    efficientnet_b7,
    efficientnet_v2_l,
    efficientnet_v2_m,
    efficientnet_v2_s,
)
from lucid.models.googlenet import (
    GoogLeNet,
    GoogLeNetOutputs,
    googlenet,
)
from lucid.models.inception import (
    Inception3,
    InceptionOutputs,
    inception_v3,
)
from lucid.models.lenet import (
    LeNet1,
    LeNet4,
    LeNet5,
    lenet1,
    lenet4,
    lenet5,
    lenet5_classic,
)
from lucid.models.mnasnet import (
    MNASNet,
    mnasnet0_5,
    mnasnet0_75,
    mnasnet1_0,
    mnasnet1_3,
)
from lucid.models.mobilenet import MobileNetV2, mobilenet_v2
from lucid.models.mobilenetv3 import (
    MobileNetV3,
    mobilenet_v3_large,
    mobilenet_v3_small,
)
from lucid.models.regnet import (
    RegNet,
    regnet_x_1_6gf,
    regnet_x_3_2gf,
    regnet_x_8gf,
    regnet_x_16gf,
    regnet_x_32gf,
    regnet_x_400mf,
    regnet_x_800mf,
    regnet_y_1_6gf,
    regnet_y_3_2gf,
    regnet_y_8gf,
    regnet_y_16gf,
    regnet_y_32gf,
    regnet_y_128gf,
    regnet_y_400mf,
    regnet_y_800mf,
)
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
from lucid.models.shufflenet import (
    ShuffleNetV2,
    shufflenet_v2_x0_5,
    shufflenet_v2_x1_0,
    shufflenet_v2_x1_5,
    shufflenet_v2_x2_0,
)
from lucid.models.squeezenet import (
    SqueezeNet,
    squeezenet1_0,
    squeezenet1_1,
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
from lucid.models.vit import (
    VisionTransformer,
    vit_b_16,
    vit_b_32,
    vit_h_14,
    vit_l_16,
    vit_l_32,
    vit_tiny_patch4_32,
)

__all__ = [
    "alexnet",
    "convnext_base",
    "convnext_large",
    "convnext_small",
    "convnext_tiny",
    "create_model",
    "densenet121",
    "efficientnet_b0",
    "efficientnet_b1",
    "efficientnet_b2",
    "efficientnet_b3",
    "efficientnet_b4",
    "efficientnet_b5",
    "efficientnet_b6",
    "efficientnet_b7",
    "efficientnet_v2_l",
    "efficientnet_v2_m",
    "efficientnet_v2_s",
    "get_model_factory",
    "googlenet",
    "inception_v3",
    "lenet1",
    "lenet4",
    "lenet5",
    "lenet5_classic",
    "list_models",
    "mnasnet0_5",
    "mnasnet0_75",
    "mnasnet1_0",
    "mnasnet1_3",
    "mobilenet_v2",
    "mobilenet_v3_large",
    "mobilenet_v3_small",
    "model_info",
    "register_model",
    "regnet_x_16gf",
    "regnet_x_1_6gf",
    "regnet_x_32gf",
    "regnet_x_3_2gf",
    "regnet_x_400mf",
    "regnet_x_800mf",
    "regnet_x_8gf",
    "regnet_y_128gf",
    "regnet_y_16gf",
    "regnet_y_1_6gf",
    "regnet_y_32gf",
    "regnet_y_3_2gf",
    "regnet_y_400mf",
    "regnet_y_800mf",
    "regnet_y_8gf",
    "resnet101",
    "resnet152",
    "resnet18",
    "resnet18_cifar",
    "resnet34",
    "resnet50",
    "resnext101_32x8d",
    "resnext101_64x4d",
    "resnext50_32x4d",
    "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5",
    "shufflenet_v2_x2_0",
    "squeezenet1_0",
    "squeezenet1_1",
    "vgg11",
    "vgg11_bn",
    "vgg13",
    "vgg13_bn",
    "vgg16",
    "vgg16_bn",
    "vgg19",
    "vgg19_bn",
    "vit_b_16",
    "vit_b_32",
    "vit_h_14",
    "vit_l_16",
    "vit_l_32",
    "vit_tiny_patch4_32",
    "wide_resnet101_2",
    "wide_resnet28_10",
    "wide_resnet50_2",
    "AlexNet",
    "ConvNeXt",
    "DenseNet",
    "EfficientNet",
    "GoogLeNet",
    "GoogLeNetOutputs",
    "Inception3",
    "InceptionOutputs",
    "LeNet1",
    "LeNet4",
    "LeNet5",
    "MNASNet",
    "MobileNetV2",
    "MobileNetV3",
    "ModelInfo",
    "RegNet",
    "ResNet",
    "ShuffleNetV2",
    "SqueezeNet",
    "VGG",
    "VisionTransformer",
    "WideResNet",
]
