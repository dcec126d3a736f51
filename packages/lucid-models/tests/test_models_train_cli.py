"""``lucid-train`` end to end on a small MNIST written in the real IDX format (the
``mnist_small`` fixture of this folder's ``conftest.py``: 512 training and 500 test images of
real MNIST), so every run reads the same files the real command reads, in a few seconds.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.models import create_model
from lucid.models.train import artifacts, checkpoint, main
from lucid.models.train.loop import PAUSE_ENV, _Interrupt

pytest.importorskip("lucid.optim")
pytest.importorskip("lucid.data")
pytest.importorskip("tqdm")

N_TRAIN, N_TEST = 512, 500  # mnist_small's images


def _train(data: Path, out: Path, *extra: str) -> int:
    argv = ["lenet5", "--data-root", str(data), "--output", str(out), "--no-progress"]
    return main([*argv, "--epochs", "1", "--subset", str(N_TRAIN), *extra])


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def _weights(path: Path) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in lucid.load(path)["model"].items()}


def _env() -> dict[str, str]:
    """The environment for a child process that imports lucid from where this one does."""
    src_dirs = [str(Path(p).parent) for p in lucid.__path__]
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(src_dirs + ([old] if old else []))}


def test_one_epoch_writes_metrics_checkpoints_and_plot(
    mnist_small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _train(mnist_small, out) == 0
    printed = capsys.readouterr().out
    assert f"{N_TRAIN} train / {N_TEST} test images" in printed
    assert "test accuracy:" in printed

    (row,) = _rows(out)
    assert row["epoch"] == 1
    assert set(row) >= {"train_loss", "train_acc", "test_loss", "test_acc", "lr",
                        "epoch_time_s", "images_per_s"}  # fmt: skip
    assert 0.0 <= row["test_acc"] <= 1.0 and row["test_loss"] > 0
    assert np.isfinite(row["train_loss"]) and row["images_per_s"] > 0

    for name in ("last", "best"):
        ckpt = lucid.load(out / f"{name}.safetensors")
        assert ckpt["epoch"] == 1 and ckpt["best_acc"] == pytest.approx(
            row["test_acc"], rel=1e-6, abs=1e-12
        )
        model = create_model("lenet5")
        model.load_state_dict(ckpt["model"])  # strict: every key, every shape
        assert "state" in ckpt["optimizer"] and "param_groups" in ckpt["optimizer"]
    np.testing.assert_array_equal(
        _weights(out / "last.safetensors")["classifier.5.weight"],
        _weights(out / "best.safetensors")["classifier.5.weight"],
    )
    # the saved weights are the ones evaluated: they reproduce the reported test accuracy
    from lucid.data.datasets import MNIST

    test = MNIST(mnist_small, train=False)
    x = (np.asarray(test.data, np.float32)[:, None] / 255 - 0.1307) / 0.3081
    model.eval()
    with lucid.no_grad():
        pred = model(lucid.tensor(x.astype(np.float32))).argmax(1).numpy()
    assert np.mean(pred == np.asarray(test.targets)) == pytest.approx(
        row["test_acc"], abs=1e-9, rel=0
    )
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_resume_continues_and_matches_an_uninterrupted_run(
    mnist_small: Path, tmp_path: Path
) -> None:
    """Train 1 epoch, then --resume to 2: as a 2-epoch run (constant lr: no schedule length)."""
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    sgd = ("--scheduler", "none", "--lr", "0.02")
    assert _train(mnist_small, straight, "--epochs", "2", "--seed", "3", *sgd) == 0
    assert _train(mnist_small, resumed, "--epochs", "1", "--seed", "3", *sgd) == 0
    assert lucid.load(resumed / "last.safetensors")["epoch"] == 1
    assert _train(mnist_small, resumed, "--epochs", "2", "--seed", "3", *sgd, "--resume") == 0

    a, b = _rows(straight), _rows(resumed)
    assert [r["epoch"] for r in b] == [1, 2]
    for ra, rb in zip(a, b):
        for key in ("train_loss", "train_acc", "test_loss", "test_acc", "lr"):
            assert ra[key] == rb[key], (ra["epoch"], key)
    wa, wb = _weights(straight / "last.safetensors"), _weights(resumed / "last.safetensors")
    assert wa.keys() == wb.keys()
    for k in wa:
        np.testing.assert_array_equal(wa[k], wb[k], err_msg=k)
    # a different seed trains differently: the comparison above can fail
    other = tmp_path / "other"
    assert _train(mnist_small, other, "--epochs", "2", "--seed", "4", *sgd) == 0
    assert _rows(other)[1]["train_loss"] != a[1]["train_loss"]


def test_ctrl_c_between_epochs_then_resume_keeps_the_schedule(
    mnist_small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during epoch 1's evaluation: epoch 1 is saved whole, epoch 2 never starts, and
    --resume finishes the 2-epoch OneCycle schedule exactly as an uninterrupted run does."""
    from lucid.models.train import loop

    extra = ("--epochs", "2", "--scheduler", "onecycle", "--lr", "0.05")
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    assert _train(mnist_small, straight, *extra) == 0

    real_evaluate = loop.evaluate

    def evaluate_then_ctrl_c(*args: Any) -> tuple[float, float]:
        result = real_evaluate(*args)
        os.kill(os.getpid(), signal.SIGINT)  # handled by _Interrupt: a flag, no exception
        return result

    monkeypatch.setattr(loop, "evaluate", evaluate_then_ctrl_c)
    assert _train(mnist_small, stopped, *extra) == 130
    monkeypatch.setattr(loop, "evaluate", real_evaluate)
    ckpt = lucid.load(stopped / "last.safetensors")
    assert ckpt["epoch"] == 1 and len(_rows(stopped)) == 1
    assert ckpt["scheduler"]["last_epoch"] == N_TRAIN // 64

    assert _train(mnist_small, stopped, *extra, "--resume") == 0
    a, b = _rows(straight), _rows(stopped)
    assert [(r["lr"], r["train_loss"], r["test_acc"]) for r in a] == [
        (r["lr"], r["train_loss"], r["test_acc"]) for r in b
    ]
    wa, wb = _weights(straight / "last.safetensors"), _weights(stopped / "last.safetensors")
    for k in wa:
        np.testing.assert_array_equal(wa[k], wb[k], err_msg=k)


def test_resume_refuses_to_stretch_a_schedule(
    mnist_small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _train(mnist_small, out, "--epochs", "1", "--scheduler", "onecycle") == 0
    assert _train(mnist_small, out, "--epochs", "3", "--scheduler", "onecycle", "--resume") == 2
    err = capsys.readouterr().err
    assert "schedule spans 1 epochs, not 3" in err and "--epochs 1" in err
    assert len(_rows(out)) == 1  # nothing trained, nothing written


def test_a_failed_save_leaves_the_old_checkpoint(
    mnist_small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    assert _train(mnist_small, out) == 0
    path = out / "last.safetensors"
    before = path.read_bytes()
    model = create_model("lenet5")
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)

    import lucid.serialization as ser

    real = ser._write_payload

    def half_then_fail(f: Any, header: bytes, arrays: list[np.ndarray]) -> None:
        f.write(header[: len(header) // 2])  # a partial file on disk, then the disk "fills up"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ser, "_write_payload", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        checkpoint.save_checkpoint(path, model, opt, None, checkpoint.RunState(epoch=9))
    assert path.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [
        "best.safetensors", "curves.png", "last.safetensors", "metrics.jsonl"
    ]  # fmt: skip
    monkeypatch.setattr(ser, "_write_payload", real)
    checkpoint.save_checkpoint(path, model, opt, None, checkpoint.RunState(epoch=9))
    assert lucid.load(path)["epoch"] == 9


def test_interrupt_handler_sets_a_flag_then_aborts() -> None:
    previous = signal.getsignal(signal.SIGINT)
    with _Interrupt() as stop:
        assert signal.getsignal(signal.SIGINT) == stop._handle
        assert not stop.is_set()
        stop._handle(signal.SIGINT, None)
        assert stop.is_set()
        with pytest.raises(KeyboardInterrupt):
            stop._handle(signal.SIGINT, None)
    assert signal.getsignal(signal.SIGINT) == previous


def test_ctrl_c_stops_after_saving_with_exit_code_130(mnist_small: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "lucid.models.train", "lenet5", "--data-root",
           str(mnist_small), "--output", str(out), "--no-progress", "--epochs", "1000",
           "--subset", "256"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        metrics = out / "metrics.jsonl"  # exists once an epoch is done: the handler is in place
        while not (metrics.exists() and metrics.read_text().strip()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no epoch finished within 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupt: stopping after this step" in stderr
    assert "Traceback" not in stderr
    assert "saved" in stdout and "--resume" in stdout
    ckpt = lucid.load(out / "last.safetensors")
    done = len(_rows(out))
    assert done >= 1 and ckpt["epoch"] == done  # finished epochs; --resume goes on mid-epoch
    create_model("lenet5").load_state_dict(ckpt["model"])


def test_unknown_model_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lenet6", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'lenet6'" in err and "lenet5" in err


def test_missing_data_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    assert main(["lenet5", "--data-root", str(missing), "--output", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lucid-train: error: no mnist data in")
    assert str(missing) in err and "train-images-idx3-ubyte" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()  # nothing created for a run that could not start


def test_missing_model_name_and_list_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "the model name is required" in capsys.readouterr().err
    assert main(["--list-models"]) == 0
    names = capsys.readouterr().out.split()
    assert "lenet5" in names and "resnet18_cifar" in names


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: lucid-train")
    for flag in ("--dataset", "--epochs", "--lr", "--scheduler", "--resume", "--threads",
                 "--nproc"):  # fmt: skip
        assert flag in text
    assert "global batch is N x --batch-size" in " ".join(text.split())


def test_nproc_without_lucid_distributed_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "lucid.distributed", None)  # as if not installed
    assert main(["lenet5", "--output", str(tmp_path / "run"), "--nproc", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install lucid-distributed" in err
    assert not (tmp_path / "run").exists()


def test_python_dash_m_runs_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "lucid.models.train", "--help"], env=_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: lucid-train")


# -- exact resume, kills during the commit, refusals ------------------------------------------

# 200 images at batch 64: 4 steps per epoch, the last of 8 images; 2 epochs.
RESUME_RUN = ("--subset", "200", "--epochs", "2", "--seed", "5")
SCHEDULES = {"onecycle": ("--scheduler", "onecycle"),
             "none": ("--scheduler", "none", "--lr", "0.02")}  # fmt: skip


def _cli(data: Path, out: Path, *extra: str) -> list[str]:
    return ["lenet5", "--data-root", str(data), "--output", str(out), "--no-progress", *extra]


def _signal_at(point: str, sig: int, argv: list[str]) -> tuple[int, str, str]:
    """Run lucid-train in a child process, paused by the test hook at ``point``; send ``sig``."""
    cmd = [sys.executable, "-m", "lucid.models.train", *argv]
    proc = subprocess.Popen(cmd, env={**_env(), PAUSE_ENV: point}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # ends at EOF if the child exits without pausing
            seen.append(line)
            if f"paused at {point}" in line:
                proc.send_signal(sig)
                break
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stdout, "".join(seen) + stderr


@pytest.fixture(scope="module")
def straight_runs(mnist_small: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An uninterrupted run per schedule: what every interrupted-and-resumed run must equal."""
    runs = {}
    for name, schedule in SCHEDULES.items():
        out = tmp_path_factory.mktemp(f"straight-{name}")
        assert main(_cli(mnist_small, out, *RESUME_RUN, *schedule)) == 0
        runs[name] = out
    return runs


def _assert_same_run(expected: Path, got: Path) -> None:
    """Bit-for-bit the same weights (last and best) and the same metrics, epochs 1..E once."""
    for name in ("last", "best"):
        wa, wb = _weights(expected / f"{name}.safetensors"), _weights(got / f"{name}.safetensors")
        assert wa.keys() == wb.keys()
        for k in wa:
            np.testing.assert_array_equal(wa[k], wb[k], err_msg=f"{name}: {k}")
    a, b = _rows(expected), _rows(got)
    assert [r["epoch"] for r in b] == [r["epoch"] for r in a] == [1, 2]
    for key in ("train_loss", "train_acc", "test_loss", "test_acc", "lr"):
        assert [r[key] for r in a] == [r[key] for r in b], key


@pytest.mark.parametrize(
    ("point", "schedule", "done", "step"),
    [
        ("step@2", "onecycle", 0, 2),  # mid-epoch
        ("step@2", "none", 0, 2),
        ("step@4", "onecycle", 0, 4),  # on the epoch's last step
        ("step@4", "none", 0, 4),
        ("epoch-end@1", "onecycle", 1, 0),  # between epochs
        ("step@7", "onecycle", 1, 3),  # mid-way through the second epoch
    ],
)
def test_ctrl_c_anywhere_then_resume_ends_with_the_same_weights(
    mnist_small: Path, tmp_path: Path, straight_runs: dict[str, Path], point: str, schedule: str,
    done: int, step: int,
) -> None:  # fmt: skip
    """A real SIGINT to a real process at an exact step, then --resume: bit for bit the same
    final weights and metrics as the uninterrupted run (OneCycle would also fail to step past
    its end if a resumed epoch replayed steps it had done)."""
    argv = _cli(mnist_small, tmp_path / "run", *RESUME_RUN, *SCHEDULES[schedule])
    code, stdout, stderr = _signal_at(point, signal.SIGINT, argv)
    assert code == 130, (stdout, stderr)
    assert "Traceback" not in stderr and "--resume" in stdout
    ckpt = lucid.load(tmp_path / "run" / "last.safetensors")
    assert (ckpt["epoch"], ckpt["progress"]["step"]) == (done, step)
    metrics = tmp_path / "run" / "metrics.jsonl"
    assert (len(_rows(tmp_path / "run")) if metrics.exists() else 0) == done
    assert main([*argv, "--resume"]) == 0
    _assert_same_run(straight_runs[schedule], tmp_path / "run")


@pytest.mark.parametrize("point", ["saved-last@1", "saved-best@2", "saved-last@2"])
def test_kill_9_during_the_commit_then_resume_has_each_epoch_once(
    mnist_small: Path, tmp_path: Path, straight_runs: dict[str, Path], point: str
) -> None:
    """SIGKILL inside an epoch's commit (after best or last is replaced, before the metrics row
    is appended), then --resume: metrics.jsonl has epochs 1, 2 once and the weights are the
    uninterrupted run's."""
    straight = straight_runs["onecycle"]
    assert _rows(straight)[1]["test_acc"] > _rows(straight)[0]["test_acc"]  # epoch 2 saves best
    argv = _cli(mnist_small, tmp_path / "run", *RESUME_RUN, *SCHEDULES["onecycle"])
    code, stdout, stderr = _signal_at(point, signal.SIGKILL, argv)
    assert code == -signal.SIGKILL, (stdout, stderr)
    assert main([*argv, "--resume"]) == 0
    _assert_same_run(straight, tmp_path / "run")


def test_restore_metrics_keeps_each_epoch_once(tmp_path: Path) -> None:
    """The checkpoint's rows replace the file; without them (a checkpoint saved with none), the
    file's first row of each finished epoch is kept and a row cut short by a kill is dropped."""
    path = tmp_path / "metrics.jsonl"
    rows = [{"epoch": e, "train_loss": float(i)} for i, e in enumerate([1, 2, 2, 3])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"epoch": 4, "trai')
    assert artifacts.restore_metrics(path, [], 2) == rows[:2] == _rows(tmp_path)
    kept = [{"epoch": 1, "train_loss": 9.0}]
    assert artifacts.restore_metrics(path, kept, 1) == kept == _rows(tmp_path)


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lucid-train: error: "), err
    return err


@pytest.fixture(scope="module")
def one_epoch_run(mnist_small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one-epoch")
    assert main(_cli(mnist_small, out, "--subset", "200", "--scheduler", "none")) == 0
    return out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("--batch-size", "32"), "--batch-size 64, not --batch-size 32"),
        (("--subset", "128"), "200 training images (--subset), not 128 training images"),
        (("--optimizer", "adam"), "--optimizer sgd, not --optimizer adam"),
        (("--lr", "0.1"), "--lr 0.05, not --lr 0.1"),
        (("--momentum", "0.5"), "--momentum 0.9, not --momentum 0.5"),
        (("--scheduler", "cosine"), "--scheduler none, not --scheduler cosine"),
        (("--model", "lenet5_classic"), "model lenet5, not model lenet5_classic"),
    ],
)
def test_resume_refuses_a_different_setting_and_changes_nothing(
    mnist_small: Path, tmp_path: Path, one_epoch_run: Path, capsys: pytest.CaptureFixture[str],
    change: tuple[str, str], message: str,
) -> None:  # fmt: skip
    out = tmp_path / "run"
    out.mkdir()
    for name in ("last.safetensors", "metrics.jsonl"):
        (out / name).write_bytes((one_epoch_run / name).read_bytes())
    argv = _cli(mnist_small, out, "--subset", "200", "--scheduler", "none", "--epochs", "2")
    if change[0] == "--model":  # lenet5_classic has lenet5's keys and shapes: only the name differs
        argv[0] = change[1]
    else:
        argv += change
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 2
    err = _one_error_line(capsys)
    assert message in err and str(out / "last.safetensors") in err, err
    for name in ("last.safetensors", "metrics.jsonl"):
        assert (out / name).read_bytes() == (one_epoch_run / name).read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["last.safetensors", "metrics.jsonl"]


def test_an_output_with_a_run_needs_resume_or_overwrite(
    mnist_small: Path, tmp_path: Path, one_epoch_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    for p in one_epoch_run.iterdir():
        (out / p.name).write_bytes(p.read_bytes())
    argv = _cli(mnist_small, out, "--subset", "200", "--scheduler", "none", "--seed", "1")
    capsys.readouterr()
    assert main(argv) == 2
    err = _one_error_line(capsys)
    assert f"--output {out} already holds a run" in err
    assert "--resume" in err and "--overwrite" in err
    for p in one_epoch_run.iterdir():
        assert (out / p.name).read_bytes() == p.read_bytes(), p.name

    assert main([*argv, "--overwrite"]) == 0  # a new run with another seed replaces the old
    assert [r["epoch"] for r in _rows(out)] == [1]
    assert _rows(out)[0]["train_loss"] != _rows(one_epoch_run)[0]["train_loss"]
    assert lucid.load(out / "best.safetensors")["settings"]["seed"] == 1
    with pytest.raises(SystemExit) as exc:  # argparse: the two flags exclude each other
        main([*argv, "--overwrite", "--resume"])
    assert exc.value.code == 2


def _corrupt(out: Path) -> None:
    path = out / "last.safetensors"
    path.write_bytes(path.read_bytes()[:1000])  # cut short: header and data truncated


def _garbage(out: Path) -> None:
    (out / "last.safetensors").write_bytes(b"\x00" * 8 + b"not a checkpoint")


def _flip_header(out: Path) -> None:
    path = out / "last.safetensors"
    data = bytearray(path.read_bytes())
    data[9] ^= 0xFF  # a byte inside the JSON header
    path.write_bytes(bytes(data))


def _flip_weight(out: Path) -> None:
    path = out / "last.safetensors"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01  # the lowest bit of a stored value: a file that still parses
    path.write_bytes(bytes(data))


def _no_settings_other_model(out: Path) -> None:
    """A checkpoint without settings or checksum, of another architecture."""
    payload = lucid.load(out / "last.safetensors")
    del payload["settings"], payload["checksum"]
    payload["model"] = create_model("lenet1").state_dict()
    lucid.save(payload, out / "last.safetensors")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_corrupt, "is not a readable checkpoint"),
        (_garbage, "is not a readable checkpoint"),
        (_flip_header, "is not a readable checkpoint"),
        (_flip_weight, "is corrupt (its contents do not match the checksum"),
        (_no_settings_other_model, "does not fit this run"),
    ],
    ids=["truncated", "garbage", "flipped-header-byte", "flipped-data-bit", "another-model"],
)
def test_resume_from_a_damaged_checkpoint_is_one_line(
    mnist_small: Path, tmp_path: Path, one_epoch_run: Path, capsys: pytest.CaptureFixture[str],
    damage: Any, message: str,
) -> None:  # fmt: skip
    out = tmp_path / "run"
    out.mkdir()
    for name in ("last.safetensors", "metrics.jsonl"):
        (out / name).write_bytes((one_epoch_run / name).read_bytes())
    damage(out)
    capsys.readouterr()
    argv = _cli(mnist_small, out, "--subset", "200", "--scheduler", "none", "--epochs", "2")
    assert main([*argv, "--resume"]) == 2
    err = _one_error_line(capsys)
    assert message in err and "--overwrite" in err, err
    assert (out / "metrics.jsonl").read_bytes() == (one_epoch_run / "metrics.jsonl").read_bytes()


def _unwritable_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):  # root writes anywhere: a folder no one can write to
        return Path("/proc/self")
    return folder


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device", "nosuch"], "--device 'nosuch': unknown device 'nosuch'"),
        (["--epochs", "0"], "--epochs must be at least 1, got 0"),
        (["--epochs", "-3"], "--epochs must be at least 1, got -3"),
        (["--batch-size", "0"], "--batch-size must be at least 1, got 0"),
        (["--output", "{tmp}/a-file"], "is a file, not a folder"),
        (["--output", "{tmp}/a-file/run"], "a-file is a file); pass a folder"),
        (["--output", "{unwritable}/run"], "is not writable (no write permission on"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    mnist_small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
    message: str,
) -> None:  # fmt: skip
    (tmp_path / "a-file").write_text("not a folder")
    unwritable = str(_unwritable_folder(tmp_path))
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{unwritable}", unwritable) for a in argv]
    base = _cli(mnist_small, tmp_path / "run", "--subset", "200")
    assert main([*base, *argv]) == 2
    assert message in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_without_output_a_new_run_takes_a_new_folder_and_resume_the_last(
    mnist_small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    argv = ["lenet5", "--data-root", str(mnist_small), "--subset", "200", "--no-progress",
            "--scheduler", "none", "--epochs", "1"]  # fmt: skip
    assert main(argv) == 0  # the README's command, run twice: the second keeps the first
    assert main(argv) == 0
    base = tmp_path / "runs" / "lenet5-mnist"
    first, second = _rows(base), _rows(base.with_name("lenet5-mnist-2"))
    assert [r["train_loss"] for r in first] == [r["train_loss"] for r in second]  # same seed
    assert "writing to runs/lenet5-mnist-2" in capsys.readouterr().out
    assert artifacts.default_output(Path("runs/lenet5-mnist"), resume=True) == Path(
        "runs/lenet5-mnist-2"
    )
    assert artifacts.default_output(Path("runs/lenet5-mnist"), resume=False) == Path(
        "runs/lenet5-mnist-3"
    )


def test_auxiliary_outputs_train_with_weighted_losses(mnist_small: Path, tmp_path: Path) -> None:
    """A model that returns (main, auxiliary) logits in training, as GoogLeNet and Inception v3
    do, trains: the auxiliary head gets gradients (its weights move)."""
    from lucid import nn
    from lucid.models import register_model

    class TwoHeads(nn.Module):
        def __init__(self, num_classes: int = 10, in_channels: int = 1) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Flatten(), nn.Linear(in_channels * 28 * 28, 16), nn.ReLU())
            self.main = nn.Linear(16, num_classes)
            self.aux = nn.Linear(16, num_classes)

        def forward(self, x: Any) -> Any:
            h = self.body(x)
            return (self.main(h), self.aux(h)) if self.training else self.main(h)

    register_model(TwoHeads, name="two_heads_test")
    lucid.manual_seed(0)
    before = TwoHeads().aux.weight.detach().numpy().copy()
    out = tmp_path / "run"
    argv = ["two_heads_test", "--data-root", str(mnist_small), "--output", str(out)]
    extra = ["--no-progress", "--epochs", "1", "--subset", "128", "--scheduler", "none"]
    assert main([*argv, *extra]) == 0
    after = _weights(out / "last.safetensors")["aux.weight"]
    assert float(np.abs(before - after).max()) > 1e-4


def test_tensorboard_logs_each_epochs_metrics(mnist_small: Path, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    assert _train(mnist_small, out, "--tensorboard") == 0
    (row,) = _rows(out)
    acc = EventAccumulator(str(out / "tensorboard"))
    acc.Reload()
    for key, tag in artifacts.TENSORBOARD_TAGS.items():
        (event,) = acc.Scalars(tag)
        assert event.step == 1
        assert event.value == pytest.approx(row[key], rel=1e-6, abs=1e-7)
    assert _train(mnist_small, out, "--tensorboard", "--overwrite") == 0  # the old events go
    assert len(list((out / "tensorboard").glob("events.out.tfevents.*"))) == 1


def test_a_model_that_takes_no_small_image_trains_on_resized_images(
    mnist_small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model whose layers leave nothing of a 28x28 image (as Inception v3/v4 and ZFNet do of
    CIFAR's 32x32) trains on images resized to the smallest side it takes; one whose auxiliary
    head alone needs far larger images (Inception v3's) is built with aux_logits=False."""
    from lucid import nn
    from lucid.models import register_model

    class BigKernels(nn.Module):
        def __init__(self, num_classes: int = 10, in_channels: int = 1, aux_logits: bool = True):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(in_channels, 4, 33), nn.AdaptiveAvgPool2d(1),
                                      nn.Flatten(), nn.Linear(4, num_classes))  # fmt: skip
            self.aux = nn.Conv2d(in_channels, num_classes, 60) if aux_logits else None

        def forward(self, x: Any) -> Any:
            out = self.main(x)
            if self.training and self.aux is not None:
                return out, self.aux(x).mean((2, 3))
            return out

    register_model(BigKernels, name="big_kernels_test", input_size=(1, 64, 64))
    out = tmp_path / "run"
    argv = ["big_kernels_test", "--data-root", str(mnist_small), "--output", str(out)]
    assert main([*argv, "--no-progress", "--epochs", "1", "--subset", "64"]) == 0
    printed = capsys.readouterr().out
    assert "built with aux_logits=False: its auxiliary classifier needs 60x60 images" in printed
    assert "takes no 28x28 image; the images are resized (bilinear) to 33x33" in printed
    (row,) = _rows(out)
    assert math.isfinite(row["test_loss"])
    assert not any(k.startswith("aux.") for k in _weights(out / "last.safetensors"))
