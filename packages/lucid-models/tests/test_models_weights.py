"""torchvision's weights API in lucid.models: the ``*_Weights`` enums (generated from
torchvision's source by tools/gen_tv_weights.py), ``get_model``/``get_model_builder``/
``get_model_weights``/``get_weight``/``list_models(module=...)``, builders taking ``weights=``
(a member, its name, ``"DEFAULT"``, legacy ``pretrained=True``) and checkpoints read from torch
hub's cache (``$TORCH_HOME/hub/checkpoints``), never downloaded.

The parity tests save a torch-made state dict where torch hub keeps it (in ``tmp_path``), build
the lucid model with ``weights=`` and compare its outputs with torchvision's (float32, eval
mode, ``rtol=1e-4``, ``atol`` 1e-4 of the largest output); the presets are compared with
torchvision's on a downscaled uint8 image (antialiased, bilinear and bicubic), to one uint8
step after normalization (torch resamples uint8 in fixed point).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid.models._api import _BUILDER_WEIGHTS, checkpoint_dirs
from lucid.models.segmentation.fcn import FCNHead

ENUMS = sorted(_BUILDER_WEIGHTS.items())


def _expected_count(builder: str, weights: Any) -> int:
    """The parameters of ``builder`` configured as ``weights`` fixes it: the registry's count
    of the default configuration, adjusted where the weights change it."""
    n = models.model_info(builder).num_params
    assert n is not None
    builder = builder.removeprefix("quantized_")  # the float model: the same parameters
    if builder.startswith(("fcn_", "deeplabv3_")):  # the weights come with the auxiliary head
        aux_in = 40 if builder.endswith("mobilenet_v3_large") else 1024
        head = FCNHead(aux_in, len(weights.meta["categories"]))
        return n + sum(p.numel() for p in head.parameters())
    if builder == "googlenet":  # the auxiliary heads are dropped after loading
        aux = models.googlenet(aux_logits=True)
        return n - sum(p.numel() for m in (aux.aux1, aux.aux2) for p in m.parameters())
    if builder.startswith("vit_"):  # a larger image: a longer position embedding
        patch = int(builder.split("_")[-1])
        hidden = {"b": 768, "l": 1024, "h": 1280}[builder.split("_")[1]]
        grow = (weights.meta["min_size"][0] // patch) ** 2 - (224 // patch) ** 2
        return n + grow * hidden
    return n


@pytest.mark.parametrize(("builder", "enum"), ENUMS, ids=[b for b, _ in ENUMS])
def test_weights_num_params_match_the_builder(builder: str, enum: Any) -> None:
    assert models.get_model_weights(builder) is enum
    assert enum.DEFAULT in list(enum)
    for member in enum:
        meta = member.meta
        assert member.url.startswith("https://download.pytorch.org/models/")
        if builder.endswith("_fpn"):  # checkpoints with frozen batch norms: no BN parameters
            model = models.get_model(builder, frozen_batch_norm=True)
            assert meta["num_params"] == sum(p.numel() for p in model.parameters())
            continue
        assert meta["num_params"] == _expected_count(builder, member), member


def test_weights_api() -> None:
    w = models.get_weight("ResNet50_Weights.IMAGENET1K_V2")
    assert w is models.ResNet50_Weights.DEFAULT
    assert repr(w) == "ResNet50_Weights.IMAGENET1K_V2"
    assert len(w.meta["categories"]) == 1000 and w.meta["categories"][0] == "tench"
    assert w.meta["_metrics"]["ImageNet-1K"]["acc@1"] == 80.858
    assert models.ResNet18_Weights.verify("IMAGENET1K_V1") is models.ResNet18_Weights.IMAGENET1K_V1
    assert models.ResNet18_Weights.verify("ResNet18_Weights.DEFAULT").name == "IMAGENET1K_V1"
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received ResNet50"):
        models.resnet18(weights=models.ResNet50_Weights.DEFAULT)
    with pytest.raises(KeyError, match="no member 'NOPE'"):
        models.resnet18(weights="NOPE")
    with pytest.raises(ValueError, match="Invalid weight name"):
        models.get_weight("ResNet50_Weights")
    with pytest.raises(ValueError, match="lenet5: torchvision has no pretrained weights"):
        models.lenet5(pretrained=True)
    with pytest.raises(ValueError, match="Unknown model nope"):
        models.get_model_builder("nope")
    assert models.get_model_builder("ResNet18") is models.resnet18
    assert models.get_model_weights(models.resnet18) is models.ResNet18_Weights
    with pytest.raises(ValueError, match="couldn't be retrieved"):
        models.get_model_weights("lenet5")
    with pytest.raises(ValueError, match="expected value 1000 but got 10"):
        models.resnet18(weights="DEFAULT", num_classes=10)


def test_list_models_module_include_exclude() -> None:
    top = models.list_models(module=models)
    assert "resnet18" in top and "fasterrcnn_resnet50_fpn" not in top
    detection = models.list_models(module=models.detection)  # torchvision's and lucid's own
    assert {"fasterrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn", "retinanet_resnet50_fpn",
            "yolo_v3", "detr_resnet50", "efficientdet_d0"} <= set(detection)  # fmt: skip
    assert "resnet18" not in detection and detection == sorted(detection)
    assert models.list_models(include="resnet*", exclude=["resnet1*", "*cifar"]) == [
        "resnet34", "resnet50"]  # fmt: skip
    assert models.list_models("resnet3*") == ["resnet34"]  # lucid's pattern form


def test_missing_checkpoint_names_the_file_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("LUCID_HOME", str(tmp_path / "lucid"))
    assert checkpoint_dirs()[0] == tmp_path / "torch" / "hub" / "checkpoints"
    where = str(tmp_path / "torch" / "hub" / "checkpoints")
    with pytest.raises(FileNotFoundError, match="squeezenet1_1-b8a52dc0.pth") as err:
        models.squeezenet1_1(weights="DEFAULT")
    assert where in str(err.value) and "downloads nothing unasked" in str(err.value)
    assert "lucid.hub.download_url_to_file(url, " in str(err.value)


def _checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> Path:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    folder = tmp_path / "hub" / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / os.path.basename(url)


# name -> (torchvision's builder arguments, input shapes, call arguments)
IMAGE = [(1, 3, 64, 64)]
CHECKPOINTS: dict[str, tuple[dict[str, Any], list[tuple[int, ...]], dict[str, Any]]] = {
    "squeezenet1_1": ({"num_classes": 1000}, IMAGE, {}),
    "googlenet": ({"num_classes": 1000, "aux_logits": False, "init_weights": False}, IMAGE, {}),
    "densenet121": ({"num_classes": 1000}, IMAGE, {}),
    "quantized_mobilenet_v2": ({"num_classes": 1000}, IMAGE, {}),
    "deeplabv3_mobilenet_v3_large": (
        {"num_classes": 21, "aux_loss": True, "weights_backbone": None}, IMAGE, {}),
    "raft_small": ({}, [(1, 3, 128, 128)] * 2, {"num_flow_updates": 2}),
}  # fmt: skip


def _flat(out: Any) -> list[np.ndarray]:
    if isinstance(out, dict):
        return [v for k in sorted(out) for v in _flat(out[k])]
    if isinstance(out, list | tuple):
        return [v for o in out for v in _flat(o)]
    return [out.detach().numpy()]


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_weights_load_a_torch_checkpoint(
    tvm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    torch = pytest.importorskip("torch")
    tv_kwargs, shapes, call = CHECKPOINTS[name]
    torch.manual_seed(0)
    float_name = name.removeprefix("quantized_")  # quantize=False: the float model's weights
    enum = models.get_model_weights(float_name)
    tmodel = tvm.get_model(float_name, **tv_kwargs)
    state = tmodel.state_dict()
    if name == "densenet121":  # torchvision's DenseNet checkpoints: the old "norm.1" names,
        state = {k.replace("norm1.", "norm.1.").replace("conv2.", "conv.2."): v  # no counters
                 for k, v in state.items() if not k.endswith("num_batches_tracked")}  # fmt: skip
    if name == "googlenet":  # its checkpoint keeps the auxiliary heads
        aux = tvm.get_model(name, aux_logits=True, init_weights=False).state_dict()
        state = {**{k: v for k, v in aux.items() if k.startswith("aux")}, **state}
        tmodel.transform_input = True
    torch.save(state, _checkpoint(tmp_path, monkeypatch, enum.DEFAULT.url))
    model = models.get_model(name, weights="DEFAULT")
    if name == "googlenet":
        assert model.aux1 is None and model.transform_input
    tmodel.eval()
    model.eval()
    xs = [np.random.default_rng(i).standard_normal(s).astype(np.float32)
          for i, s in enumerate(shapes)]  # fmt: skip
    with lucid.no_grad():
        got = _flat(model(*[lucid.tensor(x) for x in xs], **call))
    with torch.no_grad():
        expected = _flat(tmodel(*[torch.tensor(x) for x in xs], **call))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parity
def test_image_classification_preset_matches_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    from torchvision.transforms import _presets

    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (3, 300, 340), dtype=np.uint8)
    for weights in (models.ResNet18_Weights.DEFAULT, models.EfficientNet_B0_Weights.DEFAULT):
        preset = weights.transforms()
        kw = {k: v for k, v in weights.transforms.keywords.items() if k != "interpolation"}
        mode = preset.interpolation.value
        tpreset = _presets.ImageClassification(**kw, interpolation=_presets.InterpolationMode(mode))
        for x, tx in ((lucid.tensor(img), torch.tensor(img)),
                      (lucid.tensor(img[None]), torch.tensor(img[None]))):  # fmt: skip
            got = preset(x).numpy()
            expected = tpreset(tx).numpy()
            assert got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-2)
    hwc = np.ascontiguousarray(np.moveaxis(img, 0, -1))  # a numpy image: PIL's stand-in
    got = models.ResNet18_Weights.DEFAULT.transforms()(hwc)
    assert tuple(got.shape) == (3, 224, 224) and got.dtype == lucid.float32


@pytest.mark.parity
def test_segmentation_video_and_flow_presets_match_torchvision(tvm: Any) -> None:
    torch = pytest.importorskip("torch")
    from torchvision.transforms import _presets

    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (2, 3, 90, 70), dtype=np.uint8)
    seg = models.segmentation.FCN_ResNet50_Weights.DEFAULT.transforms  # resize 520, normalize
    got = seg()(lucid.tensor(img)).numpy()
    expected = _presets.SemanticSegmentation(**seg.keywords)(torch.tensor(img)).numpy()
    assert got.shape == expected.shape == (2, 3, 668, 520)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-2)
    frames = rng.integers(0, 256, (2, 5, 3, 100, 140), dtype=np.uint8)  # (N, T, C, H, W)
    vid = models.video.R3D_18_Weights.DEFAULT.transforms  # resize (128, 171), crop 112
    got = vid()(lucid.tensor(frames)).numpy()
    expected = _presets.VideoClassification(**vid.keywords)(torch.tensor(frames)).numpy()
    assert got.shape == expected.shape == (2, 3, 5, 112, 112)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=3e-2)
    flow = models.optical_flow.Raft_Small_Weights.DEFAULT.transforms()
    a, b = flow(lucid.tensor(img[0]), lucid.tensor(img[1]))
    ta, tb = _presets.OpticalFlow()(torch.tensor(img[0]), torch.tensor(img[1]))
    np.testing.assert_allclose(a.numpy(), ta.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), tb.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parity
def test_every_builder_torchvision_weights_has_the_same_enum(tvm: Any) -> None:
    """The generated enums are torchvision's (tools/gen_tv_weights.py is not stale)."""
    ours = set(models.list_models())
    shared = [n for n in tvm.list_models() if n in ours]
    assert len(shared) >= 100
    for name in shared:
        theirs, mine = tvm.get_model_weights(name), models.get_model_weights(name)
        assert mine.__name__ == theirs.__name__, name
        assert list(mine.__members__) == list(theirs.__members__), name
        for key, member in theirs.__members__.items():
            got = mine[key]
            assert got.name == member.name and got.url == member.url, (name, key)
            # repr: NaN metrics (VGG16's features-only weights) compare equal as text
            meta = {k: v for k, v in member.meta.items() if k != "unquantized"}
            mine_meta = {k: v for k, v in got.meta.items() if k != "unquantized"}
            assert repr(mine_meta) == repr(meta), (name, key)
            if "unquantized" in member.meta:
                assert repr(got.meta["unquantized"]) == repr(member.meta["unquantized"])
            keywords = getattr(member.transforms, "keywords", {})
            assert getattr(got.transforms, "keywords", {}).keys() == keywords.keys(), (name, key)
