"""Tensor ``repr``/``str`` exactly as PyTorch 2.13 prints them, computed with NumPy.

The rules (all mirrored from PyTorch's behaviour):

* One formatter is chosen for the whole tensor from the values that will be
  shown (only the edge items when the tensor is summarized).  Integer and bool
  tensors are right-aligned to the widest ``str(value)``.
* Floating tensors look only at the non-zero finite values: if all of them are
  whole numbers the tensor is printed in *int mode* (``tensor([1., 2.])``);
  scientific notation is used when max/min > 1000, max > 1e8 or min < 1e-4
  (unless ``sci_mode`` forces it); otherwise fixed point with ``precision``
  decimals.  Every value is right-aligned to the widest one.
* More than ``threshold`` elements turns on summarization: each dimension longer
  than ``2 * edgeitems`` shows only its first and last ``edgeitems`` entries.
* Rows of a vector wrap at ``linewidth``; nested dimensions are joined with
  ``",\\n"`` repeated ``dim - 1`` times and indented one column per level.
* Suffixes (``size=``, ``dtype=``, ``grad_fn=``/``requires_grad=``) follow and
  move to their own line when they would overflow ``linewidth``.

Example:
    >>> import retrograd as torch
    >>> torch.tensor([1.0, 2.5])
    tensor([1.0000, 2.5000])
    >>> torch.tensor([[1, 2], [3, 40]], dtype=torch.int32)
    tensor([[ 1,  2],
            [ 3, 40]], dtype=torch.int32)
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core.meta import is_meta_array

__all__ = ["PRINT_OPTS", "get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]

_PREFIX = "tensor("


@dataclasses.dataclass
class _PrintOptions:
    """The module-wide print settings (same fields and defaults as PyTorch)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors (PyTorch's ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which the output is summarized (default 1000).
        edgeitems: items kept at each end of a summarized dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``: a preset applied first,
            which the other arguments then override.
        sci_mode: ``True``/``False`` forces or forbids scientific notation; ``None``
            (also the value every call without it sets) chooses automatically.

    Example:
        >>> import retrograd as torch
        >>> torch.set_printoptions(precision=2)
        >>> torch.tensor([1.12345])
        tensor([1.12])
        >>> torch.set_printoptions(threshold=5)
        >>> torch.arange(10)
        tensor([0, 1, 2,  ..., 7, 8, 9])
        >>> torch.set_printoptions(profile="default")
        >>> torch.tensor([1.12345])
        tensor([1.1235])
    """
    if profile is not None:
        presets = {
            "default": (4, 1000, 3, 80),
            "short": (2, 1000, 2, 80),
            "full": (4, math.inf, 3, 80),
        }
        if profile in presets:
            (PRINT_OPTS.precision, PRINT_OPTS.threshold,
             PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # As in PyTorch, sci_mode is always assigned, so omitting it resets it to automatic.
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict usable as ``set_printoptions(**opts)``.

    Example:
        >>> import retrograd as torch
        >>> torch.get_printoptions()
        {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (same arguments as ``set_printoptions``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd._tensor.printing import printoptions
        >>> with printoptions(precision=1):
        ...     print(torch.tensor([0.25, 1.5]))
        tensor([0.2, 1.5])
        >>> torch.tensor([0.25, 1.5])
        tensor([0.2500, 1.5000])
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------
# Element formatting


def _is_floating(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def _to_python(a: np.ndarray, floating: bool) -> list:
    """Elements of a 1-D array as Python numbers (floats widened exactly to double)."""
    if floating:
        return a.astype(np.float64).tolist()
    return a.tolist()


class _Formatter:
    """Pick the mode and width shared by every element printed for one tensor."""

    __slots__ = ("floating", "int_mode", "max_width", "precision", "sci_mode")

    def __init__(self, shown: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.precision = PRINT_OPTS.precision

        if not floating:
            for v in shown.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return

        vals = shown.astype(np.float64)
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            return
        mags = np.abs(vals)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)

        p = self.precision
        pyvals = vals.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in pyvals)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") for v in pyvals) + 1  # room for the trailing "."
        else:
            width = max(len(f"{v:.{p}f}") for v in pyvals)
        self.max_width = max(self.max_width, width)

    def format(self, v: float) -> str:
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{self.precision}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if math.isfinite(v):
                    s += "."
            else:
                s = f"{v:.{self.precision}f}"
        else:
            s = str(v)
        return s.rjust(self.max_width)


# ---------------------------------------------------------------------------
# Layout


def _summarized_values(a: np.ndarray) -> np.ndarray:
    """The flattened elements a summarized print shows (PyTorch's ``get_summarized_data``)."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a.reshape(1)
    if a.ndim == 1:
        if a.shape[0] > 2 * e:
            # a[-0:] is the whole array, exactly like PyTorch's slicing when edgeitems == 0.
            return np.concatenate((a[:e], a[-e:]))
        return a
    if not e:
        return a.reshape(-1)[:0]
    n = a.shape[0]
    rows = list(range(e)) + list(range(n - e, n)) if n > 2 * e else range(n)
    return np.concatenate([_summarized_values(a[i]) for i in rows])


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    e = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    if summarize and not e:
        items = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        items = ([fmt.format(v) for v in _to_python(a[:e], fmt.floating)] + [" ..."]
                 + [fmt.format(v) for v in _to_python(a[-e:], fmt.floating)])
    else:
        items = [fmt.format(v) for v in _to_python(a, fmt.floating)]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(_to_python(a.reshape(1), fmt.floating)[0])
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        parts = ([_nested_str(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                 + [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(n - e, n)])
    else:
        parts = [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _body_str(a: np.ndarray, indent: int) -> str:
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized_values(a) if summarize else a.reshape(-1)
    fmt = _Formatter(shown, _is_floating(a.dtype))
    return _nested_str(a, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    out = [text]
    # Reproduces PyTorch's count (which is two more than the last line's length).
    last_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def _dtype_name(dt: np.dtype, dtypes: Any) -> str:
    known = dtypes.FROM_NP.get(dt)
    return repr(known) if known is not None else "torch." + dt.name


def _grad_fn_name(grad_fn: Any) -> str:
    name = getattr(grad_fn, "name", None)
    # PyTorch prints the node's class name: CopySlices, not torch::autograd::CopySlices
    return (name() if callable(name) else type(grad_fn).__name__).rpartition('::')[2]


def _grad_suffixes(t: Any) -> list:
    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        return [f"grad_fn=<{_grad_fn_name(grad_fn)}>"]
    return ["requires_grad=True"] if getattr(t, "_rg", False) else []


def _meta_repr(t: Any, D) -> str:
    """PyTorch's repr of a meta tensor: ``tensor(..., device='meta', size=(2, 3))``."""
    a = t._data
    suffixes = ["device='meta'", "size=" + str(a.shape)]
    if a.dtype != D.DEFAULTS.float.np:  # nothing shows the dtype, so int64 is named
        suffixes.append("dtype=" + _dtype_name(a.dtype, D))
    text = _add_suffixes(_PREFIX + "...", suffixes + _grad_suffixes(t), len(_PREFIX))
    if t.__class__.__name__ == "Parameter":
        text = "Parameter containing:\n" + text
    return text


def tensor_repr(t: Any) -> str:
    """Return ``repr(t)`` for a retrograd tensor, character for character as PyTorch.

    ``t`` needs ``_data`` (the ndarray), ``_rg`` (requires grad) and ``grad_fn``;
    a class named ``Parameter`` gets PyTorch's ``Parameter containing:`` header.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._tensor.printing import tensor_repr
        >>> print(tensor_repr(torch.tensor([[1e-5, 1.0], [2.0, 1e3]])))
        tensor([[1.0000e-05, 1.0000e+00],
                [2.0000e+00, 1.0000e+03]])
        >>> print(tensor_repr(torch.tensor([4.0], dtype=torch.float64, requires_grad=True)))
        tensor([4.], dtype=torch.float64, requires_grad=True)
        >>> print(tensor_repr(torch.zeros(0, 3, dtype=torch.int64)))
        tensor([], size=(0, 3), dtype=torch.int64)
    """
    from .._core import dtype as D

    if is_meta_array(t._data):
        return _meta_repr(t, D)
    a = np.asarray(t._data)
    default_float = D.DEFAULTS.float.np
    indent = len(_PREFIX)
    suffixes: list[str] = []

    if a.size == 0:
        # Nothing shows the dtype, so even int64 is named; the shape too unless it is (0,).
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(int(s) for s in a.shape)))
        if a.dtype != default_float:
            suffixes.append("dtype=" + _dtype_name(a.dtype, D))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(int(s) for s in a.shape)))
        if a.dtype not in (default_float, np.dtype(np.int64), np.dtype(np.bool_)):
            suffixes.append("dtype=" + _dtype_name(a.dtype, D))
        body = _body_str(a, indent)

    text = _add_suffixes(_PREFIX + body, suffixes + _grad_suffixes(t), indent)
    if t.__class__.__name__ == "Parameter":
        text = "Parameter containing:\n" + text
    return text
