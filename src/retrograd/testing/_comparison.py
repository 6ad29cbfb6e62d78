"""``torch.testing.assert_close``: PyTorch's comparison of tensors, numbers, and sequences
and mappings of them, with its default tolerances and its messages.

Example:
    >>> import retrograd as torch
    >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    >>> try:
    ...     torch.testing.assert_close(torch.tensor([1., 2., 3.]), torch.tensor([1., 2.5, 3.]))
    ... except AssertionError as e:
    ...     print(e)
    Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import cmath
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._core import dtype as D
from .._functions import creation
from .._functions.namespace import isclose
from .._tensor.tensor import Tensor

__all__ = ["assert_close"]

#: (rtol, atol) by dtype, PyTorch's (torch/testing/_comparison.py); other dtypes: (0, 0)
DTYPE_PRECISIONS = {D.float16: (0.001, 1e-5), D.bfloat16: (0.016, 1e-5),
                    D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7)}

# Note [assert_close as PyTorch compares]
# The inputs are walked as PyTorch walks them: two sequences (not strings) of equal
# length, or two mappings with the same keys, are compared item by item (depth first, in
# order; a failure names the item, "[0]['a']"); then None with None, booleans (Python's
# or NumPy's) with booleans, numbers with numbers (int, float, complex, NumPy scalars:
# int against float is a dtype mismatch), and a Tensor with a Tensor or a NumPy array
# with a NumPy array. Anything else is a TypeError. Tensors are checked for shape, then
# dtype (or promoted to a common one when check_dtype=False, with the looser of the two
# tolerances), then strides if asked; values with isclose. The first failure raises.


class _Mismatch(Exception):
    """One failed comparison: the exception type to raise and its message."""

    def __init__(self, kind: type, msg: str, item: tuple = ()) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.item = kind, msg, item


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Assert that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with default
    tolerances from the dtype (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7, 1e-7;
    float16: 1e-3, 1e-5; bfloat16: 1.6e-2, 1e-5; integers and bools: equal). ``msg``
    replaces the message (a str) or rewrites it (a callable).

    Example:
        >>> import retrograd as torch
        >>> torch.testing.assert_close({"w": torch.ones(2)}, {"w": torch.ones(2)})
        >>> try:
        ...     torch.testing.assert_close(1, 2)
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Scalars are not equal!
    """
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    opts = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
            "equal_nan": equal_nan, "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        _walk(actual, expected, opts)
    except _Mismatch as m:
        text = m.msg
        if callable(msg):
            text = msg(text)
        if m.item:
            text += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in m.item)
        if isinstance(msg, str):
            text = msg
        raise m.kind(text) from None


def _walk(actual: Any, expected: Any, opts: dict) -> None:
    """Compare the pair, descending into sequences and mappings without recursion."""
    stack = [((), actual, expected)]
    while stack:
        item, a, e = stack.pop()
        try:
            pairs = _children(a, e)
            if pairs is None:
                _compare_leaves(a, e, opts)
                continue
        except _Mismatch as m:
            m.item = item
            raise
        stack.extend((item + (k,), x, y) for k, x, y in reversed(pairs))


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def _children(actual: Any, expected: Any) -> list | None:
    """The (key, actual, expected) items of two sequences or mappings, or None for leaves."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, "The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}")
        return [(i, actual[i], expected[i]) for i in range(len(actual))]
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        ka, ke = set(actual.keys()), set(expected.keys())
        if ka != ke:
            missing, extra = sorted(ke - ka, key=repr), sorted(ka - ke, key=repr)
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {missing}\n"
                            f"Additional keys in the actual mapping: {extra}")
        return [(k, actual[k], expected[k]) for k in expected]
    return None


def _unsupported(actual: Any, expected: Any) -> _Mismatch:
    return _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                     f"{type(actual)} and {type(expected)}.")


_NUMBERS = (int, float, complex, np.number)
_BOOLS = (bool, np.bool_)


def _compare_leaves(actual: Any, expected: Any, opts: dict) -> None:
    if actual is None and expected is None:
        return
    if isinstance(actual, _BOOLS) and isinstance(expected, _BOOLS):
        if bool(actual) != bool(expected):
            raise _Mismatch(AssertionError,
                            f"Booleans mismatch: {bool(actual)} is not {bool(expected)}")
        return
    if (isinstance(actual, _NUMBERS) and isinstance(expected, _NUMBERS)
            and not isinstance(actual, _BOOLS) and not isinstance(expected, _BOOLS)):
        _compare_numbers(actual, expected, opts)
        return
    both_tensors = isinstance(actual, Tensor) and isinstance(expected, Tensor)
    both_arrays = isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray)
    if not (both_tensors or both_arrays) or (
            not opts["allow_subclasses"] and type(actual) is not type(expected)):
        raise _unsupported(actual, expected)
    if both_arrays:
        actual, expected = creation.as_tensor(actual), creation.as_tensor(expected)
    _compare_tensors(actual.detach(), expected.detach(), opts)


def _number_kind(x: Any) -> type:
    x = x.item() if isinstance(x, np.generic) else x
    return type(x)


def _compare_numbers(actual: Any, expected: Any, opts: dict) -> None:
    ta, te = _number_kind(actual), _number_kind(expected)
    if opts["check_dtype"] and ta is not te:
        raise _Mismatch(AssertionError, f"The (d)types do not match: {ta} != {te}.")
    a, e = complex(actual) if ta is complex else actual, expected
    a = a.item() if isinstance(a, np.generic) else a
    e = e.item() if isinstance(e, np.generic) else e
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:  # int: equal; float and complex: float64's (complex128's) tolerances
        rtol, atol = max((0.0, 0.0) if t is int else (1e-7, 1e-7) for t in (ta, te))
    if cmath.isnan(a) and cmath.isnan(e) and opts["equal_nan"]:
        return
    diff = abs(a - e)
    if a == e or (cmath.isfinite(diff) and diff <= atol + rtol * abs(e)):
        return
    rel = float("inf") if e == 0 else diff / abs(e)
    raise _Mismatch(AssertionError, _mismatch_msg("Scalars", f"Expected {e} but got {a}.",
                                                  diff, None, atol, rel, None, rtol))


def _compare_tensors(actual: Tensor, expected: Tensor, opts: dict) -> None:
    if actual.shape != expected.shape:
        raise _attribute_mismatch("shape", actual.shape, expected.shape)
    if opts["check_dtype"] and actual.dtype != expected.dtype:
        raise _attribute_mismatch("dtype", actual.dtype, expected.dtype)
    if opts["check_stride"] and actual.stride() != expected.stride():
        raise _attribute_mismatch("stride()", actual.stride(), expected.stride())
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:
        rtol, atol = max(DTYPE_PRECISIONS.get(t.dtype, (0.0, 0.0))
                         for t in (actual, expected))
    if actual.dtype != expected.dtype:
        common = D.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=opts["equal_nan"])
    if bool(matches.all()):
        return
    if actual.ndim == 0:
        a, e = actual.item(), expected.item()
        diff = abs(a - e)
        rel = float("inf") if e == 0 else diff / abs(e)
        raise _Mismatch(AssertionError, _mismatch_msg(
            "Scalars", f"Expected {e} but got {a}.", diff, None, atol, rel, None, rtol))
    raise _Mismatch(AssertionError, _tensor_mismatch_msg(actual, expected, matches, rtol, atol))


def _attribute_mismatch(name: str, actual: Any, expected: Any) -> _Mismatch:
    return _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: "
                     f"{actual} != {expected}.")


def _tensor_mismatch_msg(actual: Tensor, expected: Tensor, matches: Tensor, rtol: float,
                         atol: float) -> str:
    """PyTorch's statistics: the mismatch count, and the greatest absolute and relative
    differences among the mismatched elements (integers and bools compared as int64, their
    relative differences in the default float dtype), with their indices."""
    shape = tuple(matches.shape)
    n = matches.numel()
    bad = n - int(matches.sum().item())
    a, e, ok = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point:
        a, e = a.to(D.int64), e.to(D.int64)
    abs_diff = (a - e).abs().masked_fill(ok, 0)
    rel_diff = (abs_diff / e.abs()).masked_fill(ok, 0)
    max_abs, i_abs = abs_diff.max(0)
    max_rel, i_rel = rel_diff.max(0)
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    return _mismatch_msg("Tensor-likes", extra, max_abs.item(), _unravel(int(i_abs), shape),
                         atol, max_rel.item(), _unravel(int(i_rel), shape), rtol)


def _unravel(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _mismatch_msg(what: str, extra: str, abs_diff: float, abs_idx: tuple | None, atol: float,
                  rel_diff: float, rel_idx: tuple | None, rtol: float) -> str:
    equality = rtol == 0 and atol == 0
    lines = [f"{what} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)
