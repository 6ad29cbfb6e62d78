"""``nn.LinearCrossEntropyOptions``: how ``F.linear_cross_entropy`` splits the batch into
chunks (PyTorch 2.13's dataclass: fields, validation and chunk-size rules).

Example:
    >>> import retrograd as torch
    >>> opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    >>> opts._adjust(num_batches=10, in_features=8, num_classes=32,
    ...              dtype=torch.float32).batch_chunk_size
    4
"""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

from ..._core import dtype as D

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# PyTorch's picks for the "auto" sentinels by (device type, input dtype)
_AUTO_DEFAULTS = {
    ("cpu", D.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", D.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_DTYPES = (D.float16, D.bfloat16, D.float32, D.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Options of the chunked ``linear_cross_entropy``: ``batch_chunk_size`` rows per
    chunk (None: one chunk) or a ``chunking_method`` (``"auto"``, ``"aspect_ratio"``,
    ``"aspect_ratio:N"``, None), the accumulation policy ``acc_policy`` and dtype
    ``acc_dtype`` (None: float32 for float16/bfloat16 input under "auto", else the input's).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LinearCrossEntropyOptions(acc_policy="fast")
        Traceback (most recent call last):
        ValueError: invalid acc_policy: 'fast'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _chunk_size(method: str, num_batches: int, in_features: int, num_classes: int) -> int:
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // in_features))
        chunk = 1 << (target - 1).bit_length()  # the next power of 2 >= target
        return min(chunk // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype,
                device=None) -> LinearCrossEntropyOptions:
        """The options with "auto" and None resolved for one call (PyTorch's rules)."""
        acc_policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if acc_policy == "auto" or method == "auto":
            ap, cm = _AUTO_DEFAULTS.get(("cpu", dtype), _AUTO_FALLBACK)
            acc_policy = ap if acc_policy == "auto" else acc_policy
            method = cm if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size,
                                                                       num_batches)
        if method is not None:
            size = self._chunk_size(method, num_batches, in_features, num_classes)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and "
                                 f"chunking_method ('{method}') give different chunk sizes "
                                 f"({self.batch_chunk_size} vs {size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            low = dtype in (D.float16, D.bfloat16) and self.acc_policy == "auto"
            acc_dtype = D.float32 if low else dtype
        return dataclasses.replace(self, batch_chunk_size=max(size, 1), chunking_method=None,
                                   acc_policy=acc_policy, acc_dtype=acc_dtype)
