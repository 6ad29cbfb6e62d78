"""``F.pad`` in every mode PyTorch has (constant, reflect, replicate, circular), a module
of its own so that the functional modules that pad (local response norm) import it
downward.

Example:
    >>> import retrograd as torch
    >>> torch.nn.functional.pad(torch.ones(2), (1, 1))
    tensor([0., 1., 1., 0.])
"""

from __future__ import annotations

import numpy as np

from ..._core.hints import Shape
from ..._tensor.tensor import Tensor, _make
from ...ops.dispatch import apply
from ...ops.public import FP32, autocast_category
from ...ops.records import table as T

__all__ = ["pad"]


# Note [Autocast records] (ops/public.py): F.pad is an autocast op only where PyTorch
# runs it as reflection_pad / replication_pad (float32 ops)
def _pad_category(args, kwargs):
    """F.pad's autocast category for this call: float32 for reflect and replicate."""
    x = args[0] if args else kwargs.get("input")
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    nd = x.ndim if hasattr(x, "ndim") else 0
    if mode == "reflect" and nd in (2, 3, 4):  # reflection_pad1d/2d; 3d is not listed
        return FP32
    if mode == "replicate" and nd in (2, 3, 4, 5):  # replication_pad1d/2d/3d
        return FP32
    return None


@autocast_category(_pad_category)
def pad(input: Tensor, pad: Shape, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``.
    Modes: constant (negative pads crop), reflect, replicate, circular.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.pad(torch.tensor([[1., 2.]]), (1, 1))
        tensor([[0., 1., 2., 0.]])
        >>> torch.nn.functional.pad(torch.tensor([[[1., 2., 3.]]]), (2, 0), mode='reflect')
        tensor([[[3., 2., 1., 2., 3.]]])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    nd = input._data.ndim
    if k > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # last dim first
    if mode == "constant":
        v = 0.0 if value is None else value
        out = input
        if any(lo < 0 or hi < 0 for lo, hi in pairs):
            key = [slice(None)] * nd
            for i, (lo, hi) in enumerate(pairs):
                d = nd - 1 - i
                size = input._data.shape[d]
                key[d] = slice(max(-lo, 0), size - max(-hi, 0))
            out = out[tuple(key)]
            pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
        if all(lo == 0 and hi == 0 for lo, hi in pairs):
            return out if out is not input else input.clone()

        widths = [(0, 0)] * nd
        for i, (lo, hi) in enumerate(pairs):
            widths[nd - 1 - i] = (lo, hi)
        return apply(T.constant_pad, (out,), (tuple(widths), v))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if k > 3 or nd not in (k + 1, k + 2):  # PyTorch's reflection/replication pads: (N,) C, *spatial
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for i, (lo, hi) in enumerate(pairs):
        d = nd - 1 - i
        size = input._data.shape[d]
        pos = np.arange(-lo, size + hi)
        if mode == "reflect":
            if lo >= size or hi >= size:
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(input.shape)}")
            period = 2 * (size - 1) if size > 1 else 1
            m = np.mod(pos, period)
            idx = np.where(m >= size, period - m, m)
        elif mode == "replicate":
            idx = np.clip(pos, 0, size - 1)
        else:  # negative pads crop first; the rest wraps around what is left
            if lo > size or hi > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            start, n = max(-lo, 0), size - max(-lo, 0) - max(-hi, 0)
            idx = start + np.mod(np.arange(-max(lo, 0), n + max(hi, 0)), n)
        out = out.index_select(d, _make(idx.astype(np.int64)))
    return out
