"""``F.grouped_mm`` (PyTorch's CPU path: per-group matrix products for mixture-of-experts
layers) and the float8 ``F.scaled_mm`` / ``F.scaled_grouped_mm``, which PyTorch's CPU
build cannot run for the inputs retrograd has.

Note [Grouped matmul]
Groups are given by ``offs`` (int32, cumulative ends) along the jagged dimension of the
2-D operand: 2-D x 3-D splits the rows of ``mat_a`` (group g uses ``mat_b[g]``), 3-D x
2-D the columns of ``mat_b`` (with ``mat_a[g]``), 2-D x 2-D the shared K dimension (one
``(M, N)`` result per group); 3-D x 3-D is a batched product without ``offs``. Each
group's product is accumulated in float32 and rounded once to the output dtype, as
PyTorch's CPU kernel does; rows/columns past ``offs[-1]`` (left unwritten by PyTorch)
are zeros here. The checks and their order are PyTorch's. Gradients come from the
composite (slices, float32 matmuls, casts), not one GroupedMmBackward0 node.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> a = torch.ones(4, 8, dtype=torch.bfloat16)
    >>> b = torch.stack([torch.eye(8), 2 * torch.eye(8)]).bfloat16()
    >>> F.grouped_mm(a, b, offs=torch.tensor([1, 4], dtype=torch.int32))[:, 0]
    tensor([1., 2., 2., 2.], dtype=torch.bfloat16)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._core import dtype as D
from ..._functions.shape import cat, stack
from ..._tensor.tensor import Tensor

__all__ = ["grouped_mm", "scaled_grouped_mm", "scaled_mm"]

_ALLOWED = (D.float32, D.bfloat16, D.float16)
_C10 = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16"}
_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}


def _check_strides(mat: Tensor) -> None:
    strides, sizes = mat.stride(), tuple(mat.shape)
    alignment = 16 // mat.element_size()
    if strides[-2] == 1 and strides[-1] >= max(1, sizes[-2]):
        lead = strides[-1]
    elif strides[-1] == 1 and strides[-2] >= max(1, sizes[-1]):
        lead = strides[-2]
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(strides)} for strides and "
                           f"{list(sizes)} for sizes")
    if lead % alignment:
        raise RuntimeError("strides should be multiple of 16 bytes (grouped_mm needs each row "
                           "or column to start on a 16-byte boundary: pad the inner "
                           f"dimension to a multiple of {alignment} elements)")


def _groups(offs: Tensor, total: int) -> list[tuple[int, int]]:
    out, start = [], 0
    for end in offs.tolist():
        end = min(int(end), total)
        out.append((start, max(start, end)))
        start = max(start, end)
    return out


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype: D.dtype | None = None) -> Tensor:
    """Per-group matrix products for jagged groups (Note [Grouped matmul]).

    Example:
        >>> import retrograd as torch
        >>> a = torch.ones(2, 4, 4); b = torch.ones(2, 4, 4)
        >>> torch.nn.functional.grouped_mm(a, b)[0, 0]
        tensor([4., 4., 4., 4.])
    """
    if mat_a.dim() not in (2, 3):
        raise RuntimeError("mat_a has to be 2 or 3d")
    if mat_b.dim() not in (2, 3):
        raise RuntimeError("mat_b has to be 2 or 3d")
    a_2d, b_2d = mat_a.dim() == 2, mat_b.dim() == 2
    if (offs is not None) != (a_2d or b_2d):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and (offs.dim() != 1 or str(offs.dtype) != "torch.int32"):
        raise RuntimeError("Offsets have to be int32")
    if mat_a.dtype not in _ALLOWED:
        raise RuntimeError("Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
                           f"{_LEGACY.get(mat_a.dtype.name, mat_a.dtype.name)}")
    if mat_b.dtype != mat_a.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_C10.get(mat_a.dtype.name)} != {_C10.get(mat_b.dtype.name)}")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if not a_2d and not b_2d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    if offs is not None:
        groups = mat_a.shape[0] if not a_2d else (mat_b.shape[0] if not b_2d else None)
        if groups is not None and offs.shape[0] != groups:
            raise RuntimeError("matrix batch sizes have to match")
    if out_dtype is not None and D.as_dtype(out_dtype) != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    _check_strides(mat_a)
    _check_strides(mat_b)
    dt = mat_a.dtype
    a, b = mat_a.float(), mat_b.float()
    if not a_2d and not b_2d:
        return a.matmul(b).to(dt)
    if a_2d and not b_2d:  # rows of mat_a split by offs
        total = a.shape[0]
        groups = _groups(offs, total)
        pieces = [a[s:e].matmul(b[g]) for g, (s, e) in enumerate(groups)]
        end = groups[-1][1] if groups else 0
        pieces.append(a.new_zeros((total - end, b.shape[-1])))
        return cat(pieces, 0).to(dt)
    if b_2d and not a_2d:  # columns of mat_b split by offs
        total = b.shape[1]
        groups = _groups(offs, total)
        pieces = [a[g].matmul(b[:, s:e]) for g, (s, e) in enumerate(groups)]
        end = groups[-1][1] if groups else 0
        pieces.append(a.new_zeros((a.shape[1], total - end)))
        return cat(pieces, 1).to(dt)
    groups = _groups(offs, a.shape[1])  # both 2-D: the shared K dimension split by offs
    if not groups:
        return a.new_zeros((0, a.shape[0], b.shape[1])).to(dt)
    return stack([a[:, s:e].matmul(b[s:e]) for s, e in groups]).to(dt)


def _dtype_word(t: Tensor) -> str:
    return _LEGACY.get(t.dtype.name, t.dtype.name)


def scaled_mm(mat_a: Tensor, mat_b: Tensor, scale_a: Tensor | list[Tensor],
              scale_recipe_a: object, scale_b: Tensor | list[Tensor], scale_recipe_b: object,
              swizzle_a: object = None, swizzle_b: object = None, bias: Tensor | None = None,
              output_dtype: D.dtype | None = D.bfloat16, contraction_dim: Sequence[int] = (),
              use_fast_accum: bool = False) -> Tensor:
    """A float8 matrix product with scales. PyTorch's CPU build accepts only float8
    operands; retrograd has no float8 dtypes, so every call raises PyTorch's
    ``Invalid scaling configuration`` error (the operands it gets are never float8).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.functional as F
        >>> one = torch.tensor(1.0)
        >>> F.scaled_mm(torch.ones(16, 16), torch.ones(16, 16), one, F.ScalingType.TensorWise,
        ...             one, F.ScalingType.TensorWise)
        Traceback (most recent call last):
        ValueError: Invalid scaling configuration...
    """
    def scale_desc(s) -> tuple[str, str, str]:
        if isinstance(s, Tensor):
            return _dtype_word(s), str(list(s.shape)), str(list(s.stride()))
        return "TensorList", "[]", "[]"
    sa, sb = scale_desc(scale_a), scale_desc(scale_b)
    rows, cols = mat_a.shape[0], mat_b.shape[-1]
    raise ValueError(
        "Invalid scaling configuration.\n- For TensorWise scaling, a and b should be float8, "
        "scales should be float and singletons.\n- For RowWise scaling, a and b should be "
        f"float8, scales should be float, scale_a should be ({rows}, 1) and scale_b should be "
        f"(1, {cols}), and both should be contiguous.\nGot mat_a.dtype()={_dtype_word(mat_a)}, "
        f"scale_a.dtype()={sa[0]}, scale_a.size()={sa[1]}, scale_a.stride()={sa[2]}, "
        f"mat_b.dtype()={_dtype_word(mat_b)}, scale_b.dtype()={sb[0]}, scale_b.size()={sb[1]} "
        f"and scale_b.stride()={sb[2]}\n(retrograd has no float8 dtypes, so the scaled "
        "float8 GEMM cannot run here: multiply the float tensors with torch.matmul and apply "
        "the scales yourself)")


def scaled_grouped_mm(mat_a: Tensor, mat_b: Tensor, scale_a: Tensor | list[Tensor],
                      scale_recipe_a: object, scale_b: Tensor | list[Tensor],
                      scale_recipe_b: object, swizzle_a: object = None, swizzle_b: object = None,
                      bias: Tensor | None = None, offs: Tensor | None = None,
                      output_dtype: D.dtype | None = D.bfloat16,
                      contraction_dim: Sequence[int] = (), use_fast_accum: bool = False) -> Tensor:
    """The grouped form of ``scaled_mm``; PyTorch has no CPU kernel for it and raises
    NotImplementedError, and so does retrograd.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.functional as F
        >>> one = torch.tensor(1.0)
        >>> F.scaled_grouped_mm(torch.ones(2, 2), torch.ones(2, 2), one,
        ...                     F.ScalingType.TensorWise, one, F.ScalingType.TensorWise)
        Traceback (most recent call last):
        NotImplementedError: Could not run 'aten::_scaled_grouped_mm_v2' with arguments from ...
    """
    raise NotImplementedError(
        "Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' backend. "
        "This could be because the operator doesn't exist for this backend (PyTorch runs "
        "scaled_grouped_mm only on CUDA, and retrograd has no accelerator or float8 dtypes: "
        "use F.grouped_mm on float tensors instead)")

