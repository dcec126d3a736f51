"""The smallest variant of each family of lucid.models exports to ONNX (lucid-onnx): onnxruntime
and lucid.onnx.load match lucid within 1e-4 at the export's batch size and at another one.

(tests-integration/test_integration_onnx_zoo.py covers the LeNets, ResNet, MobileNetV2,
DenseNet, ViT, AlexNet and VGG.)"""

from __future__ import annotations

import pytest

import lucid
import lucid.models as models

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
verify = pytest.importorskip("lucid.onnx.verification").verify

# name -> input size (3 channels, 10 classes): tiny inputs keep the export and runs cheap
CASES = {
    "resnext50_32x4d": 32,
    "seresnet18": 32,
    "squeezenet1_1": 48,
    "shufflenet_v2_x0_5": 32,
    "mnasnet0_5": 32,
    "mobilenet_v1_025": 32,
    "mobilenet_v3_small": 32,
    "efficientnet_b0": 32,
    "efficientnet_v2_s": 32,
    "googlenet": 64,
    "regnet_y_400mf": 32,
    "convnext_tiny": 32,
    "swin_t": 32,
    "swin_v2_t": 32,
    "xception": 71,
    "pvt_v2_b0": 32,
    "cvt_13": 32,
    "resnest14d": 32,
    "skresnet18": 32,
    "cspresnet50": 32,
    "convnextv2_atto": 32,
    "inception_next_tiny": 32,
    "mobilenetv4_conv_small": 32,
    "mobilenetv4_hybrid_medium": 64,  # multi-query attention
    "inception_resnet_v1": 75,
}
# name -> (input size, builder kwargs) for the families whose input size is fixed at build time
CASES_SIZED = {
    "crossvit_tiny_240": (48, {"img_size": 48}),
    "efficientformer_l1": (64, {"img_size": 64}),
    "maxvit_tiny_tf_224": (64, {"img_size": 64}),
    "coatnet_0_224": (64, {"img_size": 64}),
    "pvt_tiny": (64, {"image_size": 64}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_onnx_export_matches(name: str) -> None:
    size = CASES[name]
    lucid.manual_seed(0)
    model = models.create_model(name, num_classes=10).eval()
    x, x_other = lucid.randn(2, 3, size, size), lucid.randn(3, 3, size, size)
    verify(model, x, others=[x_other], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES_SIZED))
def test_onnx_export_matches_sized(name: str) -> None:
    size, kwargs = CASES_SIZED[name]
    lucid.manual_seed(0)
    model = models.create_model(name, num_classes=10, **kwargs).eval()
    x, x_other = lucid.randn(2, 3, size, size), lucid.randn(3, 3, size, size)
    verify(model, x, others=[x_other], rtol=1e-4, atol=1e-4)
