"""torchvision's quantizable classifiers (``torchvision.models.quantization``) as float models.

Lucid has no int8 kernels: the builders (``resnet18``, ``mobilenet_v2``, ...; registered as
``quantized_<name>``, as torchvision registers them) return the float model for
``quantize=False`` and raise ``NotImplementedError`` for ``quantize=True``; see
docs/differences.md.
"""

from __future__ import annotations

from lucid.models._tv_weights import (
    GoogLeNet_QuantizedWeights,
    Inception_V3_QuantizedWeights,
    MobileNet_V2_QuantizedWeights,
    MobileNet_V3_Large_QuantizedWeights,
    ResNet18_QuantizedWeights,
    ResNet50_QuantizedWeights,
    ResNeXt101_32X8D_QuantizedWeights,
    ResNeXt101_64X4D_QuantizedWeights,
    ShuffleNet_V2_X0_5_QuantizedWeights,
    ShuffleNet_V2_X1_0_QuantizedWeights,
    ShuffleNet_V2_X1_5_QuantizedWeights,
    ShuffleNet_V2_X2_0_QuantizedWeights,
)
from lucid.models.quantization.builders import (
    googlenet,
    inception_v3,
    mobilenet_v2,
    mobilenet_v3_large,
    resnet18,
    resnet50,
    resnext101_32x8d,
    resnext101_64x4d,
    shufflenet_v2_x0_5,
    shufflenet_v2_x1_0,
    shufflenet_v2_x1_5,
    shufflenet_v2_x2_0,
)

__all__ = [
    "GoogLeNet_QuantizedWeights",
    "Inception_V3_QuantizedWeights",
    "MobileNet_V2_QuantizedWeights",
    "MobileNet_V3_Large_QuantizedWeights",
    "ResNeXt101_32X8D_QuantizedWeights",
    "ResNeXt101_64X4D_QuantizedWeights",
    "ResNet18_QuantizedWeights",
    "ResNet50_QuantizedWeights",
    "ShuffleNet_V2_X0_5_QuantizedWeights",
    "ShuffleNet_V2_X1_0_QuantizedWeights",
    "ShuffleNet_V2_X1_5_QuantizedWeights",
    "ShuffleNet_V2_X2_0_QuantizedWeights",
    "googlenet",
    "inception_v3",
    "mobilenet_v2",
    "mobilenet_v3_large",
    "resnet18",
    "resnet50",
    "resnext101_32x8d",
    "resnext101_64x4d",
    "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5",
    "shufflenet_v2_x2_0",
]
