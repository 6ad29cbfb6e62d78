"""``retrograd.nn.parallel``: ``DistributedDataParallel`` (data parallelism over MPI ranks),
``DataParallel`` and ``data_parallel`` (PyTorch's behaviour without a GPU).

Loaded on first use (``retrograd.nn.parallel`` or ``from retrograd.nn.parallel import
...``), so ``import retrograd`` never loads the distributed package.

Example:
    >>> from retrograd.nn.parallel import DistributedDataParallel
    >>> DistributedDataParallel.__name__
    'DistributedDataParallel'
"""

from __future__ import annotations

from ..modules.data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
