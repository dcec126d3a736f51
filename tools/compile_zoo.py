"""lucid.compile against eager mode over every family of the model zoo (issue 31's gauge).

For one small configuration of each family (``CASES``: the family's smallest registered
model, shrunk where its builder takes a size, on tiny inputs) it runs the same seeded steps
twice, eagerly and through ``lucid.compile(model)``, and compares, bit for bit
(``np.array_equal``):

- **train**: dropout and other random draws from the same generator state both ways; per
  step the outputs, the loss, every parameter's gradient, and after an SGD step (momentum
  and weight decay) every parameter and buffer. Steps 1-3 have one input signature (the
  capture, the replay that records the backward, a full replay), steps 4-5 another batch
  size (a shape change: a new capture, then its replay);
- **eval** (with gradients: outputs, loss and gradients), and **no_grad** in eval mode
  (outputs only), each over two calls (the capture, then the replay).

Where a program fused elementwise ops (``_fused``), float32 results differ from eager's in
their last bits, and the two SGD trajectories would part over the steps (batch norm over a
batch of 2 amplifies a rounding difference in the parameters); so each compiled call starts
from eager's state: before each step the compiled model gets, copied in place, the parameters
and buffers eager had before its own step and eager's momentum buffers (``_Resync``), and each
call is compared within ``FUSED_RTOL``/``FUSED_ATOL`` (the relative tolerance of each value and
of the array's largest: a sum's rounding follows its terms' size, not its result's). Where
nothing fused there is no resync: the whole trajectory must be the same bits. Within
tolerance, positions where both values are finite are compared; a position finite one way
only (NaN and inf alike) is a mismatch unless eager's own array holds non-finite values
(eager overflows: where an overflow lands then follows the last bits), and the verdict then
says so (``EAGER_OVERFLOW_VERDICT``, with the first call and array where eager's values were
non-finite and how many positions were finite one way only).

A signature that cannot be captured (a graph break by design: Python reading tensor values)
must fall back to eager mode, give eager's results, and be explained
(``lucid.compiler.explain``'s reason); the row then reads ``graph break`` and the reason.

    python tools/compile_zoo.py                 # every family: the table of the guide page
    python tools/compile_zoo.py resnet vit      # the families named

``tests-integration/test_integration_compile_zoo.py`` runs each case as a test.
"""

from __future__ import annotations

import copy
import functools
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid import optim
from lucid.compiler import _fused_conv
from lucid.models import create_model, model_info
from lucid.models.gpt2 import _gpt2

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import train_step  # noqa: E402  (the GPT and LSTM of the speed issue, issue 30)

Inputs = Callable[[int], tuple[Any, ...]]  # batch size -> the model's positional arguments


def _randn(*shape: int) -> lucid.Tensor:
    return lucid.randn(*shape)


def images(c: int, h: int, w: int | None = None) -> Inputs:
    """A batch of ``c x h x w`` images."""
    return lambda n: (_randn(n, c, h, w or h),)


def clips(c: int, t: int, h: int) -> Inputs:
    """A batch of ``c x t x h x h`` videos."""
    return lambda n: (_randn(n, c, t, h, h),)


def tokens(vocab: int, length: int) -> Inputs:
    """A batch of token ids."""
    return lambda n: (lucid.randint(0, vocab, (n, length)),)


def seq2seq(vocab: int, src: int, tgt: int) -> Inputs:
    return lambda n: (lucid.randint(0, vocab, (n, src)), lucid.randint(0, vocab, (n, tgt)))


def image_and_level(c: int, h: int, levels: int) -> Inputs:
    """An image and a per-sample integer (a diffusion timestep, a noise level)."""
    return lambda n: (_randn(n, c, h, h), lucid.randint(0, levels, (n,)))


def image_pair(c: int, h: int, w: int) -> Inputs:
    """Two images and RAFT's number of flow updates."""
    return lambda n: (_randn(n, c, h, w), _randn(n, c, h, w), 2)


def _targets(h: int, masks: bool) -> dict[str, lucid.Tensor]:
    t = {"boxes": lucid.tensor([[2.0, 3.0, h / 2, h / 2 + 4]]), "labels": lucid.tensor([1])}
    if masks:
        mask = lucid.zeros(1, h, h, dtype=lucid.uint8)
        mask[:, 3 : h // 2 + 4, 2 : h // 2] = 1
        t["masks"] = mask
    return t


def detection_train(c: int, h: int, masks: bool = False) -> Inputs:
    """A list of images and their targets (one box each), torchvision's detection format."""
    return lambda n: ([_randn(c, h, h) for _ in range(n)], [_targets(h, masks) for _ in range(n)])


def image_list(c: int, h: int) -> Inputs:
    return lambda n: ([_randn(c, h, h) for _ in range(n)],)


def gpt_batch(n: int) -> tuple[Any, ...]:
    """The speed issue's GPT step: tokens, positions and targets of its block size."""
    c = train_step.GPT
    idx, targets = (lucid.randint(0, c["vocab"], (n, c["block"])) for _ in range(2))
    return idx, lucid.arange(c["block"]), targets


def lstm_batch(n: int) -> tuple[Any, ...]:
    """The speed issue's LSTM step: a bptt-long batch and the carried (h, c) state."""
    c = train_step.LSTM
    hidden = tuple(lucid.randn(c["layers"], n, c["hidden"]) for _ in range(2))
    return lucid.randint(0, c["vocab"], (c["bptt"], n)), hidden


@dataclass
class Case:
    """One family's configuration: ``create_model(name, **kwargs)`` on ``inputs(batch)``
    (``name`` up to a `` (`` that notes the configuration)."""

    family: str
    name: str
    inputs: Inputs
    kwargs: dict[str, Any] = field(default_factory=dict)
    slow: bool = False  # more than a few seconds: the tool runs it, the CI test does not
    batch: int = 2
    build: Callable[..., Any] | None = None  # instead of create_model(name, ...)
    train_inputs: Inputs | None = None  # in train mode, where not ``inputs`` (with targets)
    # compile only this method (a dotted path from the model: ``forward_raw``,
    # ``backbone.forward``), set on its owner; the Python around it runs eagerly
    part: str | None = None


def _c10(**kw: Any) -> dict[str, Any]:
    return {"num_classes": 10, **kw}


GPT2_TINY = {"n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 50, "n_positions": 16}
BERT_TINY = dict(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=64, max_position_embeddings=16)  # fmt: skip

_DET, _DET_EVAL = detection_train(3, 64), image_list(3, 64)
_SIZE64 = {"min_size": 64, "max_size": 64}  # torchvision's transform resizes to this

TRANSFORMER_TINY = dict(vocab_size=50, d_model=32, nhead=4, num_encoder_layers=2,
                        num_decoder_layers=2, dim_feedforward=64)  # fmt: skip


def _s3d(**kw: Any) -> nn.Module:
    """S3D with its final 2x7x7 average pool (224x224 clips only) made adaptive."""
    model = create_model("s3d", **kw)
    model.avgpool = nn.AdaptiveAvgPool3d(1)
    return model


CASES: list[Case] = [
    Case("alexnet", "alexnet", images(3, 63), _c10(), slow=True),
    Case("zfnet", "zfnet", images(3, 63), _c10(), slow=True),
    Case("vgg", "vgg11", images(3, 32), _c10(), slow=True),
    Case("lenet", "lenet5", images(1, 28)),
    Case("resnet", "resnet18_cifar", images(3, 16)),
    Case("senet", "seresnet18", images(3, 32), _c10(), slow=True),
    Case("sknet", "skresnet18", images(3, 32), _c10(), slow=True),
    Case("resnest", "resnest14d", images(3, 32), _c10(), slow=True),
    Case("densenet", "densenet121", images(3, 32), _c10(), slow=True),
    Case("googlenet", "googlenet", images(3, 32), _c10(aux_logits=False), slow=True),
    Case("inception", "inception_v3", images(3, 75), _c10(aux_logits=False), slow=True),
    Case("inception_v4", "inception_v4", images(3, 75), _c10(), slow=True),
    Case("inception_resnet", "inception_resnet_v1", images(3, 80), slow=True),
    Case("inception_next", "inception_next_tiny", images(3, 32), _c10(), slow=True),
    Case("xception", "xception", images(3, 71), _c10(), slow=True),
    Case("squeezenet", "squeezenet1_1", images(3, 32), _c10()),
    Case("mobilenetv1", "mobilenet_v1_025", images(3, 32), _c10()),
    Case("mobilenet", "mobilenet_v2", images(3, 32), _c10()),
    Case("mobilenetv3", "mobilenet_v3_small", images(3, 32), _c10()),
    Case("mobilenetv4", "mobilenetv4_conv_small", images(3, 32), _c10()),
    Case("mnasnet", "mnasnet0_5", images(3, 32), _c10()),
    Case("shufflenet", "shufflenet_v2_x0_5", images(3, 32), _c10()),
    Case("quantization", "quantized_shufflenet_v2_x0_5", images(3, 32), _c10()),
    Case("efficientnet", "efficientnet_b0", images(3, 32), _c10(), slow=True),
    Case("regnet", "regnet_y_400mf", images(3, 32), _c10(), slow=True),
    Case("cspnet", "cspresnext50", images(3, 32), _c10(), slow=True),
    Case("convnext", "convnext_tiny", images(3, 32), _c10(), slow=True),
    Case("convnextv2", "convnextv2_atto", images(3, 32), _c10()),
    Case("vit", "vit_tiny_patch4_32", images(3, 32)),
    Case("swin", "swin_t", images(3, 32), _c10(), slow=True),
    Case("crossvit", "crossvit_tiny_240", images(3, 240), _c10(), slow=True),
    Case("cvt", "cvt_13", images(3, 32), _c10(), slow=True),
    Case("pvt", "pvt_v2_b0", images(3, 32), _c10()),
    Case("coatnet", "coatnet_0_224", images(3, 64), _c10(img_size=64), slow=True),
    Case("maxvit", "maxvit_tiny_tf_224", images(3, 64), _c10(img_size=64), slow=True),
    Case("efficientformer", "efficientformer_l1", images(3, 64), _c10(img_size=64), slow=True),
    Case("generative", "vae_mnist", images(1, 28)),
    Case("ncsn", "ncsn_mnist", image_and_level(1, 16, 10), slow=True),
    Case("ddpm", "ddpm_cifar10", image_and_level(3, 16, 1000), slow=True),
    Case("unet", "unet (base 8)", images(1, 188), {"base": 8}, slow=True),
    Case("fcn", "fcn_resnet50", images(3, 32), _c10(), slow=True),
    Case("deeplabv3", "deeplabv3_mobilenet_v3_large", images(3, 32), _c10(), slow=True),
    Case("lraspp", "lraspp_mobilenet_v3_large", images(3, 32), _c10(), slow=True),
    Case("gpt2", "gpt2 (2 x 32)", tokens(50, 8), GPT2_TINY, build=lambda **kw: _gpt2(**kw)),
    Case("bert", "bert_base_classifier", tokens(50, 8), BERT_TINY),
    Case("roformer", "roformer_base_classifier", tokens(50, 8), BERT_TINY),
    Case(
        "GPT (issue 30)", "gpt", gpt_batch, slow=True, build=lambda: train_step._gpt(nn, F)
    ),  # fmt: skip
    Case(
        "LSTM (issue 30)", "lstm", lstm_batch, slow=True, build=lambda: train_step._lstm(nn, F)
    ),  # fmt: skip
    Case("transformer", "transformer_base (2+2 x 32)", seq2seq(50, 7, 6), TRANSFORMER_TINY),
    Case("s3d", "s3d (adaptive pool)", clips(3, 8, 32), _c10(), slow=True, build=_s3d),
    Case(
        "mvit",
        "mvit_v2_s",
        clips(3, 4, 32),
        _c10(spatial_size=(32, 32), temporal_size=4),
        slow=True,
    ),
    Case("swin_transformer", "swin3d_t", clips(3, 4, 32), _c10(), slow=True),
    Case("raft", "raft_small (2 updates)", image_pair(3, 128, 128), slow=True),
    Case("yolo", "yolo_v3_tiny", _DET_EVAL, slow=True, train_inputs=_DET),
    Case(
        "yolo",
        "yolo_v3_tiny (forward_raw)",
        _DET_EVAL,
        slow=True,
        train_inputs=_DET,
        part="forward_raw",
    ),  # fmt: skip
    Case("efficientdet", "efficientdet_d0", _DET_EVAL, slow=True, train_inputs=_DET),
    Case(
        "efficientdet",
        "efficientdet_d0 (forward_raw)",
        _DET_EVAL,
        slow=True,
        train_inputs=_DET,
        part="forward_raw",
    ),  # fmt: skip
    Case(
        "faster_rcnn",
        "fasterrcnn_mobilenet_v3_large_320_fpn",
        _DET_EVAL,
        _SIZE64,
        slow=True,
        train_inputs=_DET,
    ),  # fmt: skip
    Case(
        "faster_rcnn",
        "fasterrcnn_mobilenet_v3_large_320_fpn (backbone.forward)",
        _DET_EVAL,
        _SIZE64,
        slow=True,
        train_inputs=_DET,
        part="backbone.forward",
    ),  # fmt: skip
    Case(
        "retinanet", "retinanet_resnet50_fpn", _DET_EVAL, _SIZE64, slow=True, train_inputs=_DET
    ),  # fmt: skip
    Case(
        "retinanet",
        "retinanet_resnet50_fpn (backbone.forward)",
        _DET_EVAL,
        _SIZE64,
        slow=True,
        train_inputs=_DET,
        part="backbone.forward",
    ),  # fmt: skip
    Case(
        "mask_rcnn",
        "maskrcnn_resnet50_fpn",
        image_list(3, 128),
        {"min_size": 128, "max_size": 128},
        slow=True,
        train_inputs=detection_train(3, 128, masks=True),
    ),  # fmt: skip
    Case(
        "mask_rcnn",
        "maskrcnn_resnet50_fpn (backbone.forward)",
        image_list(3, 128),
        {"min_size": 128, "max_size": 128},
        slow=True,
        train_inputs=detection_train(3, 128, masks=True),
        part="backbone.forward",
    ),  # fmt: skip
    Case("detr", "detr_resnet50", images(3, 64), slow=True),
    Case("maskformer", "maskformer_resnet50", images(3, 64), slow=True),
    Case("mask2former", "mask2former_resnet50", images(3, 64), slow=True),
]


def family_of(name: str) -> str:
    """The registry's family of a registered model."""
    return str(model_info(name).family)


def _tensors(out: Any) -> list[lucid.Tensor]:
    """Every tensor of a result (tuples, lists, dicts, dataclass-like outputs)."""
    if isinstance(out, lucid.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _tensors(o)]
    if hasattr(out, "__dict__") and not isinstance(out, nn.Module):
        return [t for o in vars(out).values() for t in _tensors(o)]
    return []


def _loss(out: Any) -> lucid.Tensor:
    """The mean square of every floating output (a sum over them)."""
    total = lucid.zeros(())
    for t in _tensors(out):
        if t.dtype.is_floating_point:
            total = total + (t.float() ** 2).mean()
    return total


class Mismatch(AssertionError):
    """Compiled and eager results differ."""


# Where a program fused elementwise ops (``compiler._fused_elementwise``), compiled and eager
# agree within these: a fused group's gradient sums its terms in another order than the
# engine, and its results may have another memory layout than eager's, so later reductions
# sum in another order (float32, one step of SGD from the same state: ``_Resync``). A sum's
# rounding follows its terms' size, not its result's: a convolution's weight gradient of
# 0.0186 summed from terms up to ~45 (ncsn) differs by 7e-6 (3.8e-4 of itself, 1.5e-7 of
# the array's largest value), so the relative tolerance also applies to the array's largest
# |value| (``_same_or_close``).
FUSED_RTOL, FUSED_ATOL = 2e-5, 1e-6


@dataclass
class Overflow:
    """Where eager's own values were non-finite in a comparison within tolerance."""

    at: str  # the first such comparison: "train, call 2, grad of conv1.weight"
    one_way: int = 0  # positions finite one way only, over every such comparison


def _same_or_close(
    what: str, a: Any, b: Any, close: bool = False, overflow: list[Overflow] | None = None
) -> None:
    """``a`` (compiled) against ``b`` (eager): the same bits, or with ``close`` within
    ``FUSED_RTOL``/``FUSED_ATOL`` where both are finite (``FUSED_RTOL`` relative to each value
    and to the array's largest: ``|a - b| <= FUSED_ATOL + FUSED_RTOL * (|b| + max |b|)``);
    non-finite values at other positions than eager's only where eager's array holds
    non-finite values too (noted in ``overflow``)."""
    a, b = np.asarray(a), np.asarray(b)
    if close and a.shape == b.shape and a.dtype == b.dtype and a.dtype.kind == "f":
        fin_a, fin_b = np.isfinite(a), np.isfinite(b)
        both = fin_a & fin_b
        one_way = int(np.count_nonzero(fin_a != fin_b))
        eager_overflows = not fin_b.all()
        a64, b64 = a[both].astype(np.float64), b[both].astype(np.float64)
        scale = float(np.abs(b64).max()) if b64.size else 0.0
        if not np.allclose(a64, b64, rtol=FUSED_RTOL, atol=FUSED_ATOL + FUSED_RTOL * scale):
            diff = np.abs(a64 - b64).max()
            raise Mismatch(
                f"{what}: compiled differs from eager (max |diff| {diff}, "
                f"{diff / scale if scale else float('inf'):.2g} of the largest |value|)"
            )
        if one_way and not eager_overflows:
            raise Mismatch(f"{what}: {one_way} values non-finite compiled, finite eager")
        if eager_overflows and overflow is not None:
            if not overflow:
                overflow.append(Overflow(what))
            overflow[0].one_way += one_way
        return
    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
        diff = (np.abs(a.astype(np.float64) - b.astype(np.float64)).max()
                if a.shape == b.shape and a.dtype.kind in "fc" else "shape/dtype")  # fmt: skip
        raise Mismatch(f"{what}: compiled differs from eager (max |diff| {diff})")


@dataclass
class Record:
    outputs: list[np.ndarray]
    loss: float | None
    grads: dict[str, np.ndarray | None]
    state: dict[str, np.ndarray]


def _arr(t: lucid.Tensor) -> np.ndarray:
    return np.array(t.detach().numpy(), copy=True)


Sync = Callable[[nn.Module, optim.Optimizer], None]  # run at the start of each step


def _steps(model: nn.Module, run: Any, batches: list[tuple[Any, ...]], mode: str,
           seed: int, before: Sync | None = None) -> Iterator[Record]:  # fmt: skip
    """Seeded calls of ``run``; in "train" and "eval" a backward and an optimizer step each
    (a record per call, as it comes: the caller interleaves eager and compiled calls);
    ``before(model, optimizer)`` at the start of each step (``_Resync``)."""
    getattr(model, "eval" if mode != "train" else "train")()
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    named = list(model.named_parameters())
    for i, batch in enumerate(batches):
        if before is not None:
            before(model, opt)
        lucid.manual_seed(seed + i)  # the same draws (dropout) both ways
        with lucid.set_grad_enabled(mode != "no_grad"):
            out = run(*batch)
            outputs = [_arr(t) for t in _tensors(out)]
            loss = None
            if mode != "no_grad":
                value = _loss(out)
                opt.zero_grad()
                if value.requires_grad:
                    value.backward()
                loss = value.item()
        grads = {n: None if p.grad is None else _arr(p.grad) for n, p in named}
        if mode != "no_grad":
            opt.step()
        state = {k: _arr(v) for k, v in model.state_dict().items()}
        yield Record(outputs, loss, grads, state)


class _Resync:
    """Eager's state before each of its steps, copied into the compiled model before the same
    step, once ``fused()`` says a program fused elementwise ops (before, the trajectories are
    the same bits, and stay so unsynced): the parameters and buffers (``copy_`` in place under
    ``no_grad``: a compiled program reads them by reference) and SGD's momentum buffers. The
    caller alternates the steps, eager's first (``_compare``)."""

    def __init__(self, fused: Callable[[], bool]) -> None:
        self.fused = fused
        self.saved: tuple[list[lucid.Tensor], list[dict[str, Any]]] | None = None

    @staticmethod
    def _tensors(model: nn.Module) -> list[lucid.Tensor]:
        buffers = [b for _, b in model.named_buffers() if b is not None]
        return [p for _, p in model.named_parameters()] + buffers

    def take(self, model: nn.Module, opt: optim.Optimizer) -> None:
        """Eager's state now (its step is next), where the programs fused."""
        self.saved = None
        if not self.fused():
            return
        with lucid.no_grad():
            tensors = [t.detach().clone() for t in self._tensors(model)]
            states = [
                {k: v.detach().clone() if isinstance(v, lucid.Tensor) else v
                 for k, v in opt.state.get(p, {}).items()}
                for _, p in model.named_parameters()
            ]  # fmt: skip
        self.saved = (tensors, states)

    def give(self, model: nn.Module, opt: optim.Optimizer) -> None:
        """Eager's state before its step, into the compiled model and optimizer."""
        if self.saved is None:
            return
        tensors, states = self.saved
        self.saved = None
        mine = self._tensors(model)
        if len(mine) != len(tensors):
            raise Mismatch(f"{len(mine)} parameters and buffers compiled, {len(tensors)} eager")
        with lucid.no_grad():
            for dst, src in zip(mine, tensors):
                dst.copy_(src)
            for (_, p), saved in zip(model.named_parameters(), states):
                state = opt.state[p]
                for k in [k for k in state if k not in saved]:
                    del state[k]
                for k, v in saved.items():
                    old = state.get(k)
                    if isinstance(v, lucid.Tensor) and isinstance(old, lucid.Tensor):
                        old.copy_(v)
                    else:
                        state[k] = v


def _compare(mode: str, eager: Iterator[Record], comp: Iterator[Record], fused: Any,
             overflow: list[Overflow]) -> None:  # fmt: skip
    """Step by step (one record of each alive at a time: VGG's state is 0.5 GB; eager's step
    first, then the compiled one: ``_Resync``); within ``FUSED_RTOL``/``FUSED_ATOL`` once
    ``fused()`` says a program fused elementwise ops (eager's overflows into ``overflow``)."""
    for i, (e, c) in enumerate(zip(eager, comp)):
        at = f"{mode}, call {i + 1}"
        close = fused()
        same = functools.partial(_same_or_close, close=close, overflow=overflow)

        if len(e.outputs) != len(c.outputs):
            raise Mismatch(f"{at}: {len(c.outputs)} outputs compiled, {len(e.outputs)} eager")
        for j, (a, b) in enumerate(zip(c.outputs, e.outputs)):
            same(f"{at}, output {j}", a, b)
        same(f"{at}, loss", np.float64(c.loss or 0.0), np.float64(e.loss or 0.0))
        for n in e.grads:
            if (e.grads[n] is None) != (c.grads[n] is None):
                raise Mismatch(f"{at}, grad of {n}: None one way only")
            if e.grads[n] is not None:
                same(f"{at}, grad of {n}", c.grads[n], e.grads[n])
        for k in e.state:
            same(f"{at}, {k} after the step", c.state[k], e.state[k])


FUSED_VERDICT = "within float32 tolerance (elementwise ops fused)"
# FUSED_VERDICT's comparisons, where eager's own values were non-finite somewhere: followed by
# " from <the first comparison>; <n> positions finite one way only"
EAGER_OVERFLOW_VERDICT = "within tolerance where finite; eager overflows (non-finite values)"


# The rewrite lines whose results are eager's to float32 rounding, not bit for bit: fused
# elementwise groups, and the fused first convolution's float64 bias sum (its default).
_INEXACT_REWRITES = ("elementwise ops ran as one fused op", _fused_conv.INEXACT_NOTE)


def _fused(log: Any, found: list[str]) -> bool:
    """Whether a program of ``log`` fused ops whose results are eager's to float32 rounding
    (elementwise groups, the inexact ``ConvMaxPool``; each line into ``found``)."""
    for entry in log:
        arrays = getattr(getattr(entry, "program", None), "arrays", None)
        for line in getattr(arrays, "rewrites", ()):
            if any(k in line for k in _INEXACT_REWRITES) and line not in found:
                found.append(line)
    return bool(found)


@dataclass
class Result:
    family: str
    name: str
    verdict: str  # "bit-identical", FUSED_VERDICT, EAGER_OVERFLOW_VERDICT... or "graph break: ..."
    replay: list[str]  # what runs each captured signature (explain's replay_per_graph)
    seconds: float


def check(case: Case) -> Result:
    """Run ``case`` eagerly and compiled in every mode; raise :class:`Mismatch` on a
    difference; return the verdict."""
    started = time.perf_counter()
    lucid.manual_seed(0)
    base = (case.build or functools.partial(create_model, case.name.split(" (")[0]))(**case.kwargs)
    n = case.batch
    lucid.manual_seed(1)
    same_shape = [case.inputs(n) for _ in range(2)]
    train = case.train_inputs or case.inputs
    batches = [train(n) for _ in range(3)] + [train(n + 1) for _ in range(2)]
    plans = {"train": batches, "eval": same_shape, "no_grad": same_shape}
    reasons: dict[str, list[str]] = {}  # a break's reason and place -> the modes it broke
    replay: list[str] = []
    fused: list[str] = []  # the fused groups met (``_fused``)
    overflow: list[Overflow] = []  # the first comparison where eager's values were non-finite
    for mode, batches in plans.items():
        eager_model = copy.deepcopy(base)
        comp_model = copy.deepcopy(base)
        if case.part:  # the network compiled, the Python around it (post-processing) eager
            *path, name = case.part.split(".")
            owner = functools.reduce(getattr, path, comp_model)
            part = lucid.compile(getattr(owner, name))
            setattr(owner, name, part)
            compiled, log = comp_model, part.log
        else:
            compiled = lucid.compile(comp_model)
            log = compiled._compiled_forward.log
        is_fused = functools.partial(_fused, log, fused)
        resync = _Resync(is_fused)
        eager = _steps(eager_model, eager_model, batches, mode, 10, resync.take)
        comp = _steps(comp_model, compiled, batches, mode, 10, resync.give)
        _compare(mode, eager, comp, is_fused, overflow)
        report = lucid.compiler._explain._report(log)
        for b in report.break_reasons:
            where = b.user_stack[-1].split(" in ")[0] if b.user_stack else ""
            where = where.rsplit("site-packages/", 1)[-1].rsplit("/src/", 1)[-1]
            modes = reasons.setdefault(f"{b.reason} ({where})" if where else b.reason, [])
            modes += [] if mode in modes else [mode]
        replay += [f"{mode}: {r}" for r in report.replay_per_graph]
    breaks = [f"{r}: {', '.join(m)}" for r, m in reasons.items()]
    verdict = "bit-identical" if not fused else FUSED_VERDICT
    if overflow:
        o = overflow[0]
        verdict = (
            f"{EAGER_OVERFLOW_VERDICT} from {o.at}; {o.one_way:,} positions finite one way only"
        )
    verdict = verdict if not breaks else "graph break: " + "; ".join(breaks)
    return Result(case.family, case.name, verdict, replay, time.perf_counter() - started)


def main(argv: list[str]) -> int:
    picked = [c for c in CASES if not argv or c.family in argv or c.name in argv]
    # one thread, as the CI tests compare: at two, a product's route (and its last bits)
    # follows the last parallel runtime, and a replay can meet another than eager did
    lucid.set_num_threads(1)
    failed = 0
    print("| family | model (config) | compiled vs eager | replay | s |")
    print("|---|---|---|---|---:|")
    for case in picked:
        try:
            r = check(case)
            kinds: dict[str, list[str]] = {}
            for x in r.replay:
                mode, kind = x.split(": ", 1)
                kinds.setdefault(kind, []).append(mode) if mode not in kinds.get(kind, []) else None
            replay = [f"{k} ({', '.join(m)})" if len(kinds) > 1 else k for k, m in kinds.items()]
            verdict, secs = r.verdict, r.seconds
        except Exception as err:  # noqa: BLE001 - the table reports every family
            failed += 1
            verdict, replay, secs = f"FAIL: {type(err).__name__}: {err}"[:300], [], float("nan")
        print(
            f"| {case.family} | {case.name} | {verdict} | {'; '.join(replay)} | {secs:.1f} |",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
