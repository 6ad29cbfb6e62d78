"""``SummaryWriter``: PyTorch's TensorBoard logger for retrograd tensors.

Events go through the tensorboard package's own ``EventFileWriter`` (a background
thread, a queue of ``max_queue`` events, a flush every ``flush_secs``); the summaries
come from :mod:`retrograd.utils.tensorboard.summary`. Run ``tensorboard --logdir runs``
to look at them.

Example:
    >>> import tempfile
    >>> import retrograd as torch
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as writer:
    ...     w = torch.ones(3, requires_grad=True)
    ...     (w * 2).sum().backward()
    ...     writer.add_scalar("loss", 0.5, global_step=1)
    ...     writer.add_histogram("grad/w", w.grad, global_step=1)
"""

from __future__ import annotations

import os
import time

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as S

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` and ``Summary`` messages to one event file in ``log_dir``.

    Example:
        >>> import tempfile
        >>> from retrograd.utils.tensorboard import FileWriter
        >>> from retrograd.utils.tensorboard.summary import scalar
        >>> with tempfile.TemporaryDirectory() as d:
        ...     fw = FileWriter(d)
        ...     fw.add_summary(scalar("x", 1.0), global_step=0)
        ...     fw.close()
    """

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self) -> str:
        """The directory of the event file."""
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step=None, walltime: float | None = None) -> None:
        """Stamp ``event`` with ``walltime`` (default now) and ``step``, and queue it."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime: float | None = None) -> None:
        """Queue ``summary`` as an event at ``global_step``."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        """Write the queued events to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """Open a new event file in the same directory after ``close()``."""
        self.event_writer.reopen()


# PyTorch's SummaryWriter methods that retrograd does not provide, and what to use.
_NOT_PROVIDED = {
    "add_graph": "draw the backward graph with retrograd.viz.draw_graph(loss) instead "
                 "(DOT text, or SVG/PNG with Graphviz)",
    "add_onnx_graph": "retrograd does not export ONNX",
    "add_embedding": "log the vectors with add_histogram or save them with numpy",
    "add_video": "log frames with add_images",
    "add_audio": "save the samples with numpy or the wave module",
    "add_mesh": "save the vertices with numpy",
    "add_pr_curve": "log precision and recall with add_scalars",
    "add_pr_curve_raw": "log precision and recall with add_scalars",
    "add_custom_scalars": "group curves with add_scalars",
    "add_custom_scalars_multilinechart": "group curves with add_scalars",
    "add_custom_scalars_marginchart": "group curves with add_scalars",
    "add_image_with_boxes": "draw the boxes on the image (e.g. with matplotlib) and log it "
                            "with add_image or add_figure",
    "add_tensor": "log values with add_histogram, or one number with add_scalar",
}


class SummaryWriter:
    """Writes scalars, histograms, images, figures, text and hyperparameters for TensorBoard.

    ``log_dir`` defaults to ``runs/CURRENT_DATETIME_HOSTNAME`` followed by ``comment``.
    ``purge_step``: on a restart from step T, hide the events at steps >= T that an
    earlier (crashed) run wrote to the same ``log_dir``. ``max_queue``, ``flush_secs``:
    events are written after that many events or seconds, and on ``flush()``/``close()``.
    ``filename_suffix`` ends the event file's name. A writer is a context manager that
    closes on exit; a closed writer reopens (a new event file) when used again.

    Example:
        >>> import tempfile
        >>> import retrograd as torch
        >>> from retrograd.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d:
        ...     writer = SummaryWriter(d, filename_suffix=".demo")
        ...     for step in range(3):
        ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
        ...     writer.close()
        ...     [f.endswith(".demo") for f in os.listdir(d)]
        [True]
    """

    def __init__(self, log_dir: str | os.PathLike | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10,
                 flush_secs: float = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            import socket
            from datetime import datetime

            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.default_bins = S.default_bins()
        self.file_writer: FileWriter | None = None
        self.all_writers: dict | None = None
        self._get_file_writer()

    def __repr__(self) -> str:
        state = "closed" if self.all_writers is None else "open"
        return f"SummaryWriter(log_dir={self.log_dir!r}, {state})"

    def __getattr__(self, name: str):
        if name in _NOT_PROVIDED:
            raise NotImplementedError(
                f"SummaryWriter.{name} is not supported by retrograd: "
                f"{_NOT_PROVIDED[name]}.")
        raise AttributeError(f"'SummaryWriter' object has no attribute {name!r}")

    def _get_file_writer(self) -> FileWriter:
        """The writer of ``log_dir``, reopened after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard drops the events at steps >= purge_step written before a
                # SessionLog.START at that step.
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(
                    status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to.

        Example:
            >>> import tempfile
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.get_logdir() == d
            True
        """
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Log one number (a Python number or a one-element tensor) under ``tag``.

        Example:
            >>> import tempfile
            >>> import retrograd as torch
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_scalar("loss", torch.tensor(0.3, requires_grad=True), 0)
        """
        summary = S.scalar(tag, scalar_value, new_style=new_style,
                           double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict,
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Log several numbers on one chart: each key is written under ``main_tag`` to its
        own run directory ``log_dir/<main_tag>_<key>``.

        Example:
            >>> import tempfile
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_scalars("loss", {"train": 0.3, "val": 0.4}, 0)
            ...     sorted(os.path.relpath(k, d) for k in w.all_writers)
            ['.', 'loss_train', 'loss_val']
        """
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            sub = root + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(sub)
            if fw is None:
                fw = self.all_writers[sub] = FileWriter(sub, self.max_queue, self.flush_secs,
                                                        self.filename_suffix)
            fw.add_summary(S.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step: int | None = None,
                      bins="tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """Log the distribution of ``values`` (a tensor such as ``p.grad``, or an array).

        ``bins='tensorflow'`` (the default) uses TensorBoard's exponential buckets; any
        ``numpy.histogram`` bins (``'auto'``, ``'fd'``, a count, edges) work too.

        Example:
            >>> import tempfile
            >>> import retrograd as torch
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> lin = torch.nn.Linear(3, 2)
            >>> lin(torch.ones(1, 3)).sum().backward()
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     for name, p in lin.named_parameters():
            ...         w.add_histogram(f"grad/{name}", p.grad, global_step=0)
        """
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(S.histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step: int | None = None,
                          walltime: float | None = None) -> None:
        """Log a histogram from its statistics and buckets (right edges and counts).

        Example:
            >>> import tempfile
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_histogram_raw("h", 0, 2, 3, 3, 5, [0, 1, 2], [0, 2, 1], 0)
        """
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document. "
                             "Give one right edge per bucket count.")
        self._get_file_writer().add_summary(
            S.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                            bucket_counts), global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """Log an image: floats in [0, 1] or ``uint8``, shaped as ``dataformats`` says
        (``'CHW'``, ``'HWC'``, ``'HW'``; 1 or 3 channels).

        Example:
            >>> import tempfile
            >>> import retrograd as torch
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_image("digit", torch.rand(8, 8, 1), 0, dataformats="HWC")
        """
        self._get_file_writer().add_summary(S.image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """Log a batch of images as one grid (8 a row); ``dataformats`` ``'NCHW'``/``'NHWC'``.

        Example:
            >>> import tempfile
            >>> import retrograd as torch
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_images("batch", torch.rand(4, 1, 8, 8), 0)
        """
        self._get_file_writer().add_summary(S.image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_figure(self, tag: str, figure, global_step: int | None = None, close: bool = True,
                   walltime: float | None = None) -> None:
        """Log a matplotlib Figure (or a list of them) as an image; ``close`` closes it.

        Example:
            >>> import tempfile
            >>> from matplotlib.figure import Figure
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> fig = Figure(figsize=(2, 2)); _ = fig.subplots().plot([1, 3, 2])
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_figure("curve", fig, 0)
        """
        if isinstance(figure, list):
            self.add_image(tag, S.figure_to_image(figure, close), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, S.figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Log text (Markdown) under ``tag`` in TensorBoard's Text tab.

        Example:
            >>> import tempfile
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_text("notes", "first run, **lr 0.1**", 0)
        """
        self._get_file_writer().add_summary(S.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict,
                    hparam_domain_discrete: dict | None = None, run_name: str | None = None,
                    global_step: int | None = None) -> None:
        """Log a run's hyperparameters and final metrics for TensorBoard's HParams tab.

        They go to the run ``log_dir/<run_name>`` (default: the current time), with each
        metric also logged there as a scalar.

        Example:
            >>> import tempfile
            >>> from retrograd.utils.tensorboard import SummaryWriter
            >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
            ...     w.add_hparams({"lr": 0.1, "batch": 64}, {"hparam/accuracy": 0.9},
            ...                   run_name="lr0.1")
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, start, end = S.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as run:
            for s in (exp, start, end):
                run.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def flush(self) -> None:
        """Write every queued event to disk (TensorBoard then sees them)."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file; a later ``add_*`` opens a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()
