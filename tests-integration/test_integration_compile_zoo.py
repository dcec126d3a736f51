"""lucid.compile against eager mode over the model zoo's families (issue 31): for each, the
outputs, the loss, every parameter's gradient and one SGD step's parameters and buffers are
the same bits compiled as eager (``np.array_equal``), in train mode with dropout drawn from
the same generator state, in eval mode, under ``no_grad`` and after a shape change; a graph
break falls back to eager mode with eager's results and ``explain``'s reason.

The cases are ``tools/compile_zoo.py``'s (one small configuration per family, tiny inputs);
the families cheap enough for CI run here (about 30 s), ``python tools/compile_zoo.py`` runs
every family and prints the table of the compile guide page.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.models as models
import lucid.nn as nn

TOOL = Path(__file__).resolve().parents[1] / "tools" / "compile_zoo.py"
sys.path.insert(0, str(TOOL.parent))

import compile_zoo  # type: ignore[import-not-found]  # noqa: E402

CI_CASES = [c for c in compile_zoo.CASES if not c.slow]


# compiled and eager compared at one thread (conftest.py's ``one_thread`` says why)
pytestmark = pytest.mark.usefixtures("one_thread")


def test_every_zoo_family_has_a_case() -> None:
    # the zoo's own models (each has a family; a model another test registered has none)
    families = {f for n in models.list_models() if (f := compile_zoo.family_of(n)) != "None"}
    extra = {"GPT (issue 30)", "LSTM (issue 30)"}  # the speed issue's models
    assert families | extra == {c.family for c in compile_zoo.CASES}


@pytest.mark.parametrize("case", CI_CASES, ids=[c.family for c in CI_CASES])
def test_zoo_family_compiled_matches_eager_bit_for_bit(case: compile_zoo.Case) -> None:
    result = compile_zoo.check(case)  # raises compile_zoo.Mismatch naming the first difference
    assert result.verdict in ("bit-identical", compile_zoo.FUSED_VERDICT), result.verdict
    assert all(r.endswith("array replay") or "op-level replay" in r for r in result.replay)


def test_a_graph_break_in_a_zoo_model_falls_back_to_eager_and_is_explained() -> None:
    class Gated(nn.Module):
        """MobileNet v1 whose head reads a value: a graph break in every signature."""

        def __init__(self) -> None:
            super().__init__()
            self.net = compile_zoo.create_model("mobilenet_v1_025", num_classes=10)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            y: lucid.Tensor = self.net(x)
            return y if y.abs().max().item() < 1e6 else y * 0  # .item(): a graph break

    case = compile_zoo.Case("gated", "gated", compile_zoo.images(3, 32), build=Gated)
    result = compile_zoo.check(case)  # still eager's bits: the signature runs eagerly
    assert result.verdict.startswith("graph break: Tensor.item()"), result.verdict
    assert result.verdict.endswith(": train, eval, no_grad"), result.verdict
    assert result.replay == []
    report = lucid.compiler.explain(Gated(), lucid.randn(2, 3, 32, 32))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert "test_integration_compile_zoo.py" in report.break_reasons[0].user_stack[-1]


@pytest.mark.parametrize("reduce", ["mean", "cross_entropy"])
def test_the_recorded_backward_reads_the_cotangent_of_a_scalar_output(reduce: str) -> None:
    # a 0-d gradient's arithmetic gives NumPy scalars (``g / n``): the recorded backward once
    # kept those of its recording call as constants, so ``(loss * s).backward()`` with
    # another ``s`` (the gauge's squared loss, a loss scale) got the recording call's gradient
    lucid.manual_seed(0)
    x = lucid.randn(6, 5, requires_grad=True)

    def f(x: lucid.Tensor, t: lucid.Tensor) -> lucid.Tensor:
        return (x * 2).mean() if reduce == "mean" else nn.functional.cross_entropy(x, t)

    compiled = lucid.compile(f)
    for scale in (2.0, 3.0, 5.0, 7.0):  # the capture, the recording, two recorded replays
        t = lucid.randint(0, 5, (6,))
        (want,) = lucid.autograd.grad(f(x, t) * scale, x)
        (got,) = lucid.autograd.grad(compiled(x, t) * scale, x)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    program = compiled.log[0].program
    assert program is not None and program.arrays is not None and program.arrays.bwd is not None


def test_an_ordered_dict_output_replays_as_one() -> None:
    # torchvision's segmentation models (FCN, DeepLabV3, LR-ASPP) return an OrderedDict
    class Heads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.drop = nn.Dropout(0.5)

        def forward(self, x: lucid.Tensor) -> OrderedDict[str, lucid.Tensor]:
            return OrderedDict([("out", self.drop(self.lin(x))), ("aux", self.lin(x).relu())])

    case = compile_zoo.Case("heads", "heads", lambda n: (lucid.randn(n, 3),), build=Heads)
    result = compile_zoo.check(case)
    assert result.verdict in ("bit-identical", compile_zoo.FUSED_VERDICT), result.verdict
    lucid.manual_seed(0)
    compiled = lucid.compile(Heads())
    for _ in range(2):
        out = compiled(lucid.randn(2, 3))
        assert type(out) is OrderedDict and list(out) == ["out", "aux"]


def _tiny_detr() -> nn.Module:
    """DETR (dropout 0.1 in every layer) on a four-stage ResNet of one or two blocks each."""
    from lucid.models.detection.detr import DetrForObjectDetection, DetrResNetBackbone

    backbone = DetrResNetBackbone(depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 32, 64],
                                  embedding_size=8)  # fmt: skip
    return DetrForObjectDetection(
        backbone, num_labels=3, d_model=16, encoder_layers=2, decoder_layers=2,
        encoder_ffn_dim=32, decoder_ffn_dim=32, encoder_attention_heads=2,
        decoder_attention_heads=2, num_queries=4,
    )  # fmt: skip


def _padded(n: int) -> tuple[lucid.Tensor, lucid.Tensor]:
    mask = lucid.ones(n, 64, 64, dtype=lucid.int64)
    mask[0, :, 40:] = 0  # the first image padded on the right
    return lucid.randn(n, 3, 64, 64), mask


@pytest.mark.parametrize("padded", [False, True], ids=["unpadded", "padded"])
def test_detr_captures_whole_with_and_without_padding(padded: bool) -> None:
    # DETR's encoder once dropped its key mask where no pixel was padded (``bool(mask.all())``,
    # a graph break in every mode); the mask now always goes in, as upstream DETR passes it
    inputs = _padded if padded else compile_zoo.images(3, 64)
    case = compile_zoo.Case("detr", "detr (tiny)", inputs, build=_tiny_detr)
    result = compile_zoo.check(case)
    assert result.verdict in ("bit-identical", compile_zoo.FUSED_VERDICT), result.verdict
    # one replay per signature: train's two batch sizes, eval, no_grad
    assert result.replay == ["train: array replay"] * 2 + ["eval: array replay",
                                                           "no_grad: array replay"]  # fmt: skip
    report = lucid.compiler.explain(_tiny_detr().eval(), *inputs(2))
    assert (report.graph_count, report.graph_break_count) == (1, 0)
