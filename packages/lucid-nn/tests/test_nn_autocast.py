"""nn.functional under lucid.autocast: layers compute in the autocast dtype, losses in float32,
parameters keep float32 gradients, and a disabled region changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def _inputs() -> dict[str, Any]:
    lucid.manual_seed(0)
    return {"x": lucid.randn(3, 4), "seq": lucid.randn(2, 3, 4), "img": lucid.randn(1, 2, 5, 5),
            "w": lucid.randn(3, 2, 3, 3), "wt": lucid.randn(2, 3, 3, 3), "lin": lucid.randn(5, 4),
            "b": lucid.randn(5), "mha": nn.MultiheadAttention(4, 2)}  # fmt: skip


LAYERS: dict[str, Callable[[dict[str, Any]], lucid.Tensor]] = {
    "linear": lambda t: F.linear(t["x"], t["lin"], t["b"]),
    "Linear": lambda t: t["mha"].out_proj(t["x"]),
    "conv1d": lambda t: F.conv1d(t["img"][:, :, 0], t["w"][:, :, 0]),
    "conv2d": lambda t: F.conv2d(t["img"], t["w"]),
    "conv3d": lambda t: F.conv3d(t["img"].unsqueeze(2), t["w"].unsqueeze(2)),
    "conv_transpose2d": lambda t: F.conv_transpose2d(t["img"], t["wt"]),
    "prelu": lambda t: F.prelu(t["x"], lucid.tensor([0.25])),
    "sdpa": lambda t: F.scaled_dot_product_attention(t["seq"], t["seq"], t["seq"]),
    "mha": lambda t: t["mha"](t["seq"], t["seq"], t["seq"])[0],
}
KEPT: dict[str, Callable[[dict[str, Any]], lucid.Tensor]] = {
    "softmax": lambda t: F.softmax(t["x"], -1),
    "layer_norm": lambda t: F.layer_norm(t["x"], (4,)),
    "relu": lambda t: F.relu(t["x"]),
}
LOSSES: dict[str, Callable[[lucid.Tensor], lucid.Tensor]] = {
    "cross_entropy": lambda y: F.cross_entropy(y, lucid.tensor([0, 1, 2])),
    "nll_loss": lambda y: F.nll_loss(y, lucid.tensor([0, 1, 2])),
    "mse_loss": lambda y: F.mse_loss(y, y.detach() * 0),
    "l1_loss": lambda y: F.l1_loss(y, target=y.detach() * 0),
    "smooth_l1_loss": lambda y: F.smooth_l1_loss(y, y.detach() * 0),
    "bce_with_logits": lambda y: F.binary_cross_entropy_with_logits(y, y.detach().sigmoid()),
    "kl_div": lambda y: F.kl_div(y, y.detach().softmax(-1), reduction="batchmean"),
}


@pytest.mark.parametrize("low", [lucid.bfloat16, lucid.float16])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_compute_in_the_autocast_dtype(name: str, low: Any) -> None:
    t = _inputs()
    with lucid.autocast("cpu", dtype=low):
        out = LAYERS[name](t)
    assert out.dtype is low
    np.testing.assert_allclose(out.float().detach().numpy(), LAYERS[name](t).detach().numpy(),
                               rtol=5e-2, atol=5e-2)  # fmt: skip


# NumPy < 2 widens bfloat16 where it meets a Python scalar (no NEP 50).
NEP50 = int(np.__version__.split(".")[0]) >= 2


@pytest.mark.parametrize("name", sorted(KEPT))
def test_other_ops_keep_their_inputs_dtype(name: str) -> None:
    t = _inputs()
    with lucid.autocast("cpu"):
        assert KEPT[name](t).dtype is lucid.float32
        low = {k: v.bfloat16() if isinstance(v, lucid.Tensor) else v for k, v in t.items()}
        assert KEPT[name](low).dtype is lucid.bfloat16 or not NEP50


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_run_in_float32(name: str) -> None:
    y = lucid.randn(3, 4).bfloat16()
    with lucid.autocast("cpu"):
        assert LOSSES[name](y).dtype is lucid.float32
    assert LOSSES[name](y).dtype is lucid.bfloat16 or not NEP50  # outside: the input's dtype


def test_a_model_step_under_autocast_gives_float32_gradients() -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(36, 3))
    x, target = lucid.randn(2, 2, 5, 5), lucid.tensor([0, 2])
    with lucid.autocast("cpu"):
        logits = model(x)
        loss = F.cross_entropy(logits, target)
    assert logits.dtype is lucid.bfloat16 and loss.dtype is lucid.float32
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    assert all(g is not None and g.dtype is lucid.float32 for g in grads.values())
    model.zero_grad()
    F.cross_entropy(model(x), target).backward()
    for n, p in model.named_parameters():
        np.testing.assert_allclose(grads[n].numpy(), p.grad.numpy(), rtol=5e-2, atol=5e-2)


def test_disabled_region_is_bit_identical_for_a_model() -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    x = lucid.randn(5, 4)
    ref = model(x).detach().numpy()
    with lucid.autocast("cpu", enabled=False):
        out = model(x).detach().numpy()
    assert np.array_equal(out, ref)
