"""Every architecture of lucid.models exports to ONNX (lucid-onnx): onnxruntime and
lucid.onnx.load match lucid within 1e-4 at the export's batch size and at another one."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import lucid

models = pytest.importorskip("lucid.models")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
lucid_onnx = pytest.importorskip("lucid.onnx")
verify = pytest.importorskip("lucid.onnx.verification").verify

TOL = {"rtol": 1e-4, "atol": 1e-4}


def _images(channels: int, size: int) -> tuple[lucid.Tensor, lucid.Tensor]:
    return lucid.randn(2, channels, size, size), lucid.randn(3, channels, size, size)


def test_onnx_lenet5_initializers_are_its_state_dict() -> None:
    lucid.manual_seed(0)
    model = models.lenet5().eval()
    data = verify(model, *_images(1, 28)[:1], others=_images(1, 28)[1:], **TOL)
    proto = onnx.load_from_string(data)
    assert set(model.state_dict()) <= {t.name for t in proto.graph.initializer}
    assert {n.op_type for n in proto.graph.node} >= {"Conv", "MaxPool", "Gemm", "Relu"}


@pytest.mark.parametrize(
    ("name", "channels", "size", "kwargs"),
    [
        ("lenet1", 1, 28, {}),
        ("lenet4", 1, 28, {}),
        ("lenet5_classic", 1, 28, {}),
        ("resnet18_cifar", 3, 16, {}),
        ("resnet50", 3, 32, {"num_classes": 10}),
        ("mobilenet_v2", 3, 32, {"num_classes": 10}),
        ("densenet121", 3, 32, {"num_classes": 10}),
        ("vit_tiny_patch4_32", 3, 32, {}),
    ],
)
def test_onnx_zoo_model_exports(name: str, channels: int, size: int, kwargs: Any) -> None:
    lucid.manual_seed(0)
    model = models.create_model(name, **kwargs).eval()
    x, x_other = _images(channels, size)
    verify(model, x, others=[x_other], **TOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alexnet", "vgg11_bn"])
def test_onnx_large_zoo_models_export_without_parameters(name: str) -> None:
    """AlexNet and the 130M-parameter VGGs (the others differ only in depth): parameters as
    graph inputs, fed to onnxruntime directly (writing them into the file costs the time)."""
    lucid.manual_seed(0)
    model = models.create_model(name, num_classes=10).eval()
    size = 64 if name == "alexnet" else 32
    x = lucid.randn(1, 3, size, size)
    buf = io.BytesIO()
    lucid_onnx.export(model, x, buf, input_names=["x"], export_params=False)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    state = {k: np.asarray(v.detach().numpy()) for k, v in model.state_dict().items()}
    feeds = {i.name: state[i.name] for i in session.get_inputs() if i.name != "x"}
    feeds["x"] = np.asarray(x.numpy())
    with lucid.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(session.run(None, feeds)[0], expected, rtol=1e-4, atol=1e-4)
