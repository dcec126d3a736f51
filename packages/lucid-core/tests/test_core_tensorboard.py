"""lucid.utils.tensorboard.SummaryWriter: what it writes, read back with TensorBoard's own
EventAccumulator (skipped where the tensorboard package is not installed)."""

from __future__ import annotations

import glob
import io
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)

from lucid.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(path: str | Path) -> EventAccumulator:
    acc = EventAccumulator(str(path), size_guidance={"images": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def _png_pixels(png: bytes) -> np.ndarray:
    """Decode what summary._png writes (8-bit RGB/RGBA, filter 0) to check the pixels."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h, _, color = struct.unpack(">IIBB", png[16:26])
    channels = {0: 1, 2: 3, 6: 4}[color]
    pos, data = 8, b""
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        if kind == b"IDAT":
            data += png[pos + 8 : pos + 8 + n]
        pos += 12 + n
    rows = np.frombuffer(zlib.decompress(data), np.uint8).reshape(h, 1 + w * channels)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(h, w, channels)


def test_scalars_and_steps_read_back(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss/train", 1.0 / (step + 1), step)
        w.add_scalar("acc", lucid.tensor(0.75), global_step=9, walltime=123.0)
        w.add_scalar("np", np.float32(2.5), 1, new_style=True)
    acc = _read(tmp_path)
    loss = acc.Scalars("loss/train")
    assert [e.step for e in loss] == list(range(5))
    np.testing.assert_allclose([e.value for e in loss], [1.0 / (s + 1) for s in range(5)],
                               rtol=1e-6, atol=0)  # fmt: skip
    (a,) = acc.Scalars("acc")
    assert (a.step, a.value, a.wall_time) == (9, 0.75, 123.0)
    (t,) = acc.Tensors("np")
    assert t.step == 1 and t.tensor_proto.float_val == [2.5]


def test_add_scalars_writes_one_run_per_tag(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("run/loss", {"train": 1.0, "val": 2.0}, 3)
    for tag, value in (("train", 1.0), ("val", 2.0)):
        (e,) = _read(tmp_path / f"run_loss_{tag}").Scalars("run/loss")
        assert (e.step, e.value) == (3, value)


def test_histogram_counts_every_value(tmp_path: Path) -> None:
    values = np.random.default_rng(0).standard_normal(1000)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", lucid.tensor(values), 0)
        w.add_histogram("b", values, 1, bins=10)
    acc = _read(tmp_path)
    for tag in ("w", "b"):
        (h,) = acc.Histograms(tag)
        v = h.histogram_value
        assert v.num == 1000 and sum(v.bucket) == 1000
        np.testing.assert_allclose([v.min, v.max, v.sum, v.sum_squares],
                                   [values.min(), values.max(), values.sum(), values @ values],
                                   rtol=1e-9, atol=1e-9)  # fmt: skip
    (b,) = acc.Histograms("b")
    counts, edges = np.histogram(values, bins=10)
    np.testing.assert_array_equal(b.histogram_value.bucket[1:], counts)
    np.testing.assert_allclose(b.histogram_value.bucket_limit, edges, rtol=1e-12, atol=0)


def test_images_are_png_of_the_pixels(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    chw = rng.random((3, 4, 5)).astype(np.float32)
    batch = (rng.random((2, 1, 3, 3)) * 255).astype(np.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", lucid.tensor(chw), 0)
        w.add_image("hw", chw[0], 0, dataformats="HW")
        w.add_images("batch", batch, 0)
    acc = _read(tmp_path)
    (img,) = acc.Images("chw")
    assert (img.width, img.height) == (5, 4)
    got = _png_pixels(img.encoded_image_string)
    np.testing.assert_array_equal(got, (chw.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8))
    hw = _png_pixels(acc.Images("hw")[0].encoded_image_string)
    np.testing.assert_array_equal(hw[..., 0], hw[..., 2])
    grid = _png_pixels(acc.Images("batch")[0].encoded_image_string)
    assert grid.shape == (3, 6, 3)  # two 3x3 images side by side, grey as RGB
    np.testing.assert_array_equal(grid[:, 3:, 1], batch[1, 0])
    with pytest.raises(ValueError, match="input format"):
        SummaryWriter(tmp_path / "x").add_image("bad", chw, 0, dataformats="HW")


def test_text_and_hparams(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "**lr** sweep", 2)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "bn": True}, {"hparam/acc": 0.9}, run_name="r1")
    (t,) = _read(tmp_path).Tensors("notes/text_summary")
    assert t.step == 2 and t.tensor_proto.string_val == [b"**lr** sweep"]
    run = _read(tmp_path / "r1")
    assert run.Scalars("hparam/acc")[0].value == pytest.approx(0.9, rel=1e-6, abs=0)
    from tensorboard.plugins.hparams import plugin_data_pb2

    content = run.SummaryMetadata("_hparams_/session_start_info").plugin_data.content
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    assert start.hparams["lr"].number_value == 0.1 and start.hparams["opt"].string_value == "sgd"
    assert start.hparams["bn"].number_value == 1.0  # torch logs a bool as a number
    with pytest.raises(TypeError, match="dictionary"):
        SummaryWriter(tmp_path / "y").add_hparams([1], {})  # type: ignore[arg-type]


def test_figure_is_rendered(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=20)
    plt.plot([0, 1], [0, 1])
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", fig, 0)
    (img,) = _read(tmp_path).Images("fig")
    assert (img.width, img.height) == (40, 20)
    assert not plt.fignum_exists(fig.number)


def test_default_log_dir_flush_and_purge(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_lr0.1")
    w.add_scalar("x", 1.0, 0)
    w.flush()  # visible before close
    assert _read(w.get_logdir()).Scalars("x")[0].value == 1.0
    w.close()
    assert len(glob.glob(os.path.join(w.get_logdir(), "events.out.tfevents.*"))) == 1
    with SummaryWriter(tmp_path / "p", purge_step=2) as w2:
        w2.add_scalar("x", 1.0, 2)
    assert [e.step for e in _read(tmp_path / "p").Scalars("x")] == [2]


@pytest.mark.parity
def test_the_protos_match_torchs() -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import summary as tsum

    from lucid.utils.tensorboard import summary as lsum

    values = np.random.default_rng(1).standard_normal(300)
    assert lsum.scalar("a", 0.5) == tsum.scalar("a", 0.5)
    assert lsum.scalar("a", 0.5, new_style=True) == tsum.scalar("a", 0.5, new_style=True)
    assert lsum.text("t", "hi") == tsum.text("t", "hi")
    hp = {"lr": 0.1, "opt": "sgd", "bn": True}
    assert lsum.hparams(hp, {"m": 1.0}) == tsum.hparams(hp, {"m": 1.0})
    from lucid.utils.tensorboard.summary import default_bins

    for bins in (default_bins(), 10, "auto"):
        ours = lsum.histogram("h", lucid.tensor(values), bins)
        theirs = tsum.histogram("h", torch.from_numpy(values), bins)
        assert ours == theirs
    assert lsum.histogram("h", values, 64, max_bins=10) == tsum.histogram(
        "h", torch.from_numpy(values), 64, max_bins=10
    )


def _embedding_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "events.out" not in p.name
    }


@pytest.mark.parity
def test_add_embedding_writes_torchs_files(tmp_path: Path) -> None:
    """The projector's files (tensors.tsv, metadata.tsv, the sprite's pixels and
    projector_config.pbtxt) as torch's SummaryWriter writes them, for two embeddings, one with
    label images and a metadata header (found by pytorch/tutorials' tensorboardyt_tutorial)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("PIL")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    rng = np.random.default_rng(0)
    mat = rng.standard_normal((5, 3)).astype(np.float32)
    imgs = rng.random((5, 1, 4, 4)).astype(np.float32)
    rows = [[f"n{i}", i % 2] for i in range(5)]
    for name, writer, fw in (("torch", TorchWriter, torch), ("lucid", SummaryWriter, lucid)):
        w = writer(str(tmp_path / name))
        w.add_embedding(fw.from_numpy(mat.copy()), metadata=list("abcde"),
                        label_img=fw.from_numpy(imgs.copy()), tag="a/b")  # fmt: skip
        w.add_embedding(fw.from_numpy(mat.copy()), metadata=rows, global_step=3,
                        metadata_header=["name", "odd"])  # fmt: skip
        w.close()
    want, got = _embedding_files(tmp_path / "torch"), _embedding_files(tmp_path / "lucid")
    assert sorted(got) == sorted(want)
    for key in want:
        if key.endswith("sprite.png"):  # PIL's PNG and lucid's: the same pixels
            from PIL import Image

            def pixels(png: bytes) -> np.ndarray:
                return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

            np.testing.assert_array_equal(pixels(got[key]), pixels(want[key]))
            np.testing.assert_array_equal(_png_pixels(got[key]), pixels(want[key]))
        else:
            assert got[key] == want[key], key
    with pytest.raises(AssertionError, match="#labels should equal with #data points"):
        SummaryWriter(str(tmp_path / "bad")).add_embedding(lucid.zeros(3, 2), metadata=["x"])
