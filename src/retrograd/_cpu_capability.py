"""Which vector kernels PyTorch's CPU build picks on this machine (its CPU capability).

Note [CPU capability]
A few of PyTorch's CPU results depend on the kernel its dispatcher picks for the
processor (aten's ``compute_cpu_capability``): the AVX512 kernels compute some special
values differently from the AVX2 ones (gelu's erf at +inf is nan in the AVX512 float
kernel, inf in the AVX2 one), and bfloat16 convolutions go to oneDNN only where the CPU
has AVX512 (elsewhere to the portable slow_conv kernels). retrograd follows PyTorch's
rule: ``ATEN_CPU_CAPABILITY`` if set, else AVX512 when the CPU has avx512vl, avx512bw,
avx512dq and fma, else AVX2 when it has avx2 and fma, else DEFAULT. The flags are read
once, on first use, from /proc/cpuinfo (Linux); elsewhere DEFAULT.

Example:
    >>> from retrograd._cpu_capability import cpu_capability
    >>> cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    True
"""

from __future__ import annotations

import os

_CACHE: list = []


def _flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_capability() -> str:
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``, as PyTorch's CPU dispatcher decides
    (Note [CPU capability])."""
    if _CACHE:
        return _CACHE[0]
    env = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if env in ("avx512", "avx2", "default"):
        cap = env.upper()
    else:
        f = _flags()
        if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= f:
            cap = "AVX512"
        elif {"avx2", "fma"} <= f:
            cap = "AVX2"
        else:
            cap = "DEFAULT"
    _CACHE.append(cap)
    return cap
