"""TensorBoard logging: ``from retrograd.utils.tensorboard import SummaryWriter``.

What ``from torch.utils.tensorboard import SummaryWriter`` becomes under
``import retrograd as torch``. Needs the tensorboard package, an optional extra:
``pip install "retrograd[tensorboard]"``. See :class:`SummaryWriter`.

Example:
    >>> import tempfile
    >>> import retrograd as torch
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as writer:
    ...     writer.add_scalar("loss", 0.5, 0)
"""

from __future__ import annotations

try:
    import tensorboard
except ImportError as e:  # ModuleNotFoundError, or a broken install of its dependencies
    raise ImportError(
        "retrograd.utils.tensorboard needs the tensorboard package, which is not "
        f"installed ({e}). Install it with: pip install \"retrograd[tensorboard]\" "
        "(or pip install tensorboard).") from e

from tensorboard.summary.writer.record_writer import RecordWriter

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
