"""``SummaryWriter``: TensorBoard event files (``torch.utils.tensorboard.writer``)."""

from __future__ import annotations

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
