"""Forward and backward of torchvision's sub-namespace models in lucid alone (the default env;
``test_models_tv_namespaces.py`` compares them with torchvision in the parity env): small
inputs and small configurations of each family; every parameter and the input get a finite
gradient of ``sum(out**2)`` in training mode, and eval mode gives finite outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import lucid
import lucid.models as models
from lucid.models.maxvit_t import MaxVit
from lucid.models.video.mvit import MSBlockConfig, MViT
from lucid.models.video.swin_transformer import SwinTransformer3d


def _mvit() -> Any:
    blocks = [MSBlockConfig(1, 8, 16, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 2, 2]),
              MSBlockConfig(2, 16, 16, [3, 3, 3], [3, 3, 3], [1, 2, 2], [1, 2, 2])]  # fmt: skip
    return MViT((32, 32), 4, blocks, residual_pool=True, residual_with_cls_embed=False,
                rel_pos_embed=True, proj_after_attn=True, num_classes=5)  # fmt: skip


CASES: dict[str, tuple[Callable[[], Any], list[tuple[int, ...]], dict[str, Any]]] = {
    "lraspp_mobilenet_v3_large": (
        lambda: models.segmentation.lraspp_mobilenet_v3_large(num_classes=3),
        [(2, 3, 64, 64)], {}),
    "fcn_resnet50": (lambda: models.segmentation.fcn_resnet50(num_classes=3, aux_loss=True),
                     [(1, 3, 32, 32)], {}),
    "mc3_18": (lambda: models.video.mc3_18(num_classes=3), [(1, 3, 4, 32, 32)], {}),
    "mvit": (_mvit, [(2, 3, 4, 32, 32)], {}),
    "swin3d": (lambda: SwinTransformer3d([2, 4, 4], 8, [1, 1], [1, 2], [2, 3, 3],
                                         num_classes=3), [(1, 3, 4, 24, 24)], {}),
    "maxvit": (lambda: MaxVit((64, 64), 8, 2, [8, 16, 16, 16], [1, 1, 1, 1], 8, 0.1,
                              num_classes=3), [(2, 3, 64, 64)], {}),
    "raft_small": (models.optical_flow.raft_small, [(1, 3, 128, 128)] * 2,
                   {"num_flow_updates": 1}),
}  # fmt: skip


def _tensors(out: Any) -> list[Any]:
    if isinstance(out, dict):
        return [t for k in sorted(out) for t in _tensors(out[k])]
    if isinstance(out, list | tuple):
        return [t for o in out for t in _tensors(o)]
    return [out]


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_backward(name: str) -> None:
    build, shapes, call = CASES[name]
    lucid.manual_seed(0)
    model = build()
    xs = [lucid.randn(*s, requires_grad=True) for s in shapes]
    model.train()
    outs = _tensors(model(*xs, **call))
    sum((o * o).mean() for o in outs).backward()
    for x in xs:
        assert x.grad is not None and bool(lucid.isfinite(x.grad).all())
    for pname, p in model.named_parameters():
        assert p.grad is not None and bool(lucid.isfinite(p.grad).all()), pname
    model.eval()
    with lucid.no_grad():
        outs = _tensors(model(*[x.detach() for x in xs], **call))
    assert all(bool(lucid.isfinite(o).all()) for o in outs)
