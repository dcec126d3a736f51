"""``lucid-train --nproc 2``: two real MPI ranks on this machine, on ``mnist_small``.

256 training images at ``--batch-size 32`` per rank: 4 steps of a global batch of 64 per
epoch, 2 epochs, the default OneCycle schedule. Each job starts ``lucid-train`` in a child
process, which checks the settings and starts itself again as 2 ranks through MPI's launcher.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid

pytest.importorskip("lucid.optim")
pytest.importorskip("lucid.data")
pytest.importorskip("tqdm")
pytest.importorskip("lucid.distributed")

import lucid.nn.functional as F  # noqa: E402
from lucid.data import DataLoader, DistributedSampler  # noqa: E402
from lucid.models import create_model  # noqa: E402
from lucid.models.train import main  # noqa: E402
from lucid.models.train.data import loaders  # noqa: E402
from lucid.models.train.loop import PAUSE_ENV, TrainConfig, make_optimizer, make_scheduler  # noqa: E402

TIMEOUT_S = 180  # far above a job's seconds, even on a loaded machine: reaching it is a hang
RUN = ("--subset", "256", "--batch-size", "32", "--epochs", "2", "--seed", "3")
STEPS_PER_EPOCH = 256 // (2 * 32)
LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "PMI_SIZE", "PMI_RANK")


@pytest.fixture(autouse=True)
def _needs_mpiexec() -> None:
    if not (Path(sys.executable).parent / "mpiexec").exists():
        pytest.skip("no mpiexec next to this Python (pip install mpich)")


def _env(**extra: str) -> dict[str, str]:
    """A child's environment: lucid importable from where this process imports it, no launcher
    variables of an outer job."""
    src_dirs = [str(Path(p).parent) for p in lucid.__path__]
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env["PYTHONPATH"] = os.pathsep.join(src_dirs + [env.get("PYTHONPATH", "")])
    return {**env, **extra}


def _argv(data: Path, out: Path, *extra: str) -> list[str]:
    return ["lenet5", "--data-root", str(data), "--output", str(out), "--no-progress", *RUN,
            "--nproc", "2", *extra]  # fmt: skip


def _lucid_train(argv: list[str]) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "lucid.models.train", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=_env())


def _weights(path: Path) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in lucid.load(path)["model"].items()}


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def two_ranks(mnist_small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted 2-rank run's output folder."""
    out = tmp_path_factory.mktemp("ddp") / "run"
    done = _lucid_train(_argv(mnist_small, out))
    assert done.returncode == 0, (done.stdout, done.stderr)
    (out / "stdout.txt").write_text(done.stdout)
    return out


def test_rank_0_alone_prints_and_writes(two_ranks: Path) -> None:
    printed = (two_ranks / "stdout.txt").read_text()
    assert "2 processes x 32 images a step (global batch 64)" in printed
    for line in ("epoch 1:", "epoch 2:", "test accuracy:"):  # rank 1 prints nothing
        assert printed.count(line) == 1, printed
    assert [r["epoch"] for r in _rows(two_ranks)] == [1, 2]  # one row per epoch: one writer
    ckpt = lucid.load(two_ranks / "last.safetensors")
    assert ckpt["settings"]["nproc"] == 2 and ckpt["settings"]["steps_per_epoch"] == 4
    assert ckpt["best_acc"] == max(r["test_acc"] for r in _rows(two_ranks))  # rank 0 evaluated
    assert (two_ranks / "best.safetensors").exists() and (two_ranks / "curves.png").exists()
    assert not [p.name for p in two_ranks.iterdir() if p.name.endswith(".tmp")]
    # the checkpoint holds the model's own keys (no DDP "module." prefix): it loads anywhere
    create_model("lenet5").load_state_dict(ckpt["model"])


def _one_process_on_the_global_batches(data: Path) -> dict[str, np.ndarray]:
    """What the 2-rank run must equal: one process, batches of 64 in DistributedSampler's order
    of each epoch (rank r's k-th batch is every 2nd image, from r, of that order's k-th 64)."""
    cfg = TrainConfig(model="lenet5", data_root=data, epochs=2, batch_size=64, subset=256, seed=3)
    lucid.manual_seed(cfg.seed)  # as a run starts: seed, data, model
    dataset = loaders(cfg)[0].dataset
    model = create_model("lenet5")
    sampler = DistributedSampler(dataset, num_replicas=1, rank=0, seed=cfg.seed)
    loader: DataLoader[Any] = DataLoader(dataset, batch_size=64, sampler=sampler)
    opt = make_optimizer(cfg, model.parameters())
    sched = make_scheduler(cfg, opt, STEPS_PER_EPOCH)
    for epoch in (1, 2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return {k: v.numpy() for k, v in model.state_dict().items()}


def test_two_ranks_end_with_the_weights_of_one_process_on_the_global_batches(
    two_ranks: Path, mnist_small: Path
) -> None:
    got, expected = (
        _weights(two_ranks / "last.safetensors"),
        _one_process_on_the_global_batches(mnist_small),
    )
    assert got.keys() == expected.keys()
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_ctrl_c_mid_epoch_then_resume_ends_with_the_same_weights(
    two_ranks: Path, mnist_small: Path, tmp_path: Path
) -> None:
    """Ctrl-C (to the launcher, which passes it on) while a rank waits after step 6, in epoch
    2: every rank stops after that step, rank 0 saves, and --resume (2 ranks again) ends
    bit for bit where the uninterrupted run did."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "lucid.models.train", *_argv(mnist_small, out)]
    proc = subprocess.Popen(cmd, env=_env(**{PAUSE_ENV: "step@6"}), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # ends at EOF if the job exits without pausing
            if "paused at step@6" in line:  # rank 0 (or 1) waits: neither passes step 6
                os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
                break
        stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, (stdout, stderr)
    assert "stopped during epoch 2 after step 2 of 4" in stdout
    assert lucid.load(out / "last.safetensors")["progress"]["step"] == 2

    done = _lucid_train(_argv(mnist_small, out, "--resume"))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "resumed at epoch 2, step 2 of 4" in done.stdout
    assert [r["epoch"] for r in _rows(out)] == [1, 2]
    expected, got = _weights(two_ranks / "last.safetensors"), _weights(out / "last.safetensors")
    for k in expected:
        np.testing.assert_array_equal(got[k], expected[k], err_msg=k)


@pytest.mark.parametrize("nproc", ["1", "3"])
def test_resume_with_another_nproc_is_refused_in_one_line(
    two_ranks: Path, mnist_small: Path, nproc: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (two_ranks / "last.safetensors").read_bytes()
    assert main([*_argv(mnist_small, two_ranks, "--resume"), "--nproc", nproc]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert f"was trained with --nproc 2, not --nproc {nproc}" in err
    assert (two_ranks / "last.safetensors").read_bytes() == before


def test_nproc_that_contradicts_the_launcher_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert main(["lenet5", "--output", str(tmp_path / "run"), "--nproc", "2"]) == 2
    assert "--nproc 2, but the launcher started 4 processes" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
