"""Which vector kernels PyTorch's CPU build picks on this machine: ATen's CPU capability
and the instruction set oneDNN (mkldnn) runs at.

Note [CPU capability]
A few of PyTorch's CPU results depend on the kernel picked for the processor, by two
dispatchers that decide independently:

* ATen's (``compute_cpu_capability``): ``ATEN_CPU_CAPABILITY`` if set, else AVX512 when
  the CPU has avx512vl, avx512bw, avx512dq and fma, else AVX2 when it has avx2 and fma,
  else DEFAULT. Its DEFAULT kernels are compiled without fused multiply-adds and call the
  C library's scalar ``logf``/``cosf``/``sinf``, so linspace, arange and float32 randn
  round differently there (retrograd/_random/rng.py, _functions/creation.py follow it).
* oneDNN's (``dnnl::impl::cpu::x64::get_max_cpu_isa``): the best ISA the CPU has, capped
  by ``ONEDNN_MAX_CPU_ISA`` (or the older ``DNNL_MAX_CPU_ISA``). PyTorch sends a float32
  gelu of two or more contiguous elements to oneDNN, bfloat16 too when the CPU has
  avx512bw/vl/dq (``mkldnn_bf16_device_check``), float16 when it has avx512_fp16 or
  amx_fp16 (``mkldnn_fp16_device_check``); oneDNN's AVX-512 gelu keeps the sign of a zero
  result and gives nan at +inf, its AVX2/SSE4.1 one gives +0.0 and +inf for float32
  (measured with torch 2.13 under every ``ONEDNN_MAX_CPU_ISA`` value; ops/records/nn.py).

The flags are read once, on first use, from /proc/cpuinfo (Linux x86-64). Elsewhere
(aarch64, macOS) no x86 flag is found: ATen's capability is DEFAULT and oneDNN's ISA is
``None`` (PyTorch's aarch64 oneDNN runs on Arm's Compute Library, whose special values
retrograd does not model).

Example:
    >>> from retrograd._core.cpu_capability import cpu_capability, onednn_isa
    >>> cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    True
    >>> onednn_isa() in ONEDNN_ISAS + (None,)
    True
"""

from __future__ import annotations

import os

_CACHE: dict = {}

# oneDNN's x86-64 ISAs in its order, each with the /proc/cpuinfo flags it needs beyond the
# ISA it extends (dnnl's cpu_isa_traits; the AVX-512 ones extend AVX2, not AVX2_VNNI)
ONEDNN_ISAS = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE",
               "AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX",
               "AVX512_CORE_AMX_FP16")
_ISA_NEEDS = {
    "SSE41": (None, {"sse4_1"}),
    "AVX": ("SSE41", {"avx"}),
    "AVX2": ("AVX", {"avx2"}),
    "AVX2_VNNI": ("AVX2", {"avx_vnni"}),
    "AVX2_VNNI_2": ("AVX2_VNNI", {"avx_vnni_int8", "avx_ne_convert"}),
    "AVX512_CORE": ("AVX2", {"avx512f", "avx512bw", "avx512vl", "avx512dq"}),
    "AVX512_CORE_VNNI": ("AVX512_CORE", {"avx512_vnni"}),
    "AVX512_CORE_BF16": ("AVX512_CORE_VNNI", {"avx512_bf16"}),
    "AVX512_CORE_FP16": ("AVX512_CORE_BF16", {"avx512_fp16"}),
    "AVX512_CORE_AMX": ("AVX512_CORE_FP16", {"amx_tile", "amx_int8", "amx_bf16"}),
    "AVX512_CORE_AMX_FP16": ("AVX512_CORE_AMX", {"amx_fp16"}),
}


def cpu_flags() -> frozenset:
    """The CPU's feature flags as /proc/cpuinfo lists them (empty where there is none)."""
    if "flags" not in _CACHE:
        flags: frozenset = frozenset()
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("flags"):
                        flags = frozenset(line.split(":", 1)[1].split())
                        break
        except OSError:
            pass
        _CACHE["flags"] = flags
    return _CACHE["flags"]


def cpu_capability() -> str:
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``, as PyTorch's CPU dispatcher decides
    (Note [CPU capability])."""
    if "aten" not in _CACHE:
        env = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
        f = cpu_flags()
        if env in ("avx512", "avx2", "default"):
            cap = env.upper()
        elif {"avx512vl", "avx512bw", "avx512dq", "fma"} <= f:
            cap = "AVX512"
        elif {"avx2", "fma"} <= f:
            cap = "AVX2"
        else:
            cap = "DEFAULT"
        _CACHE["aten"] = cap
    return _CACHE["aten"]


def _has_isa(isa: str | None, flags: frozenset) -> bool:
    while isa is not None:
        base, need = _ISA_NEEDS[isa]
        if not need <= flags:
            return False
        isa = base
    return True


def onednn_isa() -> str | None:
    """The instruction set oneDNN runs at here: the CPU's best, capped by
    ``ONEDNN_MAX_CPU_ISA``/``DNNL_MAX_CPU_ISA``; ``None`` off x86-64 (Note [CPU capability]).
    """
    if "onednn" not in _CACHE:
        cap = (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA")
               or "").upper()
        top = ONEDNN_ISAS.index(cap) if cap in ONEDNN_ISAS else len(ONEDNN_ISAS) - 1
        usable = [isa for isa in ONEDNN_ISAS[:top + 1] if _has_isa(isa, cpu_flags())]
        _CACHE["onednn"] = usable[-1] if usable else None
    return _CACHE["onednn"]


def onednn_at_least(isa: str) -> bool:
    """Whether oneDNN runs at ``isa`` or better here.

    Example:
        >>> from retrograd._core.cpu_capability import onednn_at_least
        >>> onednn_at_least("SSE41") in (True, False)
        True
    """
    cur = onednn_isa()
    return cur is not None and ONEDNN_ISAS.index(cur) >= ONEDNN_ISAS.index(isa)


def onednn_takes(dtype_name: str) -> bool:
    """Whether PyTorch's oneDNN device checks (ideep's ``has_bf16_type_support`` and
    ``has_fp16_type_support``, which read oneDNN's capped ISA) admit this dtype here:
    float32 on any x86-64, bfloat16 from AVX512_CORE, float16 from AVX512_CORE_FP16 (both
    also on AVX2_VNNI_2).

    Example:
        >>> from retrograd._core.cpu_capability import onednn_takes
        >>> onednn_takes("int64")
        False
    """
    isa = onednn_isa()
    if isa is None:
        return False
    if dtype_name == "float32":
        return True
    least = {"bfloat16": "AVX512_CORE", "float16": "AVX512_CORE_FP16"}.get(dtype_name)
    return least is not None and (onednn_at_least(least) or isa == "AVX2_VNNI_2")
