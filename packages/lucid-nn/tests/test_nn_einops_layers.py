"""lucid.nn.einops: einops's Rearrange, Reduce and EinMix as lucid modules, trained by
backward like any layer; outputs equal the functional einops calls."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn

einops = pytest.importorskip("einops")
from lucid.nn.einops import EinMix, Rearrange, Reduce  # noqa: E402


def test_layers_equal_the_functions_and_train() -> None:
    lucid.manual_seed(0)
    x = lucid.randn(2, 3, 4, 4)
    r = Rearrange("b c (h h2) (w w2) -> b (c h2 w2) h w", h2=2, w2=2)
    np.testing.assert_array_equal(
        r(x).numpy(),
        einops.rearrange(x.numpy(), "b c (h h2) (w w2) -> b (c h2 w2) h w", h2=2, w2=2),
    )
    pool = Reduce("b c h w -> b c", "mean")
    np.testing.assert_allclose(pool(x).numpy(), x.numpy().mean(axis=(2, 3)), rtol=1e-6, atol=1e-6)
    mix = EinMix("b c h w -> b d h w", weight_shape="c d", bias_shape="d", c=3, d=5)
    model = nn.Sequential(mix, Reduce("b d h w -> b d", "max"), nn.Linear(5, 2))
    assert {n for n, _ in model.named_parameters()} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    expected = np.einsum("bchw,cd->bdhw", x.numpy(), mix.weight.detach().numpy())
    expected += mix.bias.detach().numpy()
    np.testing.assert_allclose(mix(x).detach().numpy(), expected, rtol=1e-5, atol=1e-5)
    loss = model(x).pow(2).mean()
    loss.backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
    assert repr(pool) == "Reduce('b c h w -> b c', 'mean')"
