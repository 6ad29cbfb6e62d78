"""Summaries for TensorBoard: retrograd tensors and NumPy arrays turned into ``Summary``
messages of the tensorboard package (the messages come from ``tensorboard.compat.proto``
and the plugins' own metadata helpers; no protobuf is defined or encoded here).

Each builder returns a ``Summary`` that ``SummaryWriter`` wraps in an event. The
semantics follow ``torch.utils.tensorboard.summary``: scalars as ``simple_value``,
histograms on explicit bucket edges trimmed to the values' support, images as PNG
in HWC order scaled by 255 unless they are ``uint8``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.utils.tensorboard.summary import scalar
    >>> scalar("loss", torch.tensor(0.25)).value[0].simple_value
    0.25
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.plugins.text import metadata as text_metadata
from tensorboard.util import tensor_util

from ..._core.dtype import bfloat16
from ..._tensor.tensor import Tensor

__all__ = ["make_np", "default_bins", "scalar", "histogram", "histogram_raw",
           "make_histogram", "to_hwc", "image", "figure_to_image", "text", "hparams"]


# Note [Reading tensors for TensorBoard]
# A tensor is read through its NumPy array, never through ``detach()``: logging a
# value must not leave a "cut" record behind for ``explain_grad`` to report, and a
# tensor that requires grad (a parameter, a loss) logs as it is, as in PyTorch.
# bfloat16 is widened to float32 (PyTorch goes through float16, which turns values
# above 65504 into inf; float32 holds every bfloat16 value exactly).

def make_np(x) -> np.ndarray:
    """A NumPy array of a tensor, an array or a Python number (numbers become shape (1,)).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.tensorboard.summary import make_np
        >>> make_np(torch.ones(2, requires_grad=True)), make_np(3)
        (array([1., 1.], dtype=float32), array([3]))
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        a = x._data  # Note [Reading tensors for TensorBoard]
        return a.astype(np.float32) if x.dtype == bfloat16 else np.asarray(a)
    raise NotImplementedError(
        f"Got {type(x)}, but numpy array or torch tensor are expected. Pass a "
        "retrograd tensor, a NumPy array or a Python number (e.g. numpy.asarray(values)).")


def default_bins() -> list:
    """PyTorch's ``bins='tensorflow'`` edges: ±1e-12·1.1^k up to 1e20, and 0.

    Example:
        >>> from retrograd.utils.tensorboard.summary import default_bins
        >>> b = default_bins()
        >>> len(b), b[len(b) // 2], b[len(b) // 2 + 1]
        (1549, 0, 1e-12)
    """
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-p for p in reversed(pos)] + [0] + pos


def scalar(tag: str, value, new_style: bool = False,
           double_precision: bool = False) -> Summary:
    """A one-value summary; ``new_style`` stores it as a tensor (``scalars`` plugin).

    Example:
        >>> from retrograd.utils.tensorboard.summary import scalar
        >>> scalar("acc", 0.5, new_style=True).value[0].tensor.float_val
        [0.5]
    """
    a = make_np(value).squeeze()
    if a.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {a.size} "
            f"and {a.ndim} dimensions. Log one number per tag (e.g. loss.item() or "
            "t.mean()), or use add_histogram for many values.")
    v = float(a)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    proto = (TensorProto(double_val=[v], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[v], dtype="DT_FLOAT"))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def histogram_raw(tag: str, min, max, num, sum, sum_squares, bucket_limits,
                  bucket_counts) -> Summary:
    """A histogram summary from precomputed statistics and buckets.

    ``bucket_limits[i]`` is the right edge of bucket ``i``; ``bucket_counts[i]`` its count.

    Example:
        >>> from retrograd.utils.tensorboard.summary import histogram_raw
        >>> h = histogram_raw("h", 0, 2, 3, 3, 5, [0, 1, 2], [0, 2, 1]).value[0].histo
        >>> list(h.bucket), h.num
        ([0.0, 2.0, 1.0], 3.0)
    """
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def make_histogram(values: np.ndarray, bins, max_bins: int | None = None) -> HistogramProto:
    """Bucket ``values`` on ``bins`` (edges, or a NumPy rule such as ``'auto'``).

    As TensorBoard stores only right edges, the buckets are trimmed to the values'
    support with one empty bucket kept on the left. ``max_bins`` merges neighbouring
    buckets until at most that many remain.

    Example:
        >>> import numpy as np
        >>> from retrograd.utils.tensorboard.summary import make_histogram
        >>> h = make_histogram(np.array([0.5, 1.5, 1.6]), bins=[0, 1, 2, 3])
        >>> list(h.bucket_limit), list(h.bucket)
        ([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])
    """
    values = np.asarray(values, dtype=float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element. add_histogram needs at least one value.")
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
        edges = np.append(edges[:-1:group], edges[-1])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError(
            f"The histogram is empty: none of the values lies within the bins "
            f"[{edges[0]:g}, {edges[-1]:g}] (values range over [{np.nanmin(values):g}, "
            f"{np.nanmax(values):g}]). Pass bins that cover them, e.g. bins='auto'.")
    first, last = int(nonzero[0]), int(nonzero[-1])
    if first > 0:
        kept, limits = counts[first - 1: last + 1], edges[first: last + 2]
    else:
        kept, limits = np.concatenate([[0], counts[: last + 1]]), edges[: last + 2]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=kept.tolist())


def histogram(tag: str, values, bins, max_bins: int | None = None) -> Summary:
    """A histogram summary of ``values`` (a tensor, e.g. ``p.grad``, or an array).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.tensorboard.summary import default_bins, histogram
        >>> h = histogram("w", torch.tensor([1.0, 2.0, 2.0]), default_bins()).value[0].histo
        >>> h.num, h.sum, sum(h.bucket)
        (3.0, 5.0, 3.0)
    """
    return Summary(value=[Summary.Value(tag=tag, histo=make_histogram(
        make_np(values).astype(float), bins, max_bins))])


# --------------------------------------------------------------------------------------
# images

def _grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    """A batch (N, C, H, W) laid out row by row on one (3, rows*H, cols*W) canvas."""
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, axis=1)
    if nchw.shape[1] != 3:
        raise ValueError(f"a batch of images needs 1 or 3 channels, got {nchw.shape[1]} "
                         f"(shape {tuple(nchw.shape)} read as NCHW)")
    n, _, h, w = nchw.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    canvas = np.zeros((3, h * rows, w * cols), dtype=nchw.dtype)
    for i in range(n):
        r, c = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = nchw[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image array in ``dataformats`` (NCHW, NHWC, CHW, HWC, HW, ...) as HWC.

    A batch is laid out on a grid, 8 images a row; one channel is repeated to three.

    Example:
        >>> import numpy as np
        >>> from retrograd.utils.tensorboard.summary import to_hwc
        >>> to_hwc(np.zeros((2, 1, 4, 5)), "NCHW").shape, to_hwc(np.zeros((4, 5)), "HW").shape
        ((4, 10, 3), (4, 5, 3))
    """
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or set(fmt) - set("NCHW"):
        raise ValueError(f"dataformats {dataformats!r} is not a format of distinct letters "
                         "from N, C, H, W (e.g. 'CHW', 'HWC', 'NCHW', 'HW')")
    if array.ndim != len(fmt):
        raise ValueError(
            f"size of input tensor and input format are different. tensor shape: "
            f"{tuple(array.shape)}, input_format: {dataformats}. Pass the dataformats "
            "that matches the image (e.g. dataformats='HWC' for height x width x colour).")
    if len(fmt) == 4:
        return _grid(array.transpose([fmt.index(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.index(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        return np.stack([array.transpose([fmt.index(c) for c in "HW"])] * 3, axis=2)
    raise ValueError(f"dataformats {dataformats!r} needs 2 to 4 letters")


def image(tag: str, img, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """A PNG image summary; floats are read as [0, 1], ``uint8`` as [0, 255].

    Example:
        >>> import numpy as np
        >>> from retrograd.utils.tensorboard.summary import image
        >>> im = image("x", np.ones((3, 4, 5)), dataformats="CHW").value[0].image
        >>> im.height, im.width, im.colorspace
        (4, 5, 3)
    """
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("add_image needs the pillow package: pip install pillow (it "
                          "comes with pip install \"retrograd[tensorboard]\").") from None
    a = to_hwc(make_np(img), dataformats)
    scale = 1 if a.dtype == np.uint8 else 255
    a = (a.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = a.shape
    picture = Image.fromarray(a)
    picture = picture.resize((int(w * rescale), int(h * rescale)), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    picture.save(buf, format="PNG")
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue()))])


def figure_to_image(figures, close: bool = True) -> np.ndarray:
    """Render a matplotlib Figure (CHW, uint8 RGB) or a list of them (NCHW).

    Example:
        >>> from matplotlib.figure import Figure
        >>> from retrograd.utils.tensorboard.summary import figure_to_image
        >>> figure_to_image(Figure(figsize=(2, 1), dpi=50)).shape
        (3, 50, 100)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(fig) -> np.ndarray:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if close:
            import matplotlib.pyplot as plt

            plt.close(fig)
        return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))

    if isinstance(figures, Sequence):
        return np.stack([render(f) for f in figures])
    return render(figures)


# --------------------------------------------------------------------------------------
# text and hyperparameters

def text(tag: str, text_string: str) -> Summary:
    """A text summary (Markdown in TensorBoard's Text tab), under ``tag + '/text_summary'``.

    Example:
        >>> from retrograd.utils.tensorboard.summary import text
        >>> v = text("notes", "lr *0.1*").value[0]
        >>> v.tag, v.tensor.string_val[0]
        ('notes/text_summary', b'lr *0.1*')
    """
    meta = text_metadata.create_summary_metadata(display_name="", description="")
    proto = tensor_util.make_tensor_proto([text_string.encode("utf-8")], dtype="string")
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                        tensor=proto)])


# Note [Boolean hyperparameters]
# torch.utils.tensorboard tests ``isinstance(v, (int, float))`` before ``bool``, so it
# logs True as the number 1.0. We test bool first, as tensorboard's own hparams API
# does, so a flag shows as true/false and can be filtered as a boolean.

def hparams(hparam_dict: dict, metric_dict: dict,
            hparam_domain_discrete: dict | None = None) -> tuple:
    """The experiment, session-start and session-end summaries of the HParams plugin.

    Values may be ``bool``, ``int``, ``float``, ``str``, a one-element tensor or ``None``
    (skipped); ``hparam_domain_discrete`` lists the values a hyperparameter can take.

    Example:
        >>> from retrograd.utils.tensorboard.summary import hparams
        >>> exp, start, end = hparams({"lr": 0.1, "opt": "adam"}, {"hp/loss": 0.5})
        >>> start.value[0].tag
        '_hparams_/session_start_info'
    """
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
    from tensorboard.plugins.hparams import metadata as hp_metadata

    for name, d in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(d, dict):
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    for k, v in discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        if isinstance(v, bool):  # Note [Boolean hyperparameters]
            start.hparams[k].bool_value = v
            kind, field = "DATA_TYPE_BOOL", "bool_value"
        elif isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, field = "DATA_TYPE_STRING", "string_value"
        else:
            raise ValueError(f"value should be one of int, float, str, bool, or torch.Tensor; "
                             f"hparam_dict[{k!r}] is a {type(v).__name__} (log str(value) "
                             "for lists and other objects)")
        domain = None
        if k in discrete:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                  for d in discrete[k]])
        infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(kind),
                                        domain_discrete=domain))
    experiment = api_pb2.Experiment(
        hparam_infos=infos,
        metric_infos=[api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))

    def summary(tag: str, data) -> Summary:
        meta = hp_metadata.create_summary_metadata(data)
        return Summary(value=[Summary.Value(tag=tag, metadata=meta,
                                            tensor=hp_metadata.NULL_TENSOR)])

    return (summary(hp_metadata.EXPERIMENT_TAG,
                    plugin_data_pb2.HParamsPluginData(experiment=experiment)),
            summary(hp_metadata.SESSION_START_INFO_TAG,
                    plugin_data_pb2.HParamsPluginData(session_start_info=start)),
            summary(hp_metadata.SESSION_END_INFO_TAG,
                    plugin_data_pb2.HParamsPluginData(session_end_info=end)))

