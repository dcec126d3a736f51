"""Every family that torchvision 0.28 has, held to account against torchvision's own code.

- ``test_parameter_count_matches_torchvision``: each lucid builder whose registry entry says
  ``reference="torchvision"`` documents the parameter count of torchvision's builder of the same
  name (torchvision's built on the ``meta`` device: no memory, no time).
- ``test_state_dict_and_outputs_match_torchvision``: for the smallest variant of each family,
  torchvision's state dict (random init, seeded) loads into the lucid model with the same keys
  and shapes, and the outputs agree in eval mode (float32, ``rtol=1e-4``, ``atol`` 1e-4 of the
  largest output, at least 1e-4) and in train mode (``1e-3`` for both: batch statistics over
  the few values of a tiny input amplify float32 rounding); in eval mode so do the
  gradients of ``(out * out).sum()`` with respect to the input and the first parameter
  (``rtol=1e-3``, ``atol`` 1e-3 of the largest). Train-mode gradients are not compared: batch
  statistics over a few values make them too ill-conditioned to pin in float32. Dropout and
  stochastic depth are set to 0 in both: their random masks cannot agree.

torchvision's source comes from the ``tvm`` fixture (conftest.py): ``LUCID_TORCHVISION_SRC``,
or a one-time ``pip download torchvision==0.28.0 --no-deps`` into ``~/.cache``; without either
the tests skip, saying so. torchvision is imported from that folder, never installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

# torchvision's classifiers (its detection builders are checked in test_models_detection.py)
TORCHVISION_MODELS = [n for n in models.list_models()
                      if models.model_info(n).reference == "torchvision"
                      and models.model_info(n).task == "image-classification"]  # fmt: skip

# name -> (input shape, kwargs for both builders); tiny inputs, the smallest variant of a family
NO_DROP = {"dropout": 0.0}
FORWARD: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {
    "resnext50_32x4d": ((2, 3, 64, 64), {"num_classes": 10}),
    "squeezenet1_0": ((2, 3, 64, 64), {"num_classes": 10, **NO_DROP}),
    "squeezenet1_1": ((2, 3, 64, 64), {"num_classes": 10, **NO_DROP}),
    "shufflenet_v2_x0_5": ((2, 3, 64, 64), {"num_classes": 10}),
    "mnasnet0_5": ((2, 3, 64, 64), {"num_classes": 10, **NO_DROP}),
    "mobilenet_v3_small": ((2, 3, 64, 64), {"num_classes": 10, **NO_DROP}),
    "mobilenet_v3_large": ((2, 3, 64, 64), {"num_classes": 10, **NO_DROP}),
    "efficientnet_b0": (
        (2, 3, 64, 64),
        {"num_classes": 10, "stochastic_depth_prob": 0.0, **NO_DROP},
    ),
    "efficientnet_v2_s": (
        (2, 3, 64, 64),
        {"num_classes": 10, "stochastic_depth_prob": 0.0, **NO_DROP},
    ),
    "googlenet": ((2, 3, 64, 64), {"num_classes": 10, "dropout": 0.0, "dropout_aux": 0.0}),
    "inception_v3": ((2, 3, 107, 107), {"num_classes": 10, "aux_logits": False, **NO_DROP}),
    "regnet_x_400mf": ((2, 3, 64, 64), {"num_classes": 10}),
    "regnet_y_400mf": ((2, 3, 64, 64), {"num_classes": 10}),
    "convnext_tiny": (
        (2, 3, 64, 64),
        {"num_classes": 10, "layer_scale": 1.0, "stochastic_depth_prob": 0.0},
    ),
    # torchvision's Swin builders fix stochastic_depth_prob: set to 0 on the modules below
    "swin_t": ((2, 3, 64, 64), {"num_classes": 10}),
    "swin_v2_t": ((2, 3, 64, 64), {"num_classes": 10}),
    "vit_b_16": ((2, 3, 32, 32), {"num_classes": 10, "image_size": 32, **NO_DROP}),
}


def _build_torchvision(tvm: Any, name: str, meta: bool = True, **kwargs: Any) -> Any:
    """torchvision's ``name``; on the ``meta`` device (no memory, no init) unless ``meta=False``.

    RegNet computes its stage widths with torch tensors, which the meta device cannot read
    back: that one computation runs on the CPU.
    """
    if not meta:
        return tvm.get_model(name, **kwargs)
    import torchvision.models.regnet as regnet

    original = regnet.BlockParams.from_init_params

    def on_cpu(*args: Any, **kw: Any) -> Any:
        with torch.device("cpu"):
            return original(*args, **kw)

    regnet.BlockParams.from_init_params = on_cpu
    try:
        with torch.device("meta"):
            return tvm.get_model(name, **kwargs)
    finally:
        regnet.BlockParams.from_init_params = original


@pytest.mark.parametrize("name", TORCHVISION_MODELS)
def test_parameter_count_matches_torchvision(tvm: Any, name: str) -> None:
    assert name in tvm.list_models(module=tvm)
    tmodel = _build_torchvision(tvm, name)
    count = sum(p.numel() for p in tmodel.parameters())
    assert models.model_info(name).num_params == count


def _to_lucid(t: Any) -> Any:
    return lucid.tensor(t.detach().numpy().copy())


def _run(model: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xt = lucid.tensor(x, requires_grad=True)
    out = model(xt)
    out = out[0] if isinstance(out, tuple) else out
    (out * out).sum().backward()
    first = next(iter(model.parameters()))
    return out.detach().numpy(), xt.grad.numpy(), first.grad.numpy()


def _run_torch(model: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xt = torch.tensor(x, requires_grad=True)
    out = model(xt)
    out = out[0] if isinstance(out, tuple) else out
    (out * out).sum().backward()
    first = next(iter(model.parameters()))
    return out.detach().numpy(), xt.grad.numpy(), first.grad.numpy()


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_state_dict_and_outputs_match_torchvision(tvm: Any, name: str) -> None:
    shape, kwargs = FORWARD[name]
    torch.manual_seed(0)
    tmodel = _build_torchvision(tvm, name, meta=False, **kwargs)
    lucid.manual_seed(0)
    model = models.create_model(name, **kwargs)
    for m in [*tmodel.modules(), *model.modules()]:
        if type(m).__name__ == "StochasticDepth":
            m.p = 0.0
    tstate = tmodel.state_dict()
    lstate = model.state_dict()
    assert list(lstate) == list(tstate)
    assert [tuple(v.shape) for v in lstate.values()] == [tuple(v.shape) for v in tstate.values()]
    result = model.load_state_dict({k: _to_lucid(v) for k, v in tstate.items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for train in (False, True):
        model.train(train)
        tmodel.train(train)
        for p in model.parameters():
            p.grad = None
        tmodel.zero_grad(set_to_none=True)
        got, expected = _run(model, x), _run_torch(tmodel, x)
        scale = max(1.0, float(np.abs(expected[0]).max()))
        tol = 1e-3 if train else 1e-4
        np.testing.assert_allclose(got[0], expected[0], rtol=tol, atol=tol * scale)
        if train:  # batch statistics over few values: gradients are too ill-conditioned to pin
            continue
        for g, e in zip(got[1:], expected[1:]):
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-3 * float(np.abs(e).max()))
