"""The vision-transformer families whose reference is timm 1.0.31 (PVT v2, CrossViT, MaxViT,
CoAtNet, EfficientFormer), held to account against timm's own code.

- ``test_parameter_count_matches_timm``: each lucid builder whose registry entry says
  ``reference="timm"`` documents the parameter count of ``timm.create_model`` of the same name
  (built on the ``meta`` device: no memory, no time).
- ``test_state_dict_and_outputs_match_timm``: for the smallest variant of each family, timm's
  state dict (random init, seeded) loads into the lucid model with the same keys and shapes,
  and the outputs agree in eval mode (float32, ``rtol=1e-4``, ``atol`` 1e-4 of the largest
  output, at least 1e-4) and in train mode (``1e-3``: batch statistics over a tiny input
  amplify float32 rounding); in eval mode so do the gradients of ``(out * out).sum()`` with
  respect to the input and the first parameter (``rtol=1e-3``, ``atol`` 1e-3 of the largest).
  Dropout and drop path are 0 in both: their random masks cannot agree. The parameters timm
  initialises to one value (layer scales, zero bias tables, norms) get noise first, so that
  every branch shows in the outputs.

timm's source comes from the ``timm`` fixture (conftest.py): imported from its wheel, never
installed; the tests skip, saying so, without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

TIMM_MODELS = [n for n in models.list_models() if models.model_info(n).reference == "timm"]

# name -> (input shape, kwargs for both builders): the smallest variant of a family, tiny input
FORWARD: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {
    "pvt_v2_b0": ((2, 3, 64, 64), {"num_classes": 10}),
    "pvt_v2_b2_li": ((2, 3, 32, 32), {"num_classes": 10}),
    "crossvit_tiny_240": ((2, 3, 120, 120), {"num_classes": 10, "img_size": 120}),
    "crossvit_9_dagger_240": ((2, 3, 120, 120), {"num_classes": 10, "img_size": 120}),
    # timm's attention biases are for a 7x7 grid: 224x224 inputs
    "efficientformer_l1": ((2, 3, 224, 224), {"num_classes": 10}),
    # windows (MaxViT) and position-bias tables (CoAtNet) sized for img_size
    "maxvit_tiny_tf_224": ((2, 3, 64, 64), {"num_classes": 10, "img_size": 64}),
    "coatnet_0_224": ((2, 3, 64, 64), {"num_classes": 10, "img_size": 64}),
}


@pytest.mark.parametrize("name", TIMM_MODELS)
def test_parameter_count_matches_timm(timm: Any, name: str) -> None:
    with torch.device("meta"):
        tmodel = timm.create_model(name, pretrained=False)
    count = sum(p.numel() for p in tmodel.parameters())
    assert models.model_info(name).num_params == count


def _perturb_constants(tmodel: Any) -> None:
    """Noise on the parameters initialised to one value (layer scales of 1e-5, zero attention
    biases and position tables, norms' ones and zeros): the comparison then sees each branch."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in tmodel.parameters():
            if p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                p.add_(0.1 * torch.randn(p.shape, generator=gen))


def _to_lucid(t: Any) -> Any:
    return lucid.tensor(t.detach().numpy().copy())


def _run(model: Any, x: np.ndarray, lib: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xt = lib.tensor(x, requires_grad=True)
    out = model(xt)
    (out * out).sum().backward()
    first = next(iter(model.parameters()))
    return out.detach().numpy(), xt.grad.numpy(), first.grad.numpy()


def compare_outputs(model: Any, tmodel: Any, shape: tuple[int, ...]) -> None:
    """Outputs in eval and train mode, input and first-parameter gradients in eval mode."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for train in (False, True):
        model.train(train)
        tmodel.train(train)
        for p in model.parameters():
            p.grad = None
        tmodel.zero_grad(set_to_none=True)
        got, expected = _run(model, x, lucid), _run(tmodel, x, torch)
        scale = max(1.0, float(np.abs(expected[0]).max()))
        tol = 1e-3 if train else 1e-4
        np.testing.assert_allclose(got[0], expected[0], rtol=tol, atol=tol * scale)
        if train:  # batch statistics over few values: gradients are too ill-conditioned to pin
            continue
        for g, e in zip(got[1:], expected[1:]):
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-3 * float(np.abs(e).max()))


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_state_dict_and_outputs_match_timm(timm: Any, name: str) -> None:
    shape, kwargs = FORWARD[name]
    torch.manual_seed(0)
    tmodel = timm.create_model(name, pretrained=False, **kwargs)
    lucid.manual_seed(0)
    model = models.create_model(name, **kwargs)
    tstate = tmodel.state_dict()
    lstate = model.state_dict()
    assert list(lstate) == list(tstate)
    assert [tuple(v.shape) for v in lstate.values()] == [tuple(v.shape) for v in tstate.values()]
    _perturb_constants(tmodel)
    result = model.load_state_dict({k: _to_lucid(v) for k, v in tstate.items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    compare_outputs(model, tmodel, shape)


# The families whose reference is Hugging Face transformers (timm lacks them): builder name ->
# (transformers config class, its kwargs for the builder's configuration)
HF_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "cvt_13": ("CvtConfig", {}),
    "cvt_21": ("CvtConfig", {"depth": [1, 4, 16]}),
    "cvt_w24": (
        "CvtConfig",
        {"embed_dim": [192, 768, 1024], "num_heads": [3, 12, 16], "depth": [2, 2, 20]},
    ),
    "pvt_tiny": ("PvtConfig", {}),
    "pvt_small": ("PvtConfig", {"depths": [3, 4, 6, 3]}),
    "pvt_medium": ("PvtConfig", {"depths": [3, 4, 18, 3]}),
    "pvt_large": ("PvtConfig", {"depths": [3, 8, 27, 3]}),
}
HF_CLASSES = {"CvtConfig": "CvtForImageClassification", "PvtConfig": "PvtForImageClassification"}


def _hf_model(name: str, **overrides: Any) -> Any:
    transformers = pytest.importorskip("transformers")
    config_cls, kwargs = HF_CONFIGS[name]
    config = getattr(transformers, config_cls)(**{"num_labels": 1000, **kwargs, **overrides})
    return getattr(transformers, HF_CLASSES[config_cls])(config)


def test_hf_configs_cover_the_registry() -> None:
    vision = [n for n in models.list_models(task="image-classification")
              if models.model_info(n).reference == "transformers"]  # fmt: skip
    assert sorted(vision) == sorted(HF_CONFIGS)


@pytest.mark.parametrize("name", sorted(HF_CONFIGS))
def test_parameter_count_matches_transformers(name: str) -> None:
    with torch.device("meta"):
        tmodel = _hf_model(name)
    assert models.model_info(name).num_params == sum(p.numel() for p in tmodel.parameters())


class _Logits(torch.nn.Module):
    """An HF classifier returning its logits."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: Any) -> Any:
        return self.model(pixel_values=x).logits


# name -> (input shape, overrides of the HF config, kwargs of the lucid builder)
HF_FORWARD: dict[str, tuple[tuple[int, ...], dict[str, Any], dict[str, Any]]] = {
    "cvt_13": (
        (2, 3, 64, 64),
        {"num_labels": 10, "drop_path_rate": [0.0, 0.0, 0.0]},
        {"num_classes": 10, "drop_path_rate": (0.0, 0.0, 0.0)},
    ),
    # position embeddings for the configured image size
    "pvt_tiny": (
        (2, 3, 64, 64),
        {"num_labels": 10, "image_size": 64},
        {"num_classes": 10, "image_size": 64},
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(HF_FORWARD))
def test_state_dict_and_outputs_match_transformers(name: str) -> None:
    shape, overrides, kwargs = HF_FORWARD[name]
    torch.manual_seed(0)
    tmodel = _Logits(_hf_model(name, **overrides))
    model = models.create_model(name, **kwargs)
    tstate = tmodel.model.state_dict()
    assert list(model.state_dict()) == list(tstate)
    _perturb_constants(tmodel)
    result = model.load_state_dict({k: _to_lucid(v) for k, v in tstate.items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    compare_outputs(model, tmodel, shape)
