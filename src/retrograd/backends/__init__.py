"""``torch.backends``: the flags of PyTorch's accelerator and CPU libraries (cuDNN, CUDA
matmul, MPS, oneDNN, OpenMP, opt-einsum). retrograd runs every op with NumPy on the CPU,
so the flags are kept and read back but change nothing (Note [Backend flags]); the
``is_available()`` answers are those of PyTorch's CPU build.

Example:
    >>> import retrograd as torch
    >>> torch.backends.cudnn.benchmark = True  # the first line of many training scripts
    >>> torch.backends.cudnn.benchmark, torch.backends.mps.is_available()
    (True, False)
    >>> torch.backends.cudnn.benchmark = False
"""

from __future__ import annotations

from . import cuda, cudnn, mkldnn, mps, openmp, opt_einsum

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp", "opt_einsum"]
