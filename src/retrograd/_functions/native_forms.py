"""The ``torch`` forms of tensor ops that PyTorch keeps beside their usual spelling
(issue 16): ``prelu`` (with its method), ``adjoint``, ``detach``/``detach_copy``/``fill``
as functions, ``isreal``,
``unsafe_chunk``/``unsafe_split``/``unsafe_split_with_sizes``, the top-level ``vander``,
the JIT-era norms ``frobenius_norm``/``nuclear_norm``/``norm_except_dim``,
``nonzero_static`` and the deprecated argument order of ``lu_solve``.

Example:
    >>> import retrograd as torch
    >>> torch.vander(torch.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._core.hints import Number, Shape, ShapeLike
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import fw_op as _fw_op
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.op import record
from ..ops.public import FP32, LOWER_PRECISION_FP, public
from ..ops.records import prelu as TPR
from ..ops.records import table as T
from .conversion import detach_copy as _detach_copy
from .creation import ones
from .linalg_derived import lu_solve as _linalg_lu_solve
from .linalg_derived import matrix_norm
from .reductions import norm
from .shape import split_bounds

__all__ = ["prelu", "is_distributed", "adjoint", "detach", "detach_copy", "fill", "isreal",
           "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "vander", "frobenius_norm",
           "nuclear_norm", "norm_except_dim", "nonzero_static", "lu_solve"]


def _need_tensor(fn: str, x, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


@public(autocast=LOWER_PRECISION_FP)
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``max(0, x) + weight * min(0, x)`` (also ``Tensor.prelu`` and ``F.prelu``): one weight,
    or one per channel (dim 1); one ``PreluKernelBackward0`` node after viewing the weight
    to broadcast, as PyTorch (Note [PReLU record] in ops/records/prelu.py).

    Example:
        >>> import retrograd as torch
        >>> y = torch.nn.functional.prelu(torch.tensor([-2., 3.], requires_grad=True),
        ...                               torch.tensor([0.25]))
        >>> y
        tensor([-0.5000,  3.0000], grad_fn=<PreluKernelBackward0>)
    """
    input_ndim, weight_ndim, weight_num = input.dim(), weight.dim(), weight.numel()
    if weight_num != 1:
        channels = input.shape[1] if input_ndim > 1 else 1
        if channels != weight_num:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight_num} and channel size = "
                               f"{channels}.")
    if weight_ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight_ndim}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_LEGACY_NAMES[input.dtype.name]} and "
                           f"{_LEGACY_NAMES[weight.dtype.name]} (convert the weight first, "
                           "e.g. weight.to(input.dtype))")
    if not input.is_floating_point():
        raise NotImplementedError(f'"prelu_cpu" not implemented for '
                                  f"'{_LEGACY_NAMES[input.dtype.name]}' (prelu takes floating-"
                                  "point tensors: convert first, e.g. x.float())")
    if input_ndim != weight_ndim:
        shape = [1] * input_ndim
        if input_ndim > 1:
            shape[1] = weight_num
        weight = weight.reshape(shape)
    return apply(TPR.prelu_kernel, (input, weight))


@public(method=False)
def is_distributed(input: Tensor) -> bool:
    """False: a retrograd tensor lives in one process (``Tensor.is_distributed()`` too).

    Example:
        >>> import retrograd as torch
        >>> torch.is_distributed(torch.ones(2))
        False
    """
    _need_tensor("is_distributed", input)
    return False


@public
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, a view (retrograd's tensors are real,
    so the transpose: ``TransposeBackward0`` as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.adjoint(torch.tensor([[1, 2, 3]])).shape
        torch.Size([3, 1])
    """
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor. (use a tensor of at least "
                           "two dims, or .t() for a 1-D one)")
    return input.transpose(-2, -1)


@public(method=False)
def detach(input: Tensor) -> Tensor:
    """``input.detach()`` as a function: a new tensor sharing the data, out of the graph.

    Example:
        >>> import retrograd as torch
        >>> torch.detach(torch.ones(2, requires_grad=True)).requires_grad
        False
    """
    _need_tensor("detach", input)
    return input.detach()


@public(method=False)
def detach_copy(input: Tensor) -> Tensor:
    """``detach`` that copies the data (PyTorch's ``*_copy`` form of a view op).

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2); y = torch.detach_copy(x); y[0] = 5; x
        tensor([1., 1.])
    """
    _need_tensor("detach_copy", input)
    return _detach_copy(input)


@public(method=False)
def fill(input: Tensor, value: Tensor | Number) -> Tensor:
    """A new tensor of ``input``'s shape and dtype filled with ``value`` (a number or a 0-d
    tensor, whose gradient is the sum of the output's).

    Example:
        >>> import retrograd as torch
        >>> torch.fill(torch.zeros(2, dtype=torch.int64), 2.7)
        tensor([2, 2])
    """
    _need_tensor("fill", input)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions. (pass a number or a 0-d tensor)")
        return apply(T.fill_out_tensor, (input, value.to(input.dtype)))
    return apply(T.fill_out, (input, value))


@public
def isreal(input: Tensor) -> Tensor:
    """Elementwise "has no imaginary part": all True, retrograd's dtypes being real.

    Example:
        >>> import retrograd as torch
        >>> torch.isreal(torch.tensor([1.0, float("nan")]))
        tensor([True, True])
    """
    _need_tensor("isreal", input)
    return _make(np.ones(input.shape, dtype=np.bool_))


def _unsafe_pieces(input: Tensor, split_size_or_sections, dim: int, op) -> tuple:
    """split's pieces as tensors of their own: they share ``input``'s memory, but autograd
    sees no view (no version counter, base or view replay), as PyTorch's unsafe_split."""
    d = _wrap_dim(dim, input.ndim)
    sizes, bounds = split_bounds(input.shape[d], split_size_or_sections, d)
    outs = tuple(_make(input._data[(slice(None),) * d + (slice(lo, hi),)])
                 for lo, hi in bounds)
    p = ("sizes", d, tuple(sizes))
    if STATE.enabled and input.requires_grad:
        record(op, outs[0] if len(outs) == 1 else outs, (input,), p, nout=len(outs))
    if _FW.active:
        _fw_op(op, (input,), outs, p, 0)
    return outs


@public
@per_element_under_vmap
def unsafe_split(tensor: Tensor, split_size_or_sections: int, dim: int = 0) -> tuple:
    """``split`` whose pieces autograd does not track as views (so an in-place op on one
    is not checked against its siblings); ``UnsafeSplitBackward0``.

    Example:
        >>> import retrograd as torch
        >>> [p.tolist() for p in torch.unsafe_split(torch.arange(5), 2)]
        [[0, 1], [2, 3], [4]]
    """
    if not isinstance(split_size_or_sections, (int, np.integer)):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size_or_sections).__name__} (for a list of sizes use "
                        "unsafe_split_with_sizes)")
    return _unsafe_pieces(tensor, split_size_or_sections, dim, T.unsafe_split)


@public
@per_element_under_vmap
def unsafe_split_with_sizes(input: Tensor, split_sizes: Shape, dim: int = 0
                            ) -> tuple[Tensor, ...]:
    """``unsafe_split`` with a list of sizes; ``UnsafeSplitWithSizesBackward0``.

    Example:
        >>> import retrograd as torch
        >>> [p.shape[1] for p in torch.unsafe_split_with_sizes(torch.ones(2, 3), [1, 2], 1)]
        [1, 2]
    """
    return _unsafe_pieces(input, list(split_sizes), dim, T.unsafe_split_with_sizes)


@public
@per_element_under_vmap
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` through ``unsafe_split``.

    Example:
        >>> import retrograd as torch
        >>> len(torch.unsafe_chunk(torch.ones(6), 3))
        3
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks} (the "
                           "number of pieces; for pieces of a given size use split(size))")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    if n == 0:
        return _unsafe_pieces(input, [0] * chunks, dim, T.unsafe_split_with_sizes)
    return _unsafe_pieces(input, -(-n // chunks), dim, T.unsafe_split)


@public(method=False)
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed
    when ``increasing``); integer and bool inputs give int64. Not linalg.vander's order.

    Example:
        >>> import retrograd as torch
        >>> torch.vander(torch.tensor([2., 3.]), N=3, increasing=True)
        tensor([[1., 2., 4.],
                [1., 3., 9.]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor. (vander builds one row per "
                           "element: flatten first)")
    n = x.shape[0]
    N = n if N is None else int(N)
    if N < 0:
        raise RuntimeError("N must be non-negative. (N is the number of columns)")
    dt = x.dtype if x.dtype.is_floating_point else D.int64
    result = ones((n, N), dtype=dt)
    if N > 1:  # PyTorch: the columns after the first are a running product, then a flip
        result[:, 1:] = x.to(dt).unsqueeze(1).expand(n, N - 1).cumprod(1)
    return result if increasing else result.flip(1)


def _deprecated_jit_norm(name: str, replacement: str) -> None:
    warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It "
                  f"will be removed in a future PyTorch release. Please use `{replacement}` "
                  "instead", UserWarning, stacklevel=3)


@public(method=False)
def frobenius_norm(input: Tensor, dim: ShapeLike = (), keepdim: bool = False) -> Tensor:
    """The 2-norm over ``dim`` (at most two dims); deprecated in PyTorch, warns as it does.

    Example:
        >>> import retrograd as torch, warnings
        >>> warnings.simplefilter("ignore")
        >>> torch.frobenius_norm(torch.tensor([[3., 4.]]), (0, 1))
        tensor(5.)
    """
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead. (use linalg.vector_norm for more dims)")
    _deprecated_jit_norm("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    return norm(input, 2, list(dims) if dims else None, keepdim)


@public(method=False)
def nuclear_norm(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False) -> Tensor:
    """The sum of the singular values over the matrix dims ``dim`` (default the last two);
    ``nuclear_norm(input, keepdim)`` is the other overload. Deprecated in PyTorch.

    Example:
        >>> import retrograd as torch, warnings
        >>> warnings.simplefilter("ignore")
        >>> torch.nuclear_norm(torch.tensor([[3., 0.], [0., 4.]]))
        tensor(7.)
    """
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _deprecated_jit_norm("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


@public(method=False)
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of each slice along ``dim``, shaped to broadcast against ``v``
    (weight normalisation's denominator); ``dim=-1``: the norm of all of ``v``.

    Example:
        >>> import retrograd as torch
        >>> torch.norm_except_dim(torch.tensor([[3., 4.], [0., 1.]]), 2, 0)
        tensor([[5.],
                [1.]])
    """
    if dim == -1:
        return norm(v, pow)
    last = v.ndim - 1
    if dim == 0:
        shape = [v.shape[0]] + [1] * last
        return norm(v.contiguous().view(v.shape[0], -1), pow, 1).view(shape)
    if dim == last:
        shape = [1] * last + [v.shape[last]]
        return norm(v.contiguous().view(-1, v.shape[last]), pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@public
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero`` padded with ``fill_value`` (or cut) to exactly ``size`` rows.

    Example:
        >>> import retrograd as torch
        >>> torch.nonzero_static(torch.tensor([0, 3, 5]), size=3)
        tensor([[ 1],
                [ 2],
                [-1]])
    """
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer (the "
                           "number of rows of the result)")
    idx = np.argwhere(input._data)[:size]
    out = np.full((size, input.ndim), fill_value, dtype=np.int64)
    out[:len(idx)] = idx
    return _make(out)


@public(autocast=FP32)
def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """The deprecated argument order of ``linalg.lu_solve(LU, pivots, B)``; warns as
    PyTorch does.

    Example:
        >>> import retrograd as torch, warnings
        >>> warnings.simplefilter("ignore")
        >>> A = torch.tensor([[2., 0.], [0., 4.]])
        >>> LU, piv = torch.linalg.lu_factor(A)
        >>> torch.lu_solve(torch.tensor([[2.], [4.]]), LU, piv)
        tensor([[1.],
                [1.]])
    """
    warnings.warn(_LU_SOLVE_DEPRECATION, UserWarning, stacklevel=2)
    return _linalg_lu_solve(LU_data, LU_pivots, b)


_LU_SOLVE_DEPRECATION = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")
