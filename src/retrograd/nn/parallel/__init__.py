"""``retrograd.nn.parallel``: ``DistributedDataParallel`` (data parallelism over MPI ranks).

Loaded on first use (``retrograd.nn.parallel`` or ``from retrograd.nn.parallel import
...``), so ``import retrograd`` never loads the distributed package.

Example:
    >>> from retrograd.nn.parallel import DistributedDataParallel
    >>> DistributedDataParallel.__name__
    'DistributedDataParallel'
"""

from __future__ import annotations

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
