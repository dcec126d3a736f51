"""nanoGPT's own `train.py` and `sample.py` on lucid, with only their imports changed.

`programs/nanogpt/` holds karpathy/nanoGPT's `model.py`, `train.py`, `sample.py`,
`configurator.py` and `config/train_shakespeare_char.py` as they are upstream (MIT, see its
LICENSE). The test maps their imports with `tools/port_check` (what a user does), makes a
small character dataset in `prepare.py`'s format, and runs the README's CPU recipe (scaled
down, with the config's dropout and gradient accumulation) as `python train.py
config/train_shakespeare_char.py --device=cpu --compile=...` runs: `--compile=True` (the model
through `torch.compile`, i.e. `lucid.compile`) gives the same losses, weights and optimizer
state as `--compile=False`, bit for bit (nothing is fused), and `sample.py` samples the same
text from either checkpoint.
"""

from __future__ import annotations

import pickle
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the folder's shared helpers

from port_tools import port_check  # type: ignore[import-not-found]  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
NANOGPT = Path(__file__).resolve().parent / "programs" / "nanogpt"
TEXT = REPO_ROOT / "CONTRIBUTING.md"  # a small English text for the character model

# The README's CPU recipe, smaller: `--compile` is added per run.
RECIPE = [
    "config/train_shakespeare_char.py",
    "--device=cpu",
    "--dataset=tiny",
    "--eval_iters=2",
    "--log_interval=1",
    "--block_size=16",
    "--batch_size=4",
    "--n_layer=2",
    "--n_head=2",
    "--n_embd=32",
    "--max_iters=6",
    "--lr_decay_iters=6",
    "--warmup_iters=2",
    "--eval_interval=3",
    "--gradient_accumulation_steps=2",
]


def _prepare(data: Path) -> None:
    """data/shakespeare_char/prepare.py's output (train.bin, val.bin, meta.pkl) for TEXT."""
    text = TEXT.read_text()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    split = int(len(ids) * 0.9)
    data.mkdir(parents=True)
    ids[:split].tofile(data / "train.bin")
    ids[split:].tofile(data / "val.bin")
    meta = {"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}
    (data / "meta.pkl").write_bytes(pickle.dumps(meta))


@pytest.fixture(scope="module")
def ported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """nanoGPT's folder with its imports mapped, and the dataset where train.py looks."""
    work = tmp_path_factory.mktemp("nanogpt")
    port_check().port_tree(NANOGPT, work)
    _prepare(work / "data" / "tiny")
    return work


@pytest.fixture
def tf32_switches() -> Iterator[None]:
    """The scripts set `torch.backends.cuda.matmul.allow_tf32 = True` (the float32 matmul
    precision) and cudnn's: both are put back afterwards."""
    precision, cudnn = lucid.get_float32_matmul_precision(), lucid.backends.cudnn.allow_tf32
    yield
    lucid.set_float32_matmul_precision(precision)
    lucid.backends.cudnn.allow_tf32 = cudnn


def _run(
    script: str, args: list[str], work: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """`python SCRIPT ARGS` from `work`, in this process; returns the script's globals."""
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    monkeypatch.delitem(sys.modules, "model", raising=False)  # each run imports its model.py
    # sample.py imports tiktoken at the top; the character dataset never calls it
    monkeypatch.setitem(sys.modules, "tiktoken", types.ModuleType("tiktoken"))
    monkeypatch.setattr(sys, "argv", [script, *args])
    path = work / script
    scope: dict[str, Any] = {"__name__": "__main__", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    return scope


def _losses(printed: str) -> list[str]:
    """The losses train.py prints (its `iter`/`step` lines without their timings)."""
    return re.findall(r"(?:iter \d+: loss \S+|step \d+: train loss \S+ val loss \S+)", printed)


def _same_state(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert list(a) == list(b)
    for key in a:
        if isinstance(a[key], dict):
            _same_state(a[key], b[key])
        elif isinstance(a[key], lucid.Tensor):
            np.testing.assert_array_equal(a[key].numpy(), b[key].numpy(), err_msg=key)
        else:
            assert a[key] == b[key], key


@pytest.mark.usefixtures("tf32_switches")
# train.py builds `torch.cuda.amp.GradScaler(enabled=True)`: disabled with a warning, no CUDA
@pytest.mark.filterwarnings("ignore:GradScaler is enabled for device 'cuda':UserWarning")
def test_train_py_compile_true_matches_compile_false_and_samples(
    ported: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, printed = {}, {}
    for flag in ("False", "True"):
        out_dir = f"--out_dir={ported / ('out-compile-' + flag)}"
        runs[flag] = _run("train.py", [*RECIPE, f"--compile={flag}", out_dir], ported, monkeypatch)
        printed[flag] = capsys.readouterr().out
    eager, compiled = runs["False"], runs["True"]

    # the same loss curve, printed and at full precision, and the same weights and moments
    assert "compiling the model" in printed["True"]
    assert len(_losses(printed["False"])) == 7 + 3  # iters 0..6, evals at 0, 3, 6
    assert _losses(printed["True"]) == _losses(printed["False"])
    assert compiled["lossf"] == eager["lossf"]
    assert {k: float(v) for k, v in compiled["losses"].items()} == {
        k: float(v) for k, v in eager["losses"].items()
    }
    assert compiled["model"]._orig_mod is compiled["unoptimized_model"]  # torch.compile's wrap
    _same_state(compiled["unoptimized_model"].state_dict(), eager["model"].state_dict())
    _same_state(compiled["optimizer"].state_dict(), eager["optimizer"].state_dict())

    # every signature (training, and eval under no_grad) replays a capture, no graph break
    log = compiled["model"]._compiled_forward.log
    assert len(log) == 2 and all(e.program is not None and not e.reasons for e in log), log

    # the checkpoint (nanoGPT's dict: model, optimizer, model_args, iter_num, config) reloads,
    # with the compiled model's `_orig_mod.` keys, and sample.py draws the same text from both
    samples = {}
    for flag in ("False", "True"):
        out_dir = ported / f"out-compile-{flag}"
        checkpoint = lucid.load(out_dir / "ckpt.pt")
        prefix = "_orig_mod." if flag == "True" else ""
        assert all(k.startswith(prefix) for k in checkpoint["model"])
        assert checkpoint["model_args"]["n_layer"] == 2 and checkpoint["iter_num"] > 0
        args = ["--device=cpu", f"--out_dir={out_dir}", "--num_samples=1", "--max_new_tokens=24"]
        _run("sample.py", [*args, f"--compile={flag}"], ported, monkeypatch)
        samples[flag] = capsys.readouterr().out.split("Loading meta")[-1]
    assert samples["True"] == samples["False"]
    generated = samples["False"].split("\n", 1)[1].rsplit("---------------", 1)[0]
    assert len(generated) >= 24 and set(generated) <= set(TEXT.read_text())
