"""Write docs/coverage.md: which public names of PyTorch's modules retrograd provides.

The mkdocs build (``hooks:`` in mkdocs.yml) renders the page from the current code when
PyTorch is importable, and from the committed file otherwise; ``python
docs/gen_coverage.py`` rewrites the committed file.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re

MODULES = [
    ("torch", "retrograd"),
    ("torch.Tensor", "retrograd.Tensor"),
    ("torch.autograd", "retrograd.autograd"),
    ("torch.nn", "retrograd.nn"),
    ("torch.nn.functional", "retrograd.nn.functional"),
    ("torch.nn.init", "retrograd.nn.init"),
    ("torch.nn.utils", "retrograd.nn.utils"),
    ("torch.optim", "retrograd.optim"),
    ("torch.optim.lr_scheduler", "retrograd.optim.lr_scheduler"),
    ("torch.utils.data", "retrograd.utils.data"),
    ("torch.utils.checkpoint", "retrograd.utils.checkpoint"),
    ("torch.amp", "retrograd.amp"),
    ("torch.linalg", "retrograd.linalg"),
    ("torch.func", "retrograd.func"),
    ("torch.special", "retrograd.special"),
    ("torch.distributions", "retrograd.distributions"),
    ("torch.testing", "retrograd.testing"),
    ("torch.jit", "retrograd.jit"),
]

# Note [Coverage exclusions]
# The percentages count PyTorch's public CPU names that a NumPy autograd can mean, leaving
# out five families (issue 16), each with the reason it has no counterpart here:
#
# * devices: names of accelerators and their libraries (CUDA, cuDNN, MIOpen, oneDNN/mkldnn,
#   MPS, XLA, IPU, XPU, MTIA, Vulkan, FBGEMM): retrograd runs on the CPU through NumPy only.
# * quantization: quantized dtypes and kernels (``q*``, ``quantize*``, ``quint*``,
#   ``qint*``, ``fake_quantize*``, ``dequantize``): NumPy has no quantized arrays.
# * sparse: sparse layouts and their kernels (``sparse_*``, ``spmm``, ``smm``, ``hspmm``,
#   ``*_indices_copy``...): every retrograd tensor is a dense strided array.
# * TorchScript internals: the IR and compiler classes (``ScriptModule``, ``Graph``,
#   ``*Type``, ``Argument``, ``parse_ir``, ``import_ir_module``, ``fork``/``wait``...):
#   retrograd has no TorchScript; ``torch.jit`` is a thin compatibility layer.
# * complex-only: complex dtypes and the functions that need them (``complex*``,
#   ``view_as_complex``, ``polar``, ``real``, ``imag``, ``angle``...): retrograd's dtypes
#   are real.
#
# Each family is an explicit list of names and name patterns (below); a name that matches
# is left out of both counts and listed under its family on the page.
_DEVICE_WORDS = ("cuda", "cudnn", "miopen", "mkldnn", "mps", "xla", "ipu", "xpu", "mtia",
                 "vulkan", "fbgemm")
EXCLUSIONS = {
    "devices": {
        "reason": "accelerator back ends and their libraries; retrograd runs on the CPU "
                  "through NumPy",
        "words": _DEVICE_WORDS, "names": (), "patterns": (),
    },
    "quantization": {
        "reason": "quantized dtypes and kernels; NumPy has no quantized arrays",
        "words": ("quantize", "quantized", "dequantize", "quantization", "quantizable",
                  "quant", "qparams"),
        "names": ("qscheme", "int_repr", "per_tensor_affine", "per_channel_affine",
                  "per_tensor_symmetric", "per_channel_symmetric",
                  "per_channel_affine_float_qparams"),
        "patterns": (r"q_.*", r"qint.*", r"quint.*", r"QU?Int.*", r"fake_quantize.*"),
    },
    "sparse": {
        "reason": "sparse layouts and their kernels; every retrograd tensor is dense",
        "words": ("sparse",),
        "names": ("spmm", "hspmm", "smm", "dsmm", "hsmm", "saddmm", "sspaddmm",
                  "values_copy", "coalesce", "is_coalesced", "indices", "values",
                  "crow_indices", "col_indices", "ccol_indices", "row_indices", "dense_dim",
                  "to_dense"),
        "patterns": (r".*indices_copy",),
        "modules": ("torch", "torch.Tensor"),  # nn.init.sparse_ fills a dense tensor
    },
    "TorchScript internals": {
        "reason": "the TorchScript IR, compiler and runtime classes; retrograd has no "
                  "TorchScript (torch.jit is a compatibility layer)",
        "words": (),
        "names": ("Argument", "ArgumentSpec", "AliasDb", "Block", "CallStack", "Capsule",
                  "Code", "CompilationUnit", "CompleteArgumentSpec", "ConcreteModuleType",
                  "ConcreteModuleTypeBuilder", "DeepCopyMemoTable",
                  "DeserializationStorageContext", "ErrorReport", "ExecutionPlan",
                  "FileCheck", "FunctionSchema", "Future", "Gradient", "Graph",
                  "GraphExecutorState", "IODescriptor", "JITException", "LiteScriptModule",
                  "LockingLogger", "NoopLogger", "AggregationType", "SUM", "AVG", "Node",
                  "OperatorInfo",
                  "PyTorchFileReader", "PyTorchFileWriter", "SerializationStorageContext",
                  "StaticModule", "TracingState", "Use", "Value", "BenchmarkConfig",
                  "BenchmarkExecutionStats", "ThroughputBenchmark", "ModuleDict",
                  "ParameterDict", "BufferDict", "fork", "wait", "parse_ir", "parse_schema",
                  "parse_type_comment", "merge_type_from_type_comment", "import_ir_module",
                  "import_ir_module_from_buffer", "unify_type_list"),
        "patterns": (r"Script[A-Z].*", r"[A-Z]\w*Type", r"Type"),
        "modules": ("torch",),
    },
    "complex-only": {
        "reason": "complex dtypes and the functions that need them; retrograd's dtypes are "
                  "real",
        "words": (),
        "names": ("complex", "complex32", "complex64", "complex128", "cfloat", "cdouble",
                  "chalf", "view_as_complex", "view_as_complex_copy", "view_as_real",
                  "view_as_real_copy", "polar", "real", "imag", "angle"),
        "patterns": (),
    },
}


def excluded(module: str, name: str) -> str | None:
    """The family (a key of ``EXCLUSIONS``) that leaves ``name`` of ``module`` out of the
    counts, or None (Note [Coverage exclusions]).

    Example:
        >>> excluded("torch", "cudnn_convolution"), excluded("torch", "quantile")
        ('devices', None)
    """
    words = set(name.lower().split("_"))
    for family, spec in EXCLUSIONS.items():
        if module not in spec.get("modules", (module,)):
            continue
        if name in spec["names"] or words & set(spec["words"]) or any(
                re.fullmatch(p, name) for p in spec["patterns"]):
            return family
    return None


# Note [Names not provided]
# Every public name that is neither provided nor in an excluded family is listed on the
# page with the reason it is missing (issue 16: "every remaining missing name is listed
# with its reason"); a missing name without an entry here is shown as such.
NOT_PROVIDED_REASONS = {
    "DisableTorchFunction": "no __torch_function__ protocol in retrograd's ops",
    "DisableTorchFunctionSubclass": "no __torch_function__ protocol in retrograd's ops",
    "DispatchKey": "PyTorch's C++ dispatcher internals; retrograd dispatches in Python",
    "DispatchKeySet": "PyTorch's C++ dispatcher internals; retrograd dispatches in Python",
    "ExcludeDispatchKeyGuard": "PyTorch's C++ dispatcher internals",
    "Tag": "operator tags of PyTorch's C++ dispatcher",
    "Event": "device streams and events (CPU only, no asynchronous devices)",
    "Stream": "device streams and events (CPU only, no asynchronous devices)",
    "get_device_module": "accelerator modules (CPU only)",
    "SymBool": "symbolic shapes belong to torch.compile's tracer (sym_* work on numbers)",
    "SymFloat": "symbolic shapes belong to torch.compile's tracer (sym_* work on numbers)",
    "SymInt": "symbolic shapes belong to torch.compile's tracer (sym_* work on numbers)",
    "bit": "a 1-bit dtype PyTorch has no tensor kernels for",
    "empty_permuted": "not yet: needs physical layouts other than NumPy's strides",
    "hash_tensor": "returns a uint64 tensor, which retrograd does not have yet",
    "stft": "not yet: needs complex results (retrograd's dtypes are real)",
    "istft": "not yet: needs complex inputs (retrograd's dtypes are real)",
    "lobpcg": "not yet",
    "slice_inverse": "not yet (its view semantics under autograd)",
    "grad_dtype": "not yet: the engine would cast incoming gradients",
    "index": "in torch 2.13 part of functorch's first-class dimensions, not indexing",
    "record_stream": "device streams (CPU only)",
    "resize": "deprecated out-of-place form; resize_ is provided",
    "resize_as": "deprecated out-of-place form; resize_as_ is provided",
    "common_notes": "a dictionary of doc-string fragments PyTorch's linalg docs share",
}
for _n in ("CatTransform", "CumulativeDistributionTransform", "FisherSnedecor",
           "GeneralizedPareto", "InverseGamma", "Kumaraswamy", "LKJCholesky", "LogisticNormal",
           "ReshapeTransform", "StackTransform", "Wishart"):
    NOT_PROVIDED_REASONS[_n] = "not yet (beyond issue 15's list of distributions)"
for _n in ("CompilationUnit", "Error", "ScriptFunction", "ScriptModule", "enable_onednn_fusion",
           "export_opnames", "isinstance", "onednn_fusion_enabled", "set_fusion_strategy",
           "strict_fusion"):
    NOT_PROVIDED_REASONS[_n] = "TorchScript compiler internals (torch.jit is a compatibility layer)"

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coverage.md")


def _public(mod) -> list:
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in names:
        obj = getattr(mod, n, None)
        if n.startswith("_") or inspect.ismodule(obj):
            continue
        out.append(n)
    return sorted(set(out))


def _resolve(dotted: str):
    """A module, or a class inside one (``torch.Tensor``); None when it cannot be imported."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        parent, _, attr = dotted.rpartition(".")
        try:
            return getattr(importlib.import_module(parent), attr, None)
        except ImportError:
            return None


def generate() -> str | None:
    """The page's markdown, or None when PyTorch or retrograd cannot be imported."""
    try:
        import torch
    except ImportError:
        return None
    lines = ["# Coverage of PyTorch's public names", "",
             f"Generated from PyTorch {torch.__version__} and retrograd by "
             "`docs/gen_coverage.py`. A name counts as covered when retrograd's module has "
             "it; whether it behaves the same is what the test suite checks. See "
             "[PyTorch compatibility](compatibility.md) for the areas and the differences.",
             "", "The counts leave out five families of names that have no meaning for a "
             "NumPy autograd on the CPU, each listed under its module with the reason: "
             + "; ".join(f"**{k}** ({v['reason']})" for k, v in EXCLUSIONS.items()) + ".",
             "", "| PyTorch module | covered | of | share |", "|---|---|---|---|"]
    sections = []
    for tname, rname in MODULES:
        tmod = _resolve(tname)
        if tmod is None:
            continue
        rmod = _resolve(rname)
        names, left_out = [], {}
        for n in _public(tmod):
            family = excluded(tname, n)
            if family is None:
                names.append(n)
            else:
                left_out.setdefault(family, []).append(n)
        have = [n for n in names if rmod is not None and hasattr(rmod, n)]
        missing = [n for n in names if n not in have]
        pct = f"{100 * len(have) / len(names):.0f}%" if names else "-"
        lines.append(f"| `{tname}` | {len(have)} | {len(names)} | {pct} |")
        sections += ["", f"## `{tname}`", "",
                     "**Provided:** " + (", ".join(f"`{n}`" for n in have) or "none"), "",
                     "**Not provided:** " + (", ".join(
                         f"`{n}` ({NOT_PROVIDED_REASONS.get(n, 'no reason recorded')})"
                         for n in missing) or "none")]
        for family, ns in left_out.items():
            sections += ["", f"**Left out ({family}: {EXCLUSIONS[family]['reason']}):** "
                         + ", ".join(f"`{n}`" for n in ns)]
    return "\n".join(lines + sections) + "\n"


def write() -> bool:
    text = generate()
    if text is None:
        return False
    old = open(OUT).read() if os.path.exists(OUT) else None
    if text != old:
        with open(OUT, "w") as f:
            f.write(text)
    return True


def on_page_markdown(markdown: str, page, **kwargs) -> str:  # mkdocs hook
    """The coverage page as generated now when PyTorch is installed, else as committed.

    The build never writes into docs/ (``python docs/gen_coverage.py`` does that)."""
    if page.file.src_uri == "coverage.md":
        return generate() or markdown
    return markdown


if __name__ == "__main__":
    print("wrote" if write() else "PyTorch is not installed; left", OUT)
