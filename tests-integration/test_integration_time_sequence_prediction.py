"""pytorch/examples' time_sequence_prediction on lucid, with only its imports changed.

`programs/time_sequence_prediction/` holds its `generate_sine_wave.py` and `train.py` as they
are upstream (BSD-3, see its LICENSE): two `LSTMCell`s and a `Linear` unrolled over every time
step in float64 (`seq.double()`), trained with LBFGS and a closure, then a 1,000-step
prediction under `no_grad`, drawn with matplotlib. The test maps the imports with
`tools/port_check`, runs `generate_sine_wave.py` as written (it saves a NumPy array with
`torch.save`), then `train.py --steps 1` on a smaller copy of that data (`lucid.save` of the
same sine waves, 12 series of 80 points: the full 100 x 1,000 takes a minute a step), and checks
that LBFGS brings the loss down and the prediction is drawn. A few seconds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the folder's shared helpers

from port_tools import port_check  # type: ignore[import-not-found]  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "programs" / "time_sequence_prediction"


def _run(script: str, args: list[str], work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python SCRIPT ARGS` from `work`, in this process."""
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "argv", [script, *args])
    path = work / script
    scope: dict[str, Any] = {"__name__": "__main__", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), scope)


def test_time_sequence_prediction_trains_with_lbfgs_and_predicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    import lucid

    port_check().port_tree(PROGRAM, tmp_path)
    assert "import lucid as torch" in (tmp_path / "train.py").read_text()
    _run("generate_sine_wave.py", [], tmp_path, monkeypatch)  # as written: 100 x 1,000
    data = lucid.load(tmp_path / "traindata.pt")
    assert isinstance(data, np.ndarray) and data.shape == (100, 1000) and data.dtype == np.float64
    lucid.save(np.ascontiguousarray(data[:12, :80]), tmp_path / "traindata.pt")
    capsys.readouterr()
    _run("train.py", ["--steps", "1"], tmp_path, monkeypatch)
    out = capsys.readouterr().out
    losses = [float(v) for v in re.findall(r"^loss: (\S+)$", out, re.M)]
    test_loss = [float(v) for v in re.findall(r"^test loss: (\S+)$", out, re.M)]
    assert len(losses) >= 10, out  # LBFGS's closure, up to max_iter=20 evaluations
    assert all(np.isfinite(losses)) and min(losses) < 0.5 * losses[0], losses
    assert len(test_loss) == 1 and np.isfinite(test_loss[0])
    assert (tmp_path / "predict0.pdf").stat().st_size > 1000
