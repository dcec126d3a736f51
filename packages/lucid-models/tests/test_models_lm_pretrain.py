"""tools/experiments/lm_pretrain.py: a few steps of GPT-2 and BERT masked-LM pre-training on
real text (the script's own source) lower the validation loss below its first value."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "experiments" / "lm_pretrain.py"


def _tool() -> Any:
    if not TOOL.is_file():
        pytest.skip("not in a clone of the repository (tools/ is not shipped)")
    spec = importlib.util.spec_from_file_location("lm_pretrain", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("model", "tokenizer"),
    [("gpt2", "byte"), ("bert", "char"), ("gpt2", "bpe"), ("bert", "wordpiece")],
)
def test_lm_pretrain_smoke_validation_loss_falls(model: str, tokenizer: str) -> None:
    tool = _tool()
    result = tool.main(["--model", model, "--tokenizer", tokenizer, "--vocab-size", "300",
                        "--text", str(TOOL), "--steps", "12",
                        "--eval-every", "6", "--layers", "1", "--dim", "32", "--heads", "2",
                        "--ctx", "32", "--batch", "8", "--val-batches", "2", "--warmup", "2",
                        "--sample-chars", "4"])  # fmt: skip
    losses = [r["val_loss"] for r in result["rows"]]
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0]
    if model == "bert":
        assert 0.0 <= result["rows"][-1]["val_masked_acc"] <= 1.0
    else:
        assert all(isinstance(s, str) and len(s) > 0 for s in result["samples"])


def test_bert_masking_follows_the_paper() -> None:
    tool = _tool()
    x = np.full((64, 64), len(tool.BERT_SPECIALS) + 3, dtype=np.int64)
    x[:, 0], x[:, -1] = tool.CLS, tool.SEP
    inp, labels = tool.bert_mask(x, 50, np.random.default_rng(0))
    chosen = labels != -100
    assert not chosen[:, 0].any() and not chosen[:, -1].any()  # specials are never predicted
    assert 0.12 < chosen.mean() < 0.18
    assert 0.7 < (inp[chosen] == tool.MASK).mean() < 0.9
