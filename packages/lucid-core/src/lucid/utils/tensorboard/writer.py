"""``SummaryWriter``: TensorBoard event files (``torch.utils.tensorboard.writer``)."""

from __future__ import annotations

import math
import os
import socket
import time
from datetime import datetime
from types import TracebackType
from typing import Any

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from lucid.utils.tensorboard import summary as _summary

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes events to one event file in ``log_dir`` (``torch.utils.tensorboard.FileWriter``)."""

    def __init__(
        self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return str(self.event_writer.get_logdir())

    def add_event(self, event: Any, step: int | None = None, walltime: float | None = None) -> None:
        """Write an ``Event`` proto, stamped with ``walltime`` (now) and ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Write a ``Summary`` proto as an event."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        """Write what is queued to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """Reopen a closed writer (a new event file in the same directory)."""
        self.event_writer.reopen()


class SummaryWriter:
    """Write scalars, histograms, images, text and hyperparameters for TensorBoard.

    As ``torch.utils.tensorboard.SummaryWriter``: ``log_dir`` defaults to
    ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>``; events are queued and written every
    ``flush_secs`` seconds, every ``max_queue`` events, on :meth:`flush` and :meth:`close`.

    >>> w = SummaryWriter("runs/exp1")  # doctest: +SKIP
    >>> for step in range(3):  # doctest: +SKIP
    ...     w.add_scalar("loss", 1.0 / (step + 1), step)
    >>> w.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = (
            max_queue,
            flush_secs,
            filename_suffix,
        )
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] = {}
        self._projector_config: Any = None  # add_embedding's list of every embedding added
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        if self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # TensorBoard drops events at or after it
                step, self.purge_step = self.purge_step, None
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START))
                )
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory event files are written to."""
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number (a float, an int, or a one-element tensor) under ``tag``."""
        summary = _summary.scalar(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers on one chart: each goes to ``<log_dir>/<main_tag>_<tag>``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(base, main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[path] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log the histogram of ``values`` (bins: "tensorflow", a count, edges or numpy's rules)."""
        summary = _summary.histogram(tag, values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log an image: floats in [0, 1] or uint8, laid out as ``dataformats`` says."""
        summary = _summary.image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images as one grid image."""
        summary = _summary.image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of them, as a batch) as an image."""
        if isinstance(figure, list):
            images = [_figure_to_chw(f, close) for f in figure]
            self.add_images(tag, np.stack(images), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _figure_to_chw(figure, close), global_step, walltime, "CHW")

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a string (Markdown) under ``tag``."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list[Any]] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log one run's hyperparameters and its metrics for TensorBoard's HParams tab.

        As torch: the run goes in a subdirectory ``run_name`` (default: the time) of
        ``log_dir``, with each metric logged there as a scalar.
        """
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            w = w_hp._get_file_writer()
            w.add_summary(exp, global_step)
            w.add_summary(ssi, global_step)
            w.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_embedding(
        self,
        mat: Any,
        metadata: Any = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: Any = None,
    ) -> None:
        """Points for TensorBoard's projector, as torch's: ``mat`` (N, D) written to
        ``<logdir>/<step:05d>/<tag>/tensors.tsv``, ``metadata`` (N labels, or N rows of
        columns under ``metadata_header``) to ``metadata.tsv``, ``label_img`` (N, C, H, W) as
        a square ``sprite.png``, and every embedding added so far listed in
        ``<logdir>/projector_config.pbtxt``."""
        from google.protobuf import text_format
        from tensorboard.plugins.projector.projector_config_pb2 import (
            EmbeddingInfo,
            ProjectorConfig,
        )

        arr = _summary.make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{_encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if os.path.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
            else:
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed."
                )
        if metadata is not None and arr.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        if label_img is not None and arr.shape[0] != label_img.shape[0]:
            raise AssertionError("#images should equal with #data points")
        if arr.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        os.makedirs(save_path, exist_ok=True)
        if metadata is not None:
            if not metadata_header:
                rows = [str(x) for x in metadata]
            else:
                if len(metadata_header) != len(metadata[0]):
                    raise AssertionError(
                        "len of header must be equal to the number of columns in metadata"
                    )
                rows = ["\t".join(str(e) for e in r) for r in [metadata_header, *metadata]]
            with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
                f.write(("\n".join(rows) + "\n").encode())
        if label_img is not None:
            imgs = _summary.make_np(label_img)
            nrow = int(math.ceil(imgs.shape[0] ** 0.5))
            chw = _summary._grid(imgs, ncols=nrow)
            square = np.zeros((chw.shape[2], chw.shape[2], 3))  # as torch's: nrow x nrow cells
            square[: chw.shape[1], :, :] = chw.transpose(1, 2, 0)
            pixels = np.uint8((square * 255).clip(0, 255))
            with open(os.path.join(save_path, "sprite.png"), "wb") as f:
                f.write(_summary._png(pixels))
        with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
            for row in arr:
                f.write(("\t".join(str(v.item()) for v in row) + "\n").encode())
        if self._projector_config is None:
            self._projector_config = ProjectorConfig()
        info = EmbeddingInfo()
        info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
        info.tensor_path = f"{subdir}/tensors.tsv"
        if metadata is not None:
            info.metadata_path = f"{subdir}/metadata.tsv"
        if label_img is not None:
            info.sprite.image_path = f"{subdir}/sprite.png"
            info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        self._projector_config.embeddings.extend([info])
        config = text_format.MessageToString(self._projector_config)
        path = os.path.join(self._get_file_writer().get_logdir(), "projector_config.pbtxt")
        with open(path, "wb") as f:
            f.write(config.encode())

    def flush(self) -> None:
        """Write every pending event to disk."""
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file; the writer can't be used after this."""
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = None
        self.all_writers = {}

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _figure_to_chw(figure: Any, close: bool) -> Any:
    """A matplotlib figure rendered to a CHW uint8 RGB array."""
    import matplotlib.pyplot as plt  # optional: only add_figure needs it (as in torch)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()  # type: ignore[no-untyped-call]
    w, h = canvas.get_width_height()
    buffer = canvas.buffer_rgba()  # type: ignore[no-untyped-call]
    rgba = np.frombuffer(buffer, dtype=np.uint8).reshape(h, w, 4)
    if close:
        plt.close(figure)
    return np.moveaxis(rgba[:, :, :3], 2, 0)


def _encode(rawstr: str) -> str:
    """A tag as a folder name (torch's ``SummaryWriter._encode``): ``%``, ``/`` and ``\\``
    escaped."""
    out = rawstr.replace("%", f"%{ord('%'):02x}")
    out = out.replace("/", f"%{ord('/'):02x}")
    return out.replace("\\", f"%{ord(chr(92)):02x}")
