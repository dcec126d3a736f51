"""The examples/xor.py demo: raw tensors + manual SGD learn OR and XOR to 100% accuracy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "xor.py"
pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/ is not in this checkout")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lucid_example_xor", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while building the class
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["or", "xor"])
def test_reaches_full_accuracy(kind: str) -> None:
    xor = _load()
    result = xor.train(kind)
    assert result.accuracy == 1.0
    assert result.predictions == [int(t) for t in xor.TARGETS[kind]]
    assert result.losses[-1] < 0.01 < result.losses[0]
    assert all(p.grad is None and p.is_leaf for p in result.params.values())


def test_script_runs_and_writes_the_graph(tmp_path: Path) -> None:
    out = tmp_path / "xor.dot"
    src = Path(__file__).resolve().parents[1] / "src"
    done = subprocess.run([sys.executable, str(EXAMPLE), "--steps", "50", "--graph", str(out)],
                          capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(src), "PATH": ""})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "OR:" in done.stdout and "XOR:" in done.stdout
    assert out.read_text().startswith("digraph") and "w1" in out.read_text()
