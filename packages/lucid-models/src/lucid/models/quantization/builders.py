"""torchvision's quantizable classifiers (``torchvision.models.quantization``), float only.

Lucid has no int8 kernels: each builder returns the float model (the same layout, parameters
and state-dict keys as torchvision's quantizable model before ``quantize_model``, which adds no
parameters) for ``quantize=False`` and raises ``NotImplementedError`` for ``quantize=True``.
``weights=`` takes the float model's weights enum (``ResNet18_Weights``...), as torchvision's
builders do with ``quantize=False``; the ``*_QuantizedWeights`` enums are there to be named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid.models._registry import model_info, register_model
from lucid.models.googlenet import googlenet as float_googlenet
from lucid.models.inception import inception_v3 as float_inception_v3
from lucid.models.mobilenet import mobilenet_v2 as float_mobilenet_v2
from lucid.models.mobilenetv3 import mobilenet_v3_large as float_mobilenet_v3_large
from lucid.models.resnet import resnet18 as float_resnet18
from lucid.models.resnet import resnet50 as float_resnet50
from lucid.models.resnet import resnext101_32x8d as float_resnext101_32x8d
from lucid.models.resnet import resnext101_64x4d as float_resnext101_64x4d
from lucid.models.shufflenet import shufflenet_v2_x0_5 as float_shufflenet_v2_x0_5
from lucid.models.shufflenet import shufflenet_v2_x1_0 as float_shufflenet_v2_x1_0
from lucid.models.shufflenet import shufflenet_v2_x1_5 as float_shufflenet_v2_x1_5
from lucid.models.shufflenet import shufflenet_v2_x2_0 as float_shufflenet_v2_x2_0

__all__ = [
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

TASK = "image-classification (quantizable)"


def quantize_error(name: str) -> NotImplementedError:
    """What ``quantize=True`` raises: lucid has no int8 kernels."""
    return NotImplementedError(
        f"torchvision.models.quantization.{name}(quantize=True) returns an int8 model; lucid has "
        f"no int8 kernels (see docs/differences.md). quantize=False builds the float model, "
        f"whose state dict is torchvision's quantizable model's before quantization"
    )


def _quantizable(name: str, float_builder: Callable[..., Any]) -> Callable[..., Any]:
    info = model_info(name)

    def builder(quantize: bool = False, **kwargs: Any) -> Any:
        if quantize:
            raise quantize_error(name)
        kwargs.pop("backend", None)  # the int8 backend: nothing to choose without quantizing
        return float_builder(**kwargs)

    builder.__name__ = builder.__qualname__ = name
    builder.__doc__ = (
        f"torchvision's quantizable ``{name}`` as a float model ({info.num_params:,} parameters); "
        f"``quantize=True`` raises ``NotImplementedError`` (lucid has no int8 kernels)."
    )
    builder.__module__ = __name__
    return register_model(builder, name=f"quantized_{name}", task=TASK, family="quantization",
                          paper=info.paper, num_params=info.num_params,
                          input_size=info.input_size, reference="torchvision")  # fmt: skip


googlenet = _quantizable("googlenet", float_googlenet)
inception_v3 = _quantizable("inception_v3", float_inception_v3)
mobilenet_v2 = _quantizable("mobilenet_v2", float_mobilenet_v2)
mobilenet_v3_large = _quantizable("mobilenet_v3_large", float_mobilenet_v3_large)
resnet18 = _quantizable("resnet18", float_resnet18)
resnet50 = _quantizable("resnet50", float_resnet50)
resnext101_32x8d = _quantizable("resnext101_32x8d", float_resnext101_32x8d)
resnext101_64x4d = _quantizable("resnext101_64x4d", float_resnext101_64x4d)
shufflenet_v2_x0_5 = _quantizable("shufflenet_v2_x0_5", float_shufflenet_v2_x0_5)
shufflenet_v2_x1_0 = _quantizable("shufflenet_v2_x1_0", float_shufflenet_v2_x1_0)
shufflenet_v2_x1_5 = _quantizable("shufflenet_v2_x1_5", float_shufflenet_v2_x1_5)
shufflenet_v2_x2_0 = _quantizable("shufflenet_v2_x2_0", float_shufflenet_v2_x2_0)
