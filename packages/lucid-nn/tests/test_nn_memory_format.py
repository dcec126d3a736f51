"""Channels-last through conv / batch-norm / relu and Module.to(memory_format=)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def _model() -> nn.Module:
    lucid.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 4, 3), nn.ReLU(),
    )  # fmt: skip


def _x() -> lucid.Tensor:
    rng = np.random.default_rng(0)
    return lucid.tensor(rng.standard_normal((2, 3, 10, 10)).astype(np.float32))


def test_module_to_channels_last_keeps_values_and_layout() -> None:
    ref_model, model = _model(), _model().to(memory_format=lucid.channels_last)
    w = model[0].weight
    assert isinstance(w, nn.Parameter) and w.is_contiguous(memory_format=lucid.channels_last)
    assert model[0].bias.is_contiguous() and model[1].weight.is_contiguous()  # 1-D: untouched
    x = _x()
    y = model(x.to(memory_format=lucid.channels_last))
    assert y.is_contiguous(memory_format=lucid.channels_last) and not y.is_contiguous()
    np.testing.assert_allclose(
        y.detach().numpy(), ref_model(x).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    assert ref_model(x).is_contiguous()  # NCHW in, NCHW out: NHWC-backed kernels stay hidden
    y.sum().backward()
    assert w.grad is not None and w.grad.shape == w.shape


def test_module_to_channels_last_on_conv3d_raises_as_torch() -> None:
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        nn.Conv3d(2, 2, 2).to(memory_format=lucid.channels_last)
    m = nn.Conv3d(2, 2, 2).to(memory_format=lucid.channels_last_3d)
    assert m.weight.is_contiguous(memory_format=lucid.channels_last_3d)


def test_convert_conv_weight_memory_format() -> None:
    m = nn.utils.convert_conv2d_weight_memory_format(_model(), lucid.channels_last)
    assert m[0].weight.is_contiguous(memory_format=lucid.channels_last)
    assert m[4].weight.is_contiguous(memory_format=lucid.channels_last)
    mt = nn.utils.convert_conv2d_weight_memory_format(
        nn.Sequential(nn.ConvTranspose2d(3, 2, 2), nn.Linear(2, 2)), lucid.channels_last
    )
    assert mt[0].weight.is_contiguous(memory_format=lucid.channels_last)
    assert mt[1].weight.is_contiguous()
    m3 = nn.utils.convert_conv3d_weight_memory_format(
        nn.Sequential(nn.Conv3d(2, 2, 2)), lucid.channels_last_3d
    )
    assert m3[0].weight.is_contiguous(memory_format=lucid.channels_last_3d)


@pytest.mark.parity
def test_channels_last_model_vs_torch() -> None:
    torch = pytest.importorskip("torch")
    model = _model()
    tmodel = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 4, 3), torch.nn.ReLU(),
    )  # fmt: skip
    tmodel.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in model.state_dict().items()})
    model.to(memory_format=lucid.channels_last)
    tmodel.to(memory_format=torch.channels_last)
    assert model[0].weight.stride() == tmodel[0].weight.stride()
    x = _x()
    xc, txc = (
        x.to(memory_format=lucid.channels_last),
        torch.from_numpy(x.numpy()).to(memory_format=torch.channels_last),
    )
    h, th = model[0](xc), tmodel[0](txc)
    assert h.stride() == th.stride()
    for name, a, b in (
        ("bn", model[1](h), tmodel[1](th)),
        ("relu", model[2](h), tmodel[2](th)),
        ("all", model(xc), tmodel(txc)),
    ):
        assert a.stride() == b.stride(), name
        assert a.is_contiguous() == b.is_contiguous(), name
        want = b.detach().numpy()
        np.testing.assert_allclose(a.detach().numpy(), want, rtol=1e-4, atol=1e-5, err_msg=name)
