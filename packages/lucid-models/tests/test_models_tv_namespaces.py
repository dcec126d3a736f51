"""torchvision's model sub-namespaces in lucid.models (segmentation, video, optical_flow,
quantization) and ``maxvit_t``, held to account against torchvision 0.28's own code.

- ``test_parameter_count_matches_torchvision``: every such builder's registry count is the
  count of torchvision's builder of the same name (built on the ``meta`` device), and lucid's
  builder reproduces it where it is small enough to build quickly (the big variants are counted
  from the registry only).
- ``test_state_dict_and_outputs_match_torchvision``: torchvision's state dict (random init,
  seeded) loads into the lucid model with the same keys and shapes, and the outputs agree in
  eval mode on a small input (float32: ``rtol=1e-4``, ``atol`` 1e-4 of the largest output, at
  least 1e-4; stochastic depth and dropout are 0).

torchvision's source comes from the ``tvm`` fixture (conftest.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

NAMESPACES = ["segmentation", "video", "optical_flow", "quantization"]
BUILDERS = sorted(
    n
    for ns in NAMESPACES
    if hasattr(models, ns)
    for n in models.list_models(module=getattr(models, ns))
) + [n for n in ("maxvit_t",) if n in models.list_models()]
BUILD_LIMIT = 60_000_000  # lucid builds and counts the builders below this many parameters


def _tv_builder(tvm: Any, name: str) -> Any:
    return tvm.get_model_builder(name)


def _tv_kwargs(name: str) -> dict[str, Any]:
    if name.startswith(("fcn_", "deeplabv3_", "lraspp_")):
        return {"weights_backbone": None}
    if name.startswith("quantized_"):
        return {"quantize": False}
    return {}


@pytest.mark.parametrize("name", BUILDERS)
def test_parameter_count_matches_torchvision(tvm: Any, name: str) -> None:
    with torch.device("meta"):
        tmodel = _tv_builder(tvm, name)(**_tv_kwargs(name))
    count = sum(p.numel() for p in tmodel.parameters())
    assert models.model_info(name).num_params == count
    if count < BUILD_LIMIT:
        model = models.get_model(name)
        assert sum(p.numel() for p in model.parameters()) == count


def _outputs(out: Any) -> list[np.ndarray]:
    if isinstance(out, dict):
        return [v for k in sorted(out) for v in _outputs(out[k])]
    if isinstance(out, list | tuple):
        return [v for o in out for v in _outputs(o)]
    return [out.detach().numpy()]


# name -> (input shapes, kwargs for both builders)
FORWARD: dict[str, tuple[list[tuple[int, ...]], dict[str, Any]]] = {
    "fcn_resnet50": ([(2, 3, 48, 48)], {"num_classes": 5, "aux_loss": True}),
    "deeplabv3_mobilenet_v3_large": ([(2, 3, 64, 64)], {"num_classes": 5, "aux_loss": True}),
    "lraspp_mobilenet_v3_large": ([(2, 3, 64, 64)], {"num_classes": 5}),
    # maxvit_t's layout with windows of 2 on a 64x64 input (maxvit_t's 7 needs 224x224)
    "MaxVit": (
        [(2, 3, 64, 64)],
        {
            "num_classes": 10,
            "input_size": (64, 64),
            "stem_channels": 16,
            "partition_size": 2,
            "block_channels": [16, 32, 32, 64],
            "block_layers": [1, 2, 1, 1],
            "head_dim": 8,
            "stochastic_depth_prob": 0.0,
        },
    ),
    "mc3_18": ([(1, 3, 4, 32, 32)], {"num_classes": 5}),
    "r2plus1d_18": ([(1, 3, 4, 32, 32)], {"num_classes": 5}),
    # S3D's head pools 2x7x7 (16x224x224 clips): its features are compared on a small clip
    "S3D.features": ([(1, 3, 8, 32, 32)], {"num_classes": 5}),
    # Swin3D-T's layout with 2x2x2 windows on a 4x32x32 clip: padding, shifts and masks
    "SwinTransformer3d": (
        [(1, 3, 4, 32, 32)],
        {
            "num_classes": 5,
            "patch_size": [2, 4, 4],
            "embed_dim": 16,
            "depths": [2, 2, 2, 1],
            "num_heads": [1, 2, 2, 4],
            "window_size": [2, 3, 3],
            "stochastic_depth_prob": 0.0,
        },
    ),
    # MViT v1 (absolute positions) and v2 (relative positions, residual pooling) layouts on a
    # 4x32x32 clip: pooled queries, keys and values, strided and projected blocks
    "MViT": ([(2, 3, 4, 32, 32)], {"v": 1}),
    "MViT.v2": ([(2, 3, 4, 32, 32)], {"v": 2}),
    # two 128x128 images (the smallest the correlation pyramid takes), two refinements
    "raft_small": ([(1, 3, 128, 128), (1, 3, 128, 128)], {}),
    "raft_large": ([(1, 3, 128, 128), (1, 3, 128, 128)], {}),
}
CALL = {"raft_small": {"num_flow_updates": 2}, "raft_large": {"num_flow_updates": 2}}
MVIT_BLOCKS = [  # heads, in, out, kernel_q, kernel_kv, stride_q, stride_kv
    (1, 8, 16, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 2, 2]),
    (2, 16, 16, [3, 3, 3], [3, 3, 3], [1, 2, 2], [1, 2, 2]),
    (2, 16, 32, [], [3, 3, 3], [], [1, 1, 1]),
]
CLASSES = {
    "MaxVit": ("maxvit", "maxvit_t"),
    "MViT": ("video", "video.mvit"),
    "MViT.v2": ("video", "video.mvit"),
    "S3D.features": ("video", "video.s3d"),
    "SwinTransformer3d": ("video", "video.swin_transformer"),
}  # name -> (torchvision module, lucid module)


def _mvit_kwargs(config: Any, version: int) -> dict[str, Any]:
    v2 = version == 2
    return {
        "spatial_size": (32, 32),
        "temporal_size": 4,
        "num_classes": 5,
        "dropout": 0.0,
        "block_setting": [config(*row) for row in MVIT_BLOCKS],
        "residual_pool": v2,
        "residual_with_cls_embed": False,
        "rel_pos_embed": v2,
        "proj_after_attn": v2,
    }


def _build(tvm: Any, name: str, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """torchvision's and lucid's model, each seeded."""
    torch.manual_seed(0)
    if name in CLASSES:
        tv_module, lucid_module = CLASSES[name]
        cls, _, part = name.partition(".")
        module = __import__(f"lucid.models.{lucid_module}", fromlist=[cls])
        tv_kwargs, lucid_kwargs = kwargs, kwargs
        if cls == "MViT":
            tv_kwargs = _mvit_kwargs(getattr(tvm, tv_module).mvit.MSBlockConfig, kwargs["v"])
            lucid_kwargs = _mvit_kwargs(module.MSBlockConfig, kwargs["v"])
            part = ""
        tmodel = getattr(getattr(tvm, tv_module), cls)(**tv_kwargs)
        lucid.manual_seed(0)
        model = getattr(module, cls)(**lucid_kwargs)
        return (getattr(tmodel, part), getattr(model, part)) if part else (tmodel, model)
    tmodel = _tv_builder(tvm, name)(**_tv_kwargs(name), **kwargs)
    lucid.manual_seed(0)
    return tmodel, models.get_model(name, **kwargs)


@pytest.mark.parametrize("name", sorted(n for n in FORWARD if n in BUILDERS or n in CLASSES))
def test_state_dict_and_outputs_match_torchvision(tvm: Any, name: str) -> None:
    shapes, kwargs = FORWARD[name]
    tmodel, model = _build(tvm, name, kwargs)
    for m in [*tmodel.modules(), *model.modules()]:
        if type(m).__name__ == "StochasticDepth":
            m.p = 0.0
    tstate = tmodel.state_dict()
    lstate = model.state_dict()
    assert list(lstate) == list(tstate)
    assert [tuple(v.shape) for v in lstate.values()] == [tuple(v.shape) for v in tstate.values()]
    # randomise the batch norms' statistics so eval mode uses them
    gen = np.random.default_rng(1)
    state = {}
    for k, v in tstate.items():
        if k.endswith("running_mean"):
            v = torch.tensor(gen.normal(0, 0.1, v.shape).astype(np.float32))
        elif k.endswith("running_var"):
            v = torch.tensor(gen.uniform(0.5, 1.5, v.shape).astype(np.float32))
        state[k] = v
    tmodel.load_state_dict(state)
    model.load_state_dict({k: lucid.tensor(v.detach().numpy().copy()) for k, v in state.items()})
    tmodel.eval()
    model.eval()
    xs = [
        np.random.default_rng(i).standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)
    ]
    with lucid.no_grad():
        got = _outputs(model(*[lucid.tensor(x) for x in xs], **CALL.get(name, {})))
    with torch.no_grad():
        expected = _outputs(tmodel(*[torch.tensor(x) for x in xs], **CALL.get(name, {})))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * scale)
