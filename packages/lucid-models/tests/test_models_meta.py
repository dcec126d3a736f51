"""Zoo models built under ``with lucid.device('meta')``: no storage, no random draws, and a
forward on meta inputs gives the real model's output shape (torch's shape-inference idiom)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.models as M

_CLASSIFIERS = ["resnet18", "mobilenet_v3_small", "vit_b_16", "convnext_tiny", "coatnet_0_224",
                "efficientnet_b0", "maxvit_tiny_tf_224", "densenet121", "swin_t"]  # fmt: skip


@pytest.mark.parametrize("name", _CLASSIFIERS)
def test_classifier_builds_and_runs_on_meta(name: str) -> None:
    state = lucid.get_rng_state()
    with lucid.device("meta"):
        model = M.get_model(name).eval()
        out = model(lucid.empty(2, 3, 224, 224))
    assert all(p.is_meta for p in model.parameters())
    assert out.is_meta and tuple(out.shape) == (2, 1000)
    # building on meta draws nothing: the generator is where it was
    np.testing.assert_array_equal(lucid.get_rng_state().numpy(), state.numpy())


def test_language_model_on_meta_matches_the_real_shapes() -> None:
    with lucid.device("meta"):
        gpt = M.get_model("gpt2_xl")  # 1.56 billion parameters, none allocated
        ids = lucid.zeros(2, 16, dtype=lucid.int64)
        out = gpt(ids)
    hidden = out[0] if isinstance(out, tuple) else getattr(out, "last_hidden_state", out)
    assert sum(p.numel() for p in gpt.parameters()) == 1_557_611_200
    assert hidden.is_meta and tuple(hidden.shape)[:2] == (2, 16)


def test_meta_forward_shape_equals_the_real_forward_shape() -> None:
    lucid.manual_seed(0)
    real = M.get_model("resnet18").eval()
    with lucid.no_grad():
        want = real(lucid.randn(1, 3, 64, 64))
    with lucid.device("meta"):
        got = M.get_model("resnet18").eval()(lucid.empty(1, 3, 64, 64))
    assert got.shape == want.shape and got.dtype == want.dtype
