"""Inception-ResNet v1 against facenet-pytorch 2.6.0's ``InceptionResnetV1`` (the reference the
registry cites; timm has no v1): parameter count, state-dict keys and outputs in eval and train
mode, with and without the classification layer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid.models.inception_resnet import InceptionResnetV1

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("classify", [True, False])
def test_parameter_count_matches_facenet(facenet_irv1: Any, classify: bool) -> None:
    with torch.device("meta"):
        ref = facenet_irv1.InceptionResnetV1(classify=classify, num_classes=1000)
    expected = sum(p.numel() for p in ref.parameters())
    model = InceptionResnetV1(classify=classify)
    assert sum(p.numel() for p in model.parameters()) == expected
    if classify:
        assert models.model_info("inception_resnet_v1").num_params == expected


def _run(model: Any, x: np.ndarray, lib: Any) -> tuple[np.ndarray, np.ndarray]:
    xt = lib.tensor(x, requires_grad=True)
    out = model(xt)
    # a fixed random projection (the unit-norm embedding's squared sum is constant)
    w = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
    (out * lib.tensor(w)).sum().backward()
    return out.detach().numpy(), xt.grad.numpy()


@pytest.mark.parametrize("classify", [True, False])
def test_state_dict_and_outputs_match_facenet(facenet_irv1: Any, classify: bool) -> None:
    """Float32: eval outputs and input gradients to 1e-4 / 1e-3 of their scale, train outputs
    (BatchNorm over 2x2 maps at 75 px) to 1e-3; He-normal conv weights and random BatchNorm
    statistics so that the signal survives the ~130 conv layers."""
    torch.manual_seed(0)
    ref = facenet_irv1.InceptionResnetV1(classify=classify, num_classes=10, dropout_prob=0.0)
    with torch.no_grad():
        for m in ref.modules():
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    model = models.create_model(
        "inception_resnet_v1", num_classes=10, classify=classify, dropout_prob=0.0
    )
    tstate = ref.state_dict()
    assert list(model.state_dict()) == list(tstate)
    result = model.load_state_dict({k: lucid.tensor(v.numpy().copy()) for k, v in tstate.items()})
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.default_rng(0).standard_normal((4, 3, 75, 75)).astype(np.float32)
    for train in (False, True):
        model.train(train)
        ref.train(train)
        got, expected = _run(model, x, lucid), _run(ref, x, torch)
        scale = max(1.0, float(np.abs(expected[0]).max()))
        tol = 1e-3 if train else 1e-4
        np.testing.assert_allclose(got[0], expected[0], rtol=tol, atol=tol * scale)
        if not train:
            gscale = float(np.abs(expected[1]).max())
            np.testing.assert_allclose(got[1], expected[1], rtol=1e-3, atol=1e-3 * gscale)
