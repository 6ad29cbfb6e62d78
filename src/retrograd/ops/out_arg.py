"""The ``out=`` argument of functions: write a computed result into a given tensor.

Note [out= arguments]
PyTorch's ``torch.sin(x, out=y)`` writes the result into ``y`` and returns ``y``. We
compute the result as usual and copy it in, with PyTorch's rules: no autograd through
``out=`` (an input that requires grad in grad mode is an error), the result dtype must
be castable to ``out``'s (no float into an integer tensor, nothing but bool into a bool
one), and an ``out`` of another shape is resized (with PyTorch's deprecation warning
when it had elements). ``out`` keeps its identity; its version counter is bumped.

Example:
    >>> import retrograd as torch
    >>> y = torch.zeros(2)
    >>> torch.add(torch.ones(2), 1, out=y) is y, y
    (True, tensor([2., 2.]))
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .._core.grad_mode import STATE
from .._graph.node import _LEGACY
from .._tensor.tensor import Tensor, check_inference_write
from . import overlap as _overlap

__all__ = ["write_out"]


def write_out(name: str, out: Tensor, result: Tensor, inputs: Sequence[object] = ()) -> Tensor:
    """Copy ``result`` into ``out`` (Note [out= arguments]) and return ``out``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.out_arg import write_out
        >>> y = torch.zeros(2, dtype=torch.float64)
        >>> write_out("sin", y, torch.tensor([1.0, 2.0])).dtype
        torch.float64
    """
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
        check_inference_write(out)
    if STATE.enabled and (out._rg or any(isinstance(x, Tensor) and x._rg for x in inputs)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. Call it under "
            "torch.no_grad(), or drop out= and assign the result instead.")
    rk, ok = result._data.dtype.kind, out._data.dtype.kind
    rk_name = result._data.dtype.name
    if (rk == "f" and ok in "biu") or (ok == "b" and rk != "b"):
        raise RuntimeError(
            f"result type {_LEGACY[rk_name]} can't be cast to the desired output type "
            f"{_LEGACY[out._data.dtype.name]}")
    res = result._data
    if out._data.shape == res.shape:
        d = out._data
        ins = [x._data for x in inputs if isinstance(x, Tensor) and x is not out]
        if not d.flags.writeable or any(_overlap.may_alias(d, x) for x in ins):
            _write_overlapping(out, res, ins)
        else:
            np.copyto(d, res, casting="unsafe")
    else:
        _resize(out, res.shape)
        out._data = res.astype(out._data.dtype, copy=True)
    out._vc[0] += 1
    return out


def _resize(out: Tensor, shape: tuple) -> None:
    """Give ``out`` the result's ``shape`` (PyTorch's deprecation warning when it had
    elements); its values are then written by the caller."""
    if out._data.size != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._data.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can "
            "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
            "with t.resize_(0).", UserWarning, stacklevel=4)
    out._data = np.empty(shape, out._data.dtype)


def _write_overlapping(out: Tensor, res: np.ndarray, ins) -> None:
    """``out`` is expanded or overlaps itself or an input: PyTorch's checks, then the
    write through a writable alias, the last element written to a location (in
    TensorIterator's order) winning (Note [Memory overlap in in-place ops] in overlap.py).
    The result was computed before the write: an input overlapping ``out`` in another
    layout ("too hard" for PyTorch to refuse) is read as it was, not element by element."""
    d = out._data
    _overlap.check(d, ins)
    if _overlap.writable(d) is None:  # memory NumPy must not write: out gets its own
        d = out._data = _overlap.private_copy(d)
    val = np.broadcast_to(res, d.shape).astype(d.dtype)
    if _overlap.aliases_itself(d):
        _overlap.sequential(d, lambda: val, ())
    else:
        np.copyto(_overlap.writable(d), val, casting="unsafe")


def with_out(name: str, result, out, inputs=(), through_copy: bool = False):
    """``result`` (a tensor, or a named tuple of tensors), or written into ``out`` (a
    tensor, or as many tensors as ``result`` has) when one is given (Note [out=
    arguments]). ``through_copy``: PyTorch's composite out= forms (quantile, histogram)
    copy a result that requires grad into ``out`` with autograd (CopyBackwards) instead
    of refusing it.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.out_arg import with_out
        >>> v, i = torch.zeros(2), torch.zeros(2, dtype=torch.int64)
        >>> r = with_out("cummax", torch.cummax(torch.tensor([2., 1.]), 0), (v, i))
        >>> r.values is v, i
        (True, tensor([0, 0]))
    """
    if out is None:
        return result
    if isinstance(result, Tensor):
        return _write(name, out, result, inputs, through_copy)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors, not "
                        f"{type(out).__name__}")
    return type(result)(*(_write(name, o, r, inputs, through_copy)
                          for o, r in zip(out, result)))


def _write(name: str, out: Tensor, result: Tensor, inputs, through_copy: bool) -> Tensor:
    if through_copy and STATE.enabled and result.requires_grad:
        if out._data.shape != result._data.shape:
            _resize(out, result._data.shape)
        return out.copy_(result)
    return write_out(name, out, result, inputs)
