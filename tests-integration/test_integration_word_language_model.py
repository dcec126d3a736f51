"""pytorch/examples' word_language_model on lucid, with only its imports changed.

`programs/word_language_model/` holds its `main.py`, `model.py`, `data.py` and `generate.py`
as they are upstream (BSD-3, see its LICENSE). The test maps their imports with
`tools/port_check` (what a user does), writes a small corpus in the WikiText-2 layout
(`train.txt`, `valid.txt`, `test.txt`) and runs `python main.py --model MODEL ...` for LSTM, GRU
and Transformer (scaled down: a few batches of a small model), which trains, evaluates, saves
the whole model with `torch.save`, loads it back under `torch.serialization.safe_globals` and
tests it; then `generate.py` samples words from that checkpoint. A few seconds.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the folder's shared helpers

from port_tools import port_check  # type: ignore[import-not-found]  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
PROGRAM = Path(__file__).resolve().parent / "programs" / "word_language_model"
TEXT = REPO_ROOT / "CONTRIBUTING.md"  # a small English text for the corpus

# main.py's defaults, smaller: 1 epoch of a small model over a few dozen batches
SMALL = ["--emsize", "16", "--nhid", "16", "--bptt", "10", "--batch_size", "4", "--epochs", "1",
         "--log-interval", "4", "--lr", "5", "--nhead", "2"]  # fmt: skip


@pytest.fixture(scope="module")
def ported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program's folder with its imports mapped, and the corpus in data/small."""
    work = tmp_path_factory.mktemp("word_language_model")
    port_check().port_tree(PROGRAM, work)
    lines = [line for line in TEXT.read_text().splitlines() if line.strip()][:120]
    data = work / "data" / "small"
    data.mkdir(parents=True)
    (data / "train.txt").write_text("\n".join(lines[:90]) + "\n")
    (data / "valid.txt").write_text("\n".join(lines[90:105]) + "\n")
    (data / "test.txt").write_text("\n".join(lines[105:]) + "\n")
    return work


def _run(script: str, args: list[str], work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python SCRIPT ARGS` from `work`, in this process."""
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    for name in ("model", "data"):  # each run imports the ported model.py and data.py
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "argv", [script, *args])
    path = work / script
    scope: dict[str, Any] = {"__name__": "__main__", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), scope)


@pytest.mark.parametrize("model", ["LSTM", "GRU", "Transformer"])
def test_main_py_trains_saves_loads_tests_and_generate_py_samples(
    model: str, ported: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = ported / f"{model}.pt"
    args = ["--data", "data/small", "--model", model, "--save", str(checkpoint), *SMALL]
    _run("main.py", args, ported, monkeypatch)
    printed = capsys.readouterr().out
    batches = re.findall(r"\|\s+(\d+)/\s*(\d+) batches .* loss\s+(\S+) \| ppl", printed)
    assert len(batches) >= 2, printed  # logged every 4 batches
    assert all(math.isfinite(float(loss)) for _, _, loss in batches)
    test = re.search(r"End of training \| test loss\s+(\S+) \| test ppl\s+(\S+)", printed)
    assert test is not None and math.isfinite(float(test.group(1))), printed
    assert checkpoint.stat().st_size > 0

    out = ported / f"{model}.txt"
    args = ["--data", "data/small", "--checkpoint", str(checkpoint), "--outf", str(out),
            "--words", "30", "--log-interval", "10"]  # fmt: skip
    _run("generate.py", args, ported, monkeypatch)
    words = out.read_text().split()
    assert len(words) == 30
    corpus = [(ported / "data" / "small" / f).read_text() for f in ("train.txt", "valid.txt",
                                                                    "test.txt")]  # fmt: skip
    vocabulary = set(" ".join(corpus).split()) | {"<eos>"}  # data.py's dictionary
    assert set(words) <= vocabulary
