"""The add-product functions ``addmv``, ``addr``, ``addbmm``, ``baddbmm`` (one node each,
Note [Add-product records] in ops/records/construction.py), ``vdot`` and the deprecated
``chain_matmul``.

Example:
    >>> import retrograd as torch
    >>> torch.addmv(torch.ones(2), torch.eye(2), torch.tensor([1., 2.]), beta=2)
    tensor([3., 4.])
"""

from __future__ import annotations

import warnings

from .._core import dtype as D
from .._core.dtype import promote_types
from .._core.hints import Number
from .._tensor.tensor import _LEGACY_NAMES, Tensor, result_type
from ..ops.dispatch import apply
from ..ops.out_arg import write_out
from ..ops.public import public
from ..ops.records import table as T
from .linalg import multi_dot

__all__ = ["addmv", "addr", "addbmm", "baddbmm", "vdot", "chain_matmul"]


def _legacy(t: Tensor) -> str:
    return _LEGACY_NAMES[t.dtype.name]


def _same_dtype(name: str, *ts: Tensor) -> None:
    if len({t._data.dtype for t in ts}) > 1:
        got = ", ".join(_legacy(t) for t in ts[:-1]) + ", and " + _legacy(ts[-1])
        raise RuntimeError(f"{name} input tensors must have the same dtype, but got {got} "
                           f"(convert them to one dtype first, e.g. .to({ts[1].dtype}))")


def _broadcast_input(name: str, input: Tensor, shape: tuple, what: str) -> None:
    if not _expands(tuple(input.shape), shape):
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[0] if shape else 0}) must match the "
            f"existing size of {name}'s input {tuple(input.shape)}: it must broadcast to "
            f"{what} {shape}; pass an input of that shape")


def _expands(src: tuple, dst: tuple) -> bool:
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(src[::-1], dst[::-1]))


def _addprod(op, input: Tensor, b: Tensor, c: Tensor, beta, alpha, out) -> Tensor:
    res = apply(op, (input, b, c), (beta, alpha))
    return res if out is None else write_out(op.name, out, res, (input, b, c))


@public(inplace=True, inplace_function=True)
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1, alpha: Number = 1,
          out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``, one ``AddmvBackward0`` node.

    Example:
        >>> import retrograd as torch
        >>> torch.addmv(torch.zeros(2), torch.eye(2), torch.tensor([1., 2.]), alpha=3)
        tensor([3., 6.])
    """
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim} (addmv takes a vector, a matrix and a vector)")
    if mat.shape[1] != vec.shape[0] or not _expands(tuple(input.shape), (mat.shape[0],)):
        raise RuntimeError(
            f"size mismatch, got input ({', '.join(map(str, input.shape))}), mat "
            f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]}) (mat's columns must be "
            "vec's length, input's length mat's rows)")
    _same_dtype("addmv", input, mat, vec)
    return _addprod(T.addmv, input, mat, vec, beta, alpha, out)


@public(inplace=True)
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1, alpha: Number = 1,
         out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, one ``AddrBackward0`` node.

    Example:
        >>> import retrograd as torch
        >>> torch.addr(torch.zeros(2, 2), torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor([[3., 4.],
                [6., 8.]])
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D "
                               "(addr adds the outer product of two vectors)")
    shape = (vec1.shape[0], vec2.shape[0])
    _broadcast_input("addr", input, shape, "the outer product's shape")
    dt = promote_types(result_type(input, vec1), vec2.dtype)
    if not input.dtype == vec1.dtype == vec2.dtype == dt:  # addr promotes (unlike addmv)
        input, vec1, vec2 = input.to(dt), vec1.to(dt), vec2.to(dt)
    if not dt.is_floating_point and dt is not D.bool:  # (addmv & co truncate them instead)
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be "
                                   f"a floating point number. (pass an int {name}, or "
                                   "convert the tensors to a floating dtype)")
    return _addprod(T.addr, input, vec1, vec2, beta, alpha, out)


def _check_batches(name: str, b1: Tensor, b2: Tensor) -> None:
    for t in (b1, b2):
        if t.ndim < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(t.ndim, 1)}, {max(t.ndim, 1) - 1}], but got 2) ({name} "
                             "takes two batches of matrices, 3-D tensors)")
        if t.ndim != 3:
            raise RuntimeError(f"{'batch1' if t is b1 else 'batch2'} must be a 3D tensor "
                               f"({name} takes two batches of matrices)")
    want = [b1.shape[0], b1.shape[2]]
    if list(b2.shape[:2]) != want:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"{want} but got: {list(b2.shape[:2])}. (batch2 must hold as many "
                           "matrices as batch1, with as many rows as batch1's have columns)")


@public(inplace=True, autocast=T.baddbmm)
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
            alpha: Number = 1, out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` per batch, one ``BaddbmmBackward0``.

    Example:
        >>> import retrograd as torch
        >>> torch.baddbmm(torch.ones(1, 2, 2), torch.eye(2)[None], torch.eye(2)[None])
        tensor([[[2., 1.],
                 [1., 2.]]])
    """
    _check_batches("baddbmm", batch1, batch2)
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    _broadcast_input("baddbmm", input, shape, "the batched product's shape")
    _same_dtype("baddbmm", input, batch1, batch2)
    return _addprod(T.baddbmm, input, batch1, batch2, beta, alpha, out)


@public(inplace=True, autocast=T.addbmm)
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
           alpha: Number = 1, out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``, one ``AddbmmBackward0``.

    Example:
        >>> import retrograd as torch
        >>> torch.addbmm(torch.zeros(2, 2), torch.ones(3, 2, 1), torch.ones(3, 1, 2))
        tensor([[3., 3.],
                [3., 3.]])
    """
    _check_batches("addbmm", batch1, batch2)
    shape = (batch1.shape[1], batch2.shape[2])
    _broadcast_input("addbmm", input, shape, "the product's shape")
    _same_dtype("addbmm", input, batch1, batch2)
    return _addprod(T.addbmm, input, batch1, batch2, beta, alpha, out)


@public
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """Dot product of two 1-D tensors (the first conjugated; real tensors: ``dot``).

    Example:
        >>> import retrograd as torch
        >>> torch.vdot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors (vdot takes two vectors; flatten them first)")
    if input.shape[0] != other.shape[0]:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    if input.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_legacy(input)} and {_legacy(other)} (convert one, e.g. "
                           f"other.to({input.dtype}))")
    return apply(T.vdot, (input, other))


@public(method=False)
def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Product of the matrices in the cheapest order (deprecated: ``linalg.multi_dot``).

    Example:
        >>> import retrograd as torch, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.chain_matmul(torch.eye(2), torch.ones(2, 2))
        tensor([[1., 1.],
                [1., 1.]])
    """
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                  "or more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices (pass at least "
                           "one 2-D tensor)")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead. "
                               "(chain_matmul multiplies matrices)")
    res = matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))
    return res if out is None else write_out("chain_matmul", out, res, matrices)
